#pragma once
// hashing-ngram-256: the zero-dependency fallback embedder. Deterministic across processes
// and machines (BLAKE2b, never a seeded hash), lexical only (semantic() is false).
//
// The definition, which ../shared/fixtures/hashing-ngram-256.jsonl was made from:
//  (a) lowercase each code point by its Unicode simple lowercase mapping;
//  (b) split on Unicode whitespace, drop empty pieces, join with one space, and pad with
//      one space on each side;
//  (c) for n in {2, 3}, hash the UTF-8 bytes of every run of n consecutive code points with
//      BLAKE2b (4-byte digest, big-endian unsigned h) and add +1 to dimension h % 256 if
//      bit 31 of h is set, else -1;
//  (d) L2-normalise in float32 (an all-zero vector stays zero).

#include "embed/embedder.hpp"

namespace warden::embed {

class HashingEmbedder final : public Embedder {
 public:
  static constexpr std::string_view kId = "hashing-ngram-256";
  static constexpr std::size_t kDim = 256;

  [[nodiscard]] std::string_view id() const noexcept override { return kId; }
  [[nodiscard]] std::size_t dim() const noexcept override { return kDim; }
  [[nodiscard]] bool semantic() const noexcept override { return false; }
  // No limit: the hashing embedder reads any length, and truncate has no effect.
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return 0; }

  // Keeps prompt + text in PreparedInput::text. Having no tokenizer, it counts the Unicode
  // code points of that text as its tokens (what usage reports for this embedder), and the
  // prompt's code points as prompt_tokens; ids stay empty. Error(InvalidInput) for invalid
  // UTF-8 in the text or the prompt.
  [[nodiscard]] PreparedInput prepare(std::string_view text, const InputOptions& options) const override;
  // Unit vectors already (step (d), normalised in float32 as the definition says).
  void embed_prepared(std::span<const PreparedInput* const> inputs, std::span<float> out) const override;
  [[nodiscard]] bool unit_vectors() const noexcept override { return true; }
  [[nodiscard]] std::string_view pooling() const noexcept override { return "hashing"; }
  // prepare_ids, embed_tokens, tokenize and decode: Error(Unsupported) (no vocabulary).

  // Embeds one valid-UTF-8 text into out (kDim floats).
  static void embed_one(std::string_view text, std::span<float> out);
};

}  // namespace warden::embed
