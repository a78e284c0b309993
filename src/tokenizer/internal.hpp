#pragma once
// The tokenizer's internal data model and component interfaces. Not part of the public API.
//
// Text flows through the pipeline as a NormText: the current (normalized, pre-tokenized)
// bytes plus, for every byte, the [start, end) byte range of the original input it came
// from. That is HF's NormalizedString alignment model, and it is what lets every later
// stage report offsets into the original text however the bytes were rewritten.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.hpp"
#include "tokenizer/vocab.hpp"

namespace warden::tokenizer::detail {

struct Align {
  std::uint32_t start = 0;
  std::uint32_t end = 0;
};

struct NormText {
  std::string bytes;
  std::vector<Align> align;  // one per byte of `bytes`

  void clear() noexcept {
    bytes.clear();
    align.clear();
  }
  [[nodiscard]] std::size_t size() const noexcept { return bytes.size(); }
  // Appends one code point whose every byte maps to `a`.
  void push(char32_t cp, Align a);
  void push_ascii(char c, Align a) {
    bytes.push_back(c);
    align.push_back(a);
  }
  // Appends bytes [b, e) of another NormText with their alignments.
  void append_range(const NormText& from, std::size_t b, std::size_t e);
};

// A piece of the text after added-token splitting and pre-tokenization: a byte range of
// the current NormText, or an added token (id >= 0) with its original offsets.
struct Piece {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::int32_t added_id = -1;
  Align orig{};  // only for added tokens
};

// A model's output token: id and byte range [begin, end) in the current NormText.
struct Token {
  std::uint32_t id = 0;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

// Scratch buffers reused across calls on one thread (no per-token allocation).
struct Workspace {
  NormText text, scratch, scratch2, segment;
  std::vector<Piece> pieces, pieces_tmp;
  std::vector<Token> tokens;
  std::vector<char32_t> cps, cps2;
  std::vector<Align> cp_align, cp_align2;
  std::vector<std::uint32_t> u32a, u32b;
  std::vector<double> f64;
  std::string str;
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Rewrites `text` in place; may use `scratch` (both keep their capacity).
  virtual void normalize(NormText& text, Workspace& ws) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits (and may rewrite) the text pieces of ws.text/ws.pieces in place. Added-token
  // pieces pass through untouched.
  virtual void pre_tokenize(Workspace& ws) const = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  // Tokenizes ws.text.bytes[begin, end) (one pre-tokenized word), appending to out.
  virtual void tokenize(const NormText& text, std::uint32_t begin, std::uint32_t end, std::vector<Token>& out,
                        Workspace& ws) const = 0;
  [[nodiscard]] virtual std::optional<std::uint32_t> token_to_id(std::string_view token) const = 0;
  [[nodiscard]] virtual std::optional<std::string_view> id_to_token(std::uint32_t id) const = 0;
  [[nodiscard]] virtual std::size_t vocab_size() const = 0;
  // The model's own unknown token (WordPiece, WordLevel and BPE's unk_token), if it has one.
  [[nodiscard]] virtual std::optional<std::uint32_t> unk_id() const { return std::nullopt; }
  // The token's string as HF reports it (Unigram's unk is the covered text itself).
  [[nodiscard]] virtual std::string_view token_string(const Token& t, const NormText& /*text*/) const {
    return id_to_token(t.id).value_or(std::string_view{});
  }
};

// An encoding under construction: byte offsets, sequence ids; no masks yet.
struct Enc {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> type_ids;
  std::vector<Offset> offsets;        // bytes
  std::vector<Offset> char_offsets;   // code points (filled at the end of encode_one)
  std::vector<std::uint8_t> special;  // 1: added by the post-processor; 2: an added token matched in the text
  std::vector<std::int8_t> seq;
  std::vector<std::string> tokens;  // only with_tokens
  std::string_view text;            // the input this encoding came from
  bool with_tokens = false;

  [[nodiscard]] std::size_t size() const noexcept { return ids.size(); }
  void clear() noexcept {
    ids.clear();
    type_ids.clear();
    offsets.clear();
    char_offsets.clear();
    special.clear();
    seq.clear();
    tokens.clear();
  }
  void push(std::uint32_t id, std::uint32_t type_id, Offset off, bool is_special, std::int8_t s,
            std::string_view token) {
    ids.push_back(id);
    type_ids.push_back(type_id);
    offsets.push_back(off);
    char_offsets.push_back(Offset{});
    special.push_back(is_special ? 1 : 0);
    seq.push_back(s);
    if (with_tokens) tokens.emplace_back(token);
  }
  void append(const Enc& other);
  void truncate(std::size_t n, Direction dir);
  // Moves every offset on by `bytes` bytes and `chars` code points: the encoding of a
  // window that starts there, made an encoding of the whole text.
  void shift_offsets(std::uint32_t bytes, std::uint32_t chars);
};

struct Pipeline;

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  [[nodiscard]] virtual std::size_t added_tokens(bool is_pair) const = 0;
  // HF's process_encodings: rewrites the list of encodings (one per input; a template
  // merges them into one). The caller concatenates whatever is left.
  // (Pointers, so that the encodings' buffers stay in the caller's thread-local pool.)
  virtual void process(std::vector<Enc*>& encs, bool add_special, const Pipeline& p) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // HF's decode_chain: tokens in, tokens out (then concatenated by the caller).
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

struct AddedToken {
  std::uint32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

// Finds added tokens in a text (leftmost, then longest, like HF's Aho-Corasick matcher).
class AddedMatcher {
 public:
  void build(const std::vector<AddedToken>& tokens, bool normalized_set);
  [[nodiscard]] bool empty() const noexcept { return patterns_.empty(); }
  // Splits text[0, n) into pieces: appends Piece{begin,end,-1} for text and
  // Piece{begin,end,id} for matches (ranges in the given text).
  void split(std::string_view text, std::vector<Piece>& out) const;

 private:
  struct Pattern {
    std::string_view content;
    const AddedToken* token;
  };
  std::vector<Pattern> patterns_;  // sorted by first byte, then longest first
  std::uint32_t begin_[257] = {};  // patterns_ index range per first byte
};

struct Pipeline {
  std::vector<AddedToken> added;
  VocabMap added_vocab;  // added token content -> index into `added`
  AddedMatcher raw_matcher, norm_matcher;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Model> model;
  std::unique_ptr<PostProcessor> post_processor;
  std::unique_ptr<Decoder> decoder;
  std::optional<TruncationParams> truncation;
  std::optional<PaddingParams> padding;

  void finish_added_tokens();
  [[nodiscard]] const AddedToken* added_by_id(std::uint32_t id) const;
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::uint32_t id) const;
  [[nodiscard]] std::optional<std::uint32_t> token_to_id(std::string_view token) const;
  std::vector<std::uint32_t> added_ids_sorted;  // parallel to added_index_sorted
  std::vector<std::uint32_t> added_index_sorted;

  std::vector<AddedToken> added_normalized;  // normalized-content copies for norm_matcher
  static thread_local std::vector<Piece> t_raw, t_sub;

  // Runs added tokens, normalizer, pre-tokenizer and model over one text.
  void encode_one(std::string_view text, std::int8_t seq, Enc& out, Workspace& ws) const;
};

}  // namespace warden::tokenizer::detail
