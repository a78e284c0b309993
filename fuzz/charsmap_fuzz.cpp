// Fuzzes the Precompiled normalizer with hostile charsmaps: the input up to the first 0xFF
// byte becomes the (base64-encoded) charsmap, the rest the text to normalize.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

std::string base64(std::string_view in) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) | static_cast<unsigned char>(in[i + 2]);
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += a[v & 63];
  }
  if (i + 1 == in.size()) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const unsigned v =
        (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = all.find('\xFF');
  if (cut == std::string_view::npos) return 0;
  const std::string json =
      R"({"normalizer":{"type":"Precompiled","precompiled_charsmap":")" + base64(all.substr(0, cut)) +
      R"("},"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0],["a",-1.0],["▁",-2.0]]}})";
  try {
    const auto tok = warden::tokenizer::Tokenizer::from_json(json);
    (void)tok.encode(all.substr(cut + 1));
  } catch (const warden::Error&) {
  }
  return 0;
}
