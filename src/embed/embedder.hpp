#pragma once
// The Embedder interface: everything that turns texts into vectors (the hashing fallback,
// the neural encoders) implements it, so the CLI, the server and the guard never care
// which kind they hold.
//
// Work is split in two stages so that the server can batch across requests:
//   prepare()        text -> PreparedInput (tokenize, prompt, truncation); thread-safe,
//                    runs on tokenization workers, counts the tokens that usage reports;
//   embed_prepared() a batch of prepared inputs (from any number of requests) -> pooled
//                    vectors; called from one compute thread at a time.
// embed() chains the two for callers that do not batch (the CLI, tests).

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/embeddings.hpp"
#include "core/sparse_vector.hpp"

namespace warden::embed {

enum class TruncationSide { Right, Left };

// How one input becomes tokens: the request's options (TEI's truncate,
// truncation_direction, prompt_name resolved to its text).
struct InputOptions {
  bool truncate = true;  // false: an input longer than max_input_tokens() is an error
  TruncationSide side = TruncationSide::Right;
  std::string_view prompt;         // prepended to the text before tokenizing; "" for none
  bool add_special_tokens = true;  // /tokenize may turn them off; embedding always wants them
  // ColBERT encodes a query (its marker, [MASK] expansion) unlike a document (its marker,
  // punctuation dropped); the other embedders ignore it.
  bool query = false;
  // The task adapter the weights take (one of Embedder::tasks(): jina-embeddings-v3's LoRA);
  // empty: the base weights.
  std::string_view task;
};

// One input after prepare(): everything embed_prepared() needs, plus what usage counts.
struct PreparedInput {
  std::vector<std::uint32_t> ids;       // model input; empty for embedders without tokens
  std::vector<std::uint32_t> type_ids;  // empty: all zero
  std::string text;                     // kept only by embedders that work on text (hashing)
  std::size_t tokens = 0;               // what usage reports and batch limits count
  std::size_t prompt_tokens = 0;        // leading tokens that came from the prompt
  bool query = false;                   // InputOptions::query, for the outputs that differ
  std::size_t visible_tokens = 0;       // leading tokens attention lets every token see (0: all)
  std::int32_t adapter = -1;            // the index of InputOptions::task in tasks(); -1: none
  // (NeuralEmbedder counts the special tokens before the prompt too, e.g. [CLS]: exactly the
  // tokens that sentence-transformers leaves out of pooling when include_prompt is false.)
};

// One token as /tokenize reports it. start/stop are byte offsets into the input text
// (absent for special tokens).
struct TokenInfo {
  std::uint32_t id = 0;
  std::string text;
  bool special = false;
  std::optional<std::size_t> start;
  std::optional<std::size_t> stop;
};

// The retrieval outputs an embedder gives beside (or instead of) its pooled vector.
struct RetrievalOutputs {
  bool dense = true;    // the pooled vector
  bool sparse = false;  // lexical weights over the vocabulary (bge-m3's sparse head)
  bool multi = false;   // one unit vector per token (ColBERT: bge-m3's colbert head)
  friend bool operator==(const RetrievalOutputs&, const RetrievalOutputs&) = default;
};

// One input's retrieval outputs, every one the embedder has, from one forward pass.
struct RetrievalVectors {
  std::vector<float> dense;  // dim() floats, not normalised (as embed_prepared)
  SparseVector sparse;       // empty unless retrieval_outputs().sparse
  Embeddings multi;          // tokens x multi_vector_dim(), unit rows; empty unless .multi
};

class Embedder {
 public:
  virtual ~Embedder() = default;

  // Stable name that requests and responses use ("hashing-ngram-256", "use-lite", ...).
  [[nodiscard]] virtual std::string_view id() const noexcept = 0;
  // Length of every vector embed() returns.
  [[nodiscard]] virtual std::size_t dim() const noexcept = 0;
  // True when nearness of vectors reflects nearness of meaning. A lexical embedder says
  // false, and decisions that need meaning (the guard) abstain on it.
  [[nodiscard]] virtual bool semantic() const noexcept = 0;
  // Most tokens one input may have (after truncation); 0 when there is no limit.
  [[nodiscard]] virtual std::size_t max_input_tokens() const noexcept = 0;

  // Thread-safe. Throws Error(InvalidInput) for text that is not valid UTF-8 and, with
  // truncate = false, for text longer than max_input_tokens() (the message says how long).
  [[nodiscard]] virtual PreparedInput prepare(std::string_view text, const InputOptions& options) const = 0;
  // Token ids given by the client instead of text (TEI accepts them): checked against the
  // vocabulary (Error(InvalidInput)), truncated like text. Embedders without a vocabulary
  // throw Error(Unsupported).
  [[nodiscard]] virtual PreparedInput prepare_ids(std::span<const std::uint32_t> ids,
                                                  const InputOptions& options) const;

  // Pooled vectors of `inputs` into out (inputs.size() x dim(), row-major). Not
  // necessarily L2-normalised: normalise when the caller wants unit vectors (an embedder
  // whose graph ends in a normalisation, like use-lite, returns unit vectors anyway).
  // Inputs may come from different requests; a vector never depends on its batch-mates.
  virtual void embed_prepared(std::span<const PreparedInput* const> inputs, std::span<float> out) const = 0;
  // True when embed_prepared() returns unit vectors by definition (hashing, use-lite):
  // embed() then leaves them exactly as they are rather than normalising them again.
  [[nodiscard]] virtual bool unit_vectors() const noexcept { return false; }
  // How token vectors become one vector, in TEI's words for /info ("cls", "mean", ...).
  [[nodiscard]] virtual std::string_view pooling() const noexcept { return "mean"; }
  // The id the tokenizer gives text outside its vocabulary, if it has one: the guard
  // abstains on inputs made mostly of it rather than judge text the model cannot read.
  [[nodiscard]] virtual std::optional<std::uint32_t> unknown_token_id() const noexcept {
    return std::nullopt;
  }
  // The languages the model reads (ISO 639-1 codes), when it is known to read only those:
  // the guard abstains on text in another language rather than judge what the model cannot
  // read. Empty: unknown, or many (a multilingual model).
  [[nodiscard]] virtual std::vector<std::string> languages() const { return {}; }

  // The width of embed_tokens()'s rows: the encoder's hidden size, which a model's Dense modules
  // after the pooling make differ from dim().
  [[nodiscard]] virtual std::size_t token_dim() const noexcept { return dim(); }
  // Per-token output vectors, before pooling (TEI's /embed_all): one tokens x token_dim()
  // matrix per input. Error(Unsupported) for embedders that have none.
  [[nodiscard]] virtual std::vector<Embeddings> embed_tokens(
      std::span<const PreparedInput* const> inputs) const;

  // What embed_retrieval() gives: the pooled vector alone unless the model has retrieval heads.
  [[nodiscard]] virtual RetrievalOutputs retrieval_outputs() const noexcept { return {}; }
  // The width of each multi-vector row; 0 without that output.
  [[nodiscard]] virtual std::size_t multi_vector_dim() const noexcept { return 0; }
  // Every output retrieval_outputs() names, per input, from one pass over the batch. The
  // default gives the pooled vector alone (embed_prepared()).
  [[nodiscard]] virtual std::vector<RetrievalVectors> embed_retrieval(
      std::span<const PreparedInput* const> inputs) const;

  // The tokens of a text as /tokenize shows them; Error(Unsupported) without a tokenizer.
  [[nodiscard]] virtual std::vector<TokenInfo> tokenize(std::string_view text,
                                                        const InputOptions& options) const;
  // Ids back to text (/decode); Error(InvalidInput) for an id outside the vocabulary,
  // Error(Unsupported) without a tokenizer.
  [[nodiscard]] virtual std::string decode(std::span<const std::uint32_t> ids,
                                           bool skip_special_tokens) const;

  // Named prompts (sentence-transformers' config): prompt_name -> text prepended.
  [[nodiscard]] virtual const std::map<std::string, std::string>& prompts() const noexcept;
  // The prompt applied when a request names none, if the model sets one.
  [[nodiscard]] virtual std::optional<std::string> default_prompt_name() const { return std::nullopt; }
  // The task adapters the model has (jina-embeddings-v3's retrieval.query, ...), each also a
  // prompt name: a request naming that prompt gets the adapter too, as the model's own
  // encode(task=...) prepends the task's instruction and selects its adapter. Empty: none.
  [[nodiscard]] virtual std::span<const std::string> tasks() const noexcept { return {}; }

  // What embed() does to embed_prepared()'s rows: L2-normalises each dim()-wide row in
  // place, unless unit_vectors() (then they are left exactly as they are).
  void normalize_rows(std::span<float> rows) const;

  // prepare() with `options` (default: none), embed_prepared(), then L2 normalisation (unless
  // unit_vectors()): one unit vector per text, in order. Throws Error(InvalidInput) naming
  // the index of a bad text; nothing is returned for the batch in that case.
  [[nodiscard]] Embeddings embed(std::span<const std::string_view> texts,
                                 const InputOptions& options = {}) const;
};

}  // namespace warden::embed
