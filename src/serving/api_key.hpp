#pragma once
// The API key check every transport shares (HTTP's Authorization header, gRPC's
// `authorization` metadata): "Bearer <key>", the scheme in any case (RFC 9110), the key
// compared in time that depends only on the lengths, so that a client cannot find it byte
// by byte from response times.

#include <string_view>

namespace warden::serving {

[[nodiscard]] bool bearer_authorized(std::string_view authorization, std::string_view key) noexcept;

}  // namespace warden::serving
