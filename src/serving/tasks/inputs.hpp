#pragma once
// What every task does with its inputs before the model sees them, whatever the transport:
// the server's limits, the request's tokenization options, each input prepared (tokenized)
// with errors naming the field and index at fault, and its result cache key.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classify/sequence_classifier.hpp"
#include "embed/embedder.hpp"

namespace warden::serving::tasks {

// One input: a text, or token ids the client tokenized itself (TEI and OpenAI accept both).
struct Input {
  std::string text;
  std::vector<std::uint32_t> ids;
  bool is_ids = false;
};

// What a server allows every request (its command line).
struct Limits {
  std::size_t max_batch = 1024;  // inputs in one request; more is Invalid (TEI's wording)
  // Vector values one answer may carry; more is TooLarge, refused before computing where the
  // size is known (8 Mi floats: 32 MiB of floats, about 100 MB of JSON at most).
  std::size_t max_response_floats = std::size_t{8} << 20;
  bool auto_truncate = true;  // a request's default for `truncate`
};

// A request's tokenization options as it states them.
struct Tokenization {
  std::optional<bool> truncate;  // absent: Limits::auto_truncate
  embed::TruncationSide side = embed::TruncationSide::Right;
  std::optional<std::string> prompt_name;  // absent: the model's default prompt, if any
  // The request's field that named the prompt, for errors ("task" on the routes that take
  // jina's word for it).
  std::string prompt_field = "prompt_name";
};

// Where a task's inputs sit in its request, for errors: `field` (OpenAI's param), and
// whether it is a list (errors name "field[i]") or one text (gRPC's `inputs`: "field").
struct Field {
  std::string name = "inputs";
  bool listed = true;
  [[nodiscard]] std::string at(std::size_t index) const;  // "`inputs[2]`" or "`inputs`", unquoted
};

// Invalid past Limits::max_batch.
void check_batch(std::size_t n, const Limits& limits, std::string_view field);
// TooLarge when an answer of `floats` vector values would pass Limits::max_response_floats.
void check_response_floats(std::size_t floats, const Limits& limits, std::string_view field);
// TEI's rule: an empty text is refused (Empty): there is nothing to embed.
void refuse_empty(const std::vector<Input>& inputs, const Field& field);
void refuse_empty(const std::vector<std::string>& texts, const Field& field);

// The options an embedder tokenizes with: the request's, the server's default truncation,
// the prompt by name (Invalid, naming prompt_name, when the model has none so named).
[[nodiscard]] embed::InputOptions embed_options(const embed::Embedder& e, const Tokenization& t,
                                                const Limits& limits);
// The same for a classifier (no prompts).
[[nodiscard]] embed::InputOptions classify_options(const Tokenization& t, const Limits& limits);

// Prepares input `index`: its text, or its ids (no prompt applies to ids the client
// tokenized, not even the model's default). Invalid naming the input, or ModelCannot.
[[nodiscard]] embed::PreparedInput prepare_input(const embed::Embedder& e, const Input& in,
                                                 const embed::InputOptions& options, const Field& field,
                                                 std::size_t index);
[[nodiscard]] embed::PreparedInput prepare_text(const embed::Embedder& e, std::string_view text,
                                                const embed::InputOptions& options, const Field& field,
                                                std::size_t index);

// Prepares a classifier's text and its optional pair, naming input `index` when it is invalid.
[[nodiscard]] embed::PreparedInput prepare_pair(const classify::SequenceClassifier& c, std::string_view text,
                                                std::optional<std::string_view> pair,
                                                const embed::InputOptions& options, const Field& field,
                                                std::size_t index);

// The input's result cache key under a prefix (Pipeline::cache_prefix): its text or its ids.
[[nodiscard]] std::string input_key(const std::string& prefix, const Input& in);

// The code points of the inputs' texts (TEI's x-compute-characters).
[[nodiscard]] std::size_t characters(const std::vector<Input>& inputs);

}  // namespace warden::serving::tasks
