#include "embed/hashing_embedder.hpp"

#include <blake2.h>
#include <utf8proc.h>

#include <array>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace warden::embed {

namespace {

// The whitespace set of the definition (Python's str.split() set, which is not
// Unicode's White_Space property: it includes U+001C..U+001F and excludes U+180E).
bool is_split_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

// Lowercases, collapses whitespace runs to one space and pads: the code points of step (b).
std::u32string normalise(std::string_view text) {
  std::u32string out;
  out.reserve(text.size() + 2);
  out.push_back(U' ');
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t cp = utf8::next(text, pos);
    if (is_split_space(cp)) {
      if (out.back() != U' ') out.push_back(U' ');
    } else {
      out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    }
  }
  if (out.back() != U' ') out.push_back(U' ');
  if (out.size() == 1) out.push_back(U' ');  // empty text pads to two spaces
  return out;
}

std::uint32_t blake2b_32(std::string_view bytes) {
  std::array<std::uint8_t, 4> digest{};
  if (blake2b(digest.data(), bytes.data(), nullptr, digest.size(), bytes.size(), 0) != 0) {
    throw Error(ErrorKind::Internal, "BLAKE2b failed");
  }
  return (static_cast<std::uint32_t>(digest[0]) << 24) | (static_cast<std::uint32_t>(digest[1]) << 16) |
         (static_cast<std::uint32_t>(digest[2]) << 8) | static_cast<std::uint32_t>(digest[3]);
}

// Of valid UTF-8: the bytes that do not continue a sequence.
std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  return n;
}

}  // namespace

void HashingEmbedder::embed_one(std::string_view text, std::span<float> out) {
  const std::u32string cps = normalise(text);
  std::array<std::int32_t, kDim> counts{};
  std::string gram;
  for (std::size_t n = 2; n <= 3; ++n) {
    for (std::size_t start = 0; start + n <= cps.size(); ++start) {
      gram.clear();
      for (std::size_t k = 0; k < n; ++k) utf8::append(gram, cps[start + k]);
      const std::uint32_t h = blake2b_32(gram);
      counts[h % kDim] += (h & 0x80000000U) != 0 ? 1 : -1;
    }
  }
  // Squares of integer counts sum exactly in float32 for any realistic text; the norm and
  // the division are float32 like the reference.
  float sum_sq = 0.0F;
  for (const auto c : counts) sum_sq += static_cast<float>(c) * static_cast<float>(c);
  const float norm = std::sqrt(sum_sq);
  for (std::size_t i = 0; i < kDim; ++i) {
    out[i] = norm > 0.0F ? static_cast<float>(counts[i]) / norm : 0.0F;
  }
}

PreparedInput HashingEmbedder::prepare(std::string_view text, const InputOptions& options) const {
  utf8::require_valid(options.prompt, "prompt");
  utf8::require_valid(text);
  PreparedInput p;
  p.text.reserve(options.prompt.size() + text.size());
  p.text.append(options.prompt).append(text);
  p.tokens = code_points(p.text);
  p.prompt_tokens = code_points(options.prompt);
  return p;
}

void HashingEmbedder::embed_prepared(std::span<const PreparedInput* const> inputs,
                                     std::span<float> out) const {
  if (out.size() != inputs.size() * kDim) {
    throw Error(ErrorKind::Internal, fmt::format("embed_prepared: {} floats for {} inputs of {}", out.size(),
                                                 inputs.size(), kDim));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) embed_one(inputs[i]->text, out.subspan(i * kDim, kDim));
}

}  // namespace warden::embed
