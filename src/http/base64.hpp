#pragma once
// Base64 of float32 vectors, as OpenAI's encoding_format=base64 sends them: the raw
// little-endian bytes of the floats, standard alphabet, padded.

#include <span>
#include <string>

namespace warden::http {

std::string base64_floats(std::span<const float> values);

}  // namespace warden::http
