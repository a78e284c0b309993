#pragma once
// The tokenizer of Universal Sentence Encoder Lite, exactly as the reference
// (@tensorflow-models/universal-sentence-encoder 1.3.3) implements it, quirks included
// (../shared/fixtures/use-lite-tokenizer.md). It is a Viterbi search over SentencePiece
// pieces but *not* SentencePiece nor an HF Unigram model: NFKC only, every U+0020 becomes
// "▁" (no collapsing), a best score of exactly 0 counts as "unset", ties go to the shorter
// piece, and runs of unknown symbols merge into one unknown id. Not part of the
// tokenizer.json pipeline, so it lives apart from it.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.hpp"

namespace warden::tokenizer {

class UseLiteTokenizer {
 public:
  static constexpr std::uint32_t kUnknownId = 0;
  // Ids 0..5 ("�", <s>, </s>, extra_token_id_1..3) are never searched for.
  static constexpr std::uint32_t kFirstSearchableId = 6;

  // vocab.json: a JSON array of [piece, score] pairs, the id being the index; a null score
  // counts as 0, a piece listed twice maps to its last id (as the reference's trie insert
  // does). Throws Error(CorruptFile) naming `source` on anything else.
  static UseLiteTokenizer from_json(std::string_view json, std::string_view source);
  static UseLiteTokenizer from_file(const std::filesystem::path& path);

  // Token ids of a valid-UTF-8 text (Error(InvalidInput) otherwise); no BOS/EOS. The model
  // uses only the first 128 of them, but all are returned.
  [[nodiscard]] std::vector<std::uint32_t> encode(std::string_view text) const;

  // The ids of encode() that a model reading only `keep` of them keeps — its first (Right)
  // or last (Left) `keep` — and maybe more; for a long text, read in a window
  // (tokenizer/text_window.hpp) instead of whole. `windowed` (when given) says whether the
  // text was cut at its start (Left), so that what precedes the window is not counted.
  [[nodiscard]] std::vector<std::uint32_t> encode_kept(std::string_view text, std::size_t keep,
                                                       Direction side, bool* windowed = nullptr) const;

  // One token of encode() with the bytes of the text it covers, [begin, end). The leading
  // "▁" that the tokenizer adds covers no byte: a piece made of it alone gets {0, 0}.
  struct Token {
    std::uint32_t id = 0;
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
  };
  // encode() with offsets: the same ids, in the same order.
  [[nodiscard]] std::vector<Token> encode_with_offsets(std::string_view text) const;

  [[nodiscard]] std::size_t vocab_size() const noexcept { return pieces_.size(); }
  [[nodiscard]] const std::string& piece(std::uint32_t id) const { return pieces_.at(id); }

 private:
  struct Node {
    std::int32_t id = -1;  // the piece ending here, or -1
    double score = 0.0;
  };
  // The ids and, when `tokens` is given, the tokens with offsets.
  std::vector<std::uint32_t> encode_impl(std::string_view text, std::vector<Token>* tokens) const;
  std::uint32_t child(std::uint32_t node, char32_t cp) const noexcept;  // 0: none
  void insert(std::u32string_view piece, std::uint32_t id, double score);

  std::vector<std::string> pieces_;                         // UTF-8, by id
  std::vector<std::uint32_t> piece_len_;                    // in code points, by id
  std::vector<Node> nodes_{Node{}};                         // trie; node 0 is the root
  std::unordered_map<std::uint64_t, std::uint32_t> edges_;  // (node << 21 | cp) -> child
};

}  // namespace warden::tokenizer
