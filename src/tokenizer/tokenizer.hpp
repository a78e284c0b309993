#pragma once
// A HuggingFace `tokenizers`-compatible tokenizer: loads tokenizer.json (or a legacy BERT
// vocab.txt + tokenizer_config.json) and gives the same ids, type ids and offsets as the
// Rust original. The pipeline is the same as HF's: added tokens are matched first, then
// normalizer -> pre-tokenizer -> model (WordPiece, Unigram, BPE) -> truncation ->
// post-processor (special tokens, type ids) -> padding.
//
// A Tokenizer is immutable after loading, so one instance may be shared by any number of
// threads; per-call scratch buffers live in a thread-local workspace, which is why the
// steady state allocates per call (the returned vectors) but not per token.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace warden::tokenizer {

namespace detail {
struct Pipeline;
}

// [begin, end) into a text; special tokens get {0, 0}.
struct Offset {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  friend bool operator==(const Offset&, const Offset&) = default;
};

// One encoded text (or text pair). All vectors have size() elements.
struct Encoding {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> type_ids;
  std::vector<std::uint8_t> attention_mask;       // 0 for padding
  std::vector<std::uint8_t> special_tokens_mask;  // 1 for added special tokens and padding
  // Which input a token came from: 0 (text a), 1 (text b), -1 (special token or padding).
  std::vector<std::int8_t> sequence_ids;
  // Offsets into the token's own input text (a or b): bytes and Unicode code points.
  std::vector<Offset> offsets;
  std::vector<Offset> char_offsets;
  // Token strings; filled only when EncodeOptions::with_tokens is set.
  std::vector<std::string> tokens;

  [[nodiscard]] std::size_t size() const noexcept { return ids.size(); }
};

enum class TruncationStrategy { LongestFirst, OnlyFirst, OnlySecond };
enum class Direction { Right, Left };

struct TruncationParams {
  std::size_t max_length = 512;
  TruncationStrategy strategy = TruncationStrategy::LongestFirst;
  Direction direction = Direction::Right;
  // HF fails an only_first/only_second truncation when that text alone cannot absorb the
  // excess. Cross-encoders want a result instead, so by default we fall back to
  // longest_first there (set false for HF's error).
  bool fallback_to_longest_first = true;
};

struct PaddingParams {
  std::optional<std::size_t> fixed_length;  // nullopt: pad a batch to its longest member
  std::size_t pad_to_multiple_of = 0;       // 0: off
  Direction direction = Direction::Right;
  std::uint32_t pad_id = 0;
  std::uint32_t pad_type_id = 0;
  std::string pad_token = "[PAD]";
};

struct EncodeOptions {
  bool add_special_tokens = true;
  bool with_tokens = false;  // also fill Encoding::tokens
};

class Tokenizer {
 public:
  // Loads a tokenizer.json. Throws Error(NotFound/Io) for the file, Error(CorruptFile) for
  // malformed JSON, Error(Unsupported) naming any component type we do not implement.
  static Tokenizer from_file(const std::filesystem::path& path);
  static Tokenizer from_json(std::string_view json);
  // A legacy BERT checkpoint: vocab.txt plus (optional, may be empty path) a
  // tokenizer_config.json for do_lower_case / strip_accents / tokenize_chinese_chars.
  static Tokenizer from_bert_vocab(const std::filesystem::path& vocab_txt,
                                   const std::filesystem::path& tokenizer_config = {});
  // Loads <dir>/tokenizer.json when present, else <dir>/vocab.txt (+ tokenizer_config.json);
  // Error(NotFound) with missing_tokenizer_message(dir) when neither is there.
  static Tokenizer from_directory(const std::filesystem::path& dir);
  // Why a folder has no tokenizer Warden reads: names a SentencePiece model (spm.model,
  // sentencepiece.bpe.model, tokenizer.model: the DeBERTa-v3 and XLM-R repos that ship only
  // that) and how to turn it into the tokenizer.json Warden reads.
  static std::string missing_tokenizer_message(const std::filesystem::path& dir);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Throws Error(InvalidInput) for invalid UTF-8 (naming the byte offset).
  [[nodiscard]] Encoding encode(std::string_view text, EncodeOptions options = {}) const;
  // With `truncation` (nullopt: none) instead of the tokenizer's own, so that one shared,
  // immutable instance serves callers that truncate differently.
  [[nodiscard]] Encoding encode(std::string_view text, EncodeOptions options,
                                const std::optional<TruncationParams>& truncation) const;
  [[nodiscard]] Encoding encode_pair(std::string_view a, std::string_view b,
                                     EncodeOptions options = {}) const;
  // A pair with `truncation` (nullopt: none) instead of the tokenizer's own: cross-encoders
  // pick the direction per request.
  [[nodiscard]] Encoding encode_pair(std::string_view a, std::string_view b, EncodeOptions options,
                                     const std::optional<TruncationParams>& truncation) const;
  // Encodes each text, then pads the batch when padding is set.
  [[nodiscard]] std::vector<Encoding> encode_batch(std::span<const std::string_view> texts,
                                                   EncodeOptions options = {}) const;
  [[nodiscard]] std::vector<Encoding> encode_pair_batch(
      std::span<const std::pair<std::string_view, std::string_view>> pairs, EncodeOptions options = {}) const;

  // Ids back to text through the configured decoder. Throws Error(InvalidInput) for an id
  // outside the vocabulary (HF drops those silently; we would rather say so).
  [[nodiscard]] std::string decode(std::span<const std::uint32_t> ids, bool skip_special_tokens = true) const;

  [[nodiscard]] std::optional<std::uint32_t> token_to_id(std::string_view token) const;
  [[nodiscard]] std::optional<std::string> id_to_token(std::uint32_t id) const;
  // Model vocabulary plus added tokens (HF's get_vocab_size(with_added_tokens = true)).
  [[nodiscard]] std::size_t vocab_size() const;
  // Every token string, ordered by id, as HF's get_vocab() sorted by id: the model's
  // vocabulary and the added tokens it does not hold.
  [[nodiscard]] std::vector<std::string> vocabulary() const;
  // The model's unk_token (HF's tokenizer.model.unk_token: WordPiece, WordLevel, BPE), if set.
  [[nodiscard]] std::optional<std::uint32_t> model_unk_id() const;

  // Truncation and padding as loaded from the file. Setting them is not synchronised with
  // encoding: configure a tokenizer before sharing it between threads.
  [[nodiscard]] const std::optional<TruncationParams>& truncation() const noexcept;
  void set_truncation(std::optional<TruncationParams> params);
  [[nodiscard]] const std::optional<PaddingParams>& padding() const noexcept;
  void set_padding(std::optional<PaddingParams> params);

  // Pads encodings in place to a common length (as encode_batch does).
  void pad(std::span<Encoding> batch) const;

 private:
  explicit Tokenizer(std::unique_ptr<detail::Pipeline> pipeline);
  std::unique_ptr<detail::Pipeline> p_;
};

}  // namespace warden::tokenizer
