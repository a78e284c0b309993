#include "embed/neural_embedder.hpp"

#include <algorithm>
#include <future>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "embed/text_input.hpp"
#include "embed/token_rows.hpp"
#include "model/pooling.hpp"
#include "tokenizer/special_tokens_map.hpp"

namespace warden {

namespace {

// The tokenizer is parsed on its own thread while the weights are packed: both take
// milliseconds, and start-up is the sum of them otherwise.
std::future<std::unique_ptr<Tokenizer>> load_tokenizer_async(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {  // let the model loader report the folder
    return std::async(std::launch::deferred, [] { return std::unique_ptr<Tokenizer>(); });
  }
  return std::async(std::launch::async,
                    [dir] { return std::make_unique<Tokenizer>(Tokenizer::from_directory(dir)); });
}

// The ids FlagEmbedding leaves out of a sparse vector: the tokenizer's cls, eos, pad and unk
// tokens (its special_tokens_map). A folder without the files that name them falls back to
// the spellings BERT's and XLM-R's vocabularies use.
std::vector<std::uint32_t> sparse_skip_ids(const std::filesystem::path& dir, const Tokenizer& tokenizer) {
  const SpecialTokensMap map = read_special_tokens_map(dir);
  std::vector<std::string> names;
  for (const auto* t : {&map.cls, &map.eos, &map.pad, &map.unk}) {
    if (*t) names.push_back(**t);
  }
  if (names.empty()) names = {"[CLS]", "[PAD]", "[UNK]", "<s>", "</s>", "<pad>", "<unk>"};
  std::vector<std::uint32_t> ids;
  for (const auto& name : names) {
    if (auto id = tokenizer.token_to_id(name)) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// HF's convert_tokens_to_ids, which PyLate uses for its markers and skiplist: a token outside the
// vocabulary is the unknown token.
std::optional<std::uint32_t> token_or_unknown(const Tokenizer& tokenizer, std::string_view token,
                                              std::optional<std::uint32_t> unknown) {
  if (auto id = tokenizer.token_to_id(token)) return id;
  return unknown;
}

}  // namespace

NeuralEmbedder::NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool, Precision precision,
                               std::string_view pooling)
    : NeuralEmbedder(dir, pool, precision, pooling, load_tokenizer_async(dir)) {}

NeuralEmbedder::NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool, Precision precision,
                               std::string_view pooling, std::future<std::unique_ptr<Tokenizer>> tokenizer)
    : id_(std::filesystem::absolute(dir).lexically_normal().filename().string()),
      model_(model::load_encoder_model(dir, pool, active_isa(), precision)),
      tokenizer_(tokenizer.get()),
      pool_(pool) {
  if (id_.empty()) id_ = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  if (!pooling.empty()) model::override_pooling(*model_, pooling, active_isa(), precision);
  // Never let the tokenizer emit more tokens than the model takes.
  const auto& own = tokenizer_->truncation();
  truncation_ = own.value_or(TruncationParams{});
  truncation_.max_length = model_->max_input_tokens(own ? std::optional(own->max_length) : std::nullopt);
  max_input_tokens_ = truncation_.max_length;
  tokenizer_->set_truncation(truncation_);
  // Batches are packed: padding tokens from the file's padding setting would be pooled.
  tokenizer_->set_padding(std::nullopt);
  if (model_->lexical) sparse_skip_ids_ = sparse_skip_ids(dir, *tokenizer_);
  if (model_->colbert) {
    const ColbertConfig& config = *model_->colbert;
    const SpecialTokensMap map = read_special_tokens_map(dir);
    const std::optional<std::uint32_t> unknown = unknown_token_id();
    ColbertTokens t;
    auto marker = [&](const std::string& token, std::string_view role) -> std::optional<std::uint32_t> {
      if (token.empty()) return std::nullopt;
      if (auto id = token_or_unknown(*tokenizer_, token, unknown)) return id;
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: the {} marker \"{}\" is not in the tokenizer's vocabulary", dir.string(),
                              role, token));
    };
    t.query_marker = marker(config.query_prefix, "query");
    t.document_marker = marker(config.document_prefix, "document");
    // PyLate pads queries with the mask token, else the eos token, else the pad token.
    std::optional<std::uint32_t> expansion;
    for (const auto* name : {&map.mask, &map.eos, &map.pad}) {
      if (!expansion && *name) expansion = tokenizer_->token_to_id(**name);
    }
    for (const std::string_view name : {"[MASK]", "<mask>"}) {
      if (!expansion) expansion = tokenizer_->token_to_id(name);
    }
    if (!expansion && config.do_query_expansion) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: query expansion needs a mask, eos or pad token; the tokenizer has none",
                              dir.string()));
    }
    t.expansion = expansion.value_or(0);
    for (const std::string& word : config.skiplist_words) {
      if (auto id = token_or_unknown(*tokenizer_, word, unknown)) t.skiplist.push_back(*id);
    }
    std::sort(t.skiplist.begin(), t.skiplist.end());
    t.skiplist.erase(std::unique(t.skiplist.begin(), t.skiplist.end()), t.skiplist.end());
    colbert_ = std::move(t);
  }
}

NeuralEmbedder::~NeuralEmbedder() = default;

std::string_view NeuralEmbedder::pooling() const noexcept {
  // TEI names a SPLADE model's pooling "splade"; a ColBERT has none (a vector per token).
  if (model_->splade) return "splade";
  if (model_->colbert) return "colbert";
  return pooling_mode_name(model_->pooling.mode);
}

std::optional<std::uint32_t> NeuralEmbedder::unknown_token_id() const noexcept {
  // tokenizer.json does not name the unknown token in one place for every model type, so
  // look up the two spellings HF models use; a lookup failure means "none".
  try {
    for (const std::string_view name : {std::string_view("[UNK]"), std::string_view("<unk>")}) {
      if (auto id = tokenizer_->token_to_id(name)) return id;
    }
  } catch (...) {
    return std::nullopt;
  }
  return std::nullopt;
}

std::size_t NeuralEmbedder::dim() const noexcept {
  return model_->encoder.dims().hidden;
}

Encoding NeuralEmbedder::encode(std::string_view input, const InputOptions& options, bool with_tokens) const {
  EncodeOptions eo;
  eo.add_special_tokens = options.add_special_tokens;
  eo.with_tokens = with_tokens;
  std::optional<TruncationParams> truncation;  // none without truncate: count them all
  if (options.truncate) {
    truncation = truncation_;
    truncation->direction = options.side == TruncationSide::Left ? Direction::Left : Direction::Right;
  }
  Encoding e = tokenizer_->encode(input, eo, truncation);
  if (!options.truncate && e.size() > max_input_tokens_) {
    throw Error(
        ErrorKind::InvalidInput,
        fmt::format("input has {} tokens, more than the model's maximum of {}", e.size(), max_input_tokens_));
  }
  return e;
}

namespace {

// The leading special tokens, then the tokens that start inside the prompt's bytes.
std::size_t count_prompt_tokens(const Encoding& e, std::size_t prompt_bytes) {
  if (prompt_bytes == 0) return 0;
  std::size_t n = 0;
  while (n < e.size() && e.special_tokens_mask[n] != 0) ++n;
  while (n < e.size() && e.special_tokens_mask[n] == 0 && e.offsets[n].begin < prompt_bytes) ++n;
  return n;
}

}  // namespace

PreparedInput NeuralEmbedder::prepare_colbert(std::string_view input, const InputOptions& options) const {
  const ColbertConfig& config = *model_->colbert;
  const std::optional<std::uint32_t> marker =
      options.query ? colbert_->query_marker : colbert_->document_marker;
  const std::size_t length = options.query ? config.query_length : config.document_length;
  const std::size_t reserved = marker ? 1 : 0;
  const model::EncoderDims& dims = model_->encoder.dims();
  const std::size_t positions = dims.max_positions - dims.position_offset;
  // sentence-transformers cuts at the module's max_seq_length, which PyLate sets to the length
  // less the marker; never past the model's positions.
  const std::size_t limit =
      std::max<std::size_t>(1, std::min(length, positions) - std::min(length, reserved));
  EncodeOptions eo;
  eo.add_special_tokens = options.add_special_tokens;
  std::optional<TruncationParams> truncation;
  if (options.truncate) {
    truncation = truncation_;
    truncation->max_length = limit;
    truncation->direction = options.side == TruncationSide::Left ? Direction::Left : Direction::Right;
  }
  Encoding e = tokenizer_->encode(input, eo, truncation);
  if (e.size() == 0) throw Error(ErrorKind::InvalidInput, "input has no tokens");
  if (e.size() > limit) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("input has {} tokens, more than the model's maximum of {} for a {}", e.size(),
                            limit, options.query ? "query" : "document"));
  }
  PreparedInput p;
  p.query = options.query;
  p.ids = std::move(e.ids);
  p.type_ids = std::move(e.type_ids);
  if (marker) {  // PyLate's insert_prefix_token: after the first token ([CLS])
    p.ids.push_back(*marker);
    std::rotate(p.ids.begin() + 1, p.ids.end() - 1, p.ids.end());
    p.type_ids.resize(p.ids.size(), 0);  // the marker's type is 0, as every token of one text
  }
  // The expansion never runs past the model's positions (PyLate would fail there).
  const std::size_t padded = std::min(length, positions);
  if (options.query && config.do_query_expansion && p.ids.size() < padded) {
    if (!config.attend_to_expansion_tokens) p.visible_tokens = p.ids.size();
    p.ids.resize(padded, colbert_->expansion);
    p.type_ids.resize(padded, 0);
  }
  p.tokens = p.ids.size();
  return p;
}

PreparedInput NeuralEmbedder::prepare(std::string_view text, const InputOptions& options) const {
  std::string joined;
  const std::string_view input = with_prompt(text, options.prompt, joined);
  if (colbert_) return prepare_colbert(input, options);
  Encoding e = encode(input, options, false);
  if (e.size() == 0) throw Error(ErrorKind::InvalidInput, "input has no tokens");
  PreparedInput p;
  p.prompt_tokens = count_prompt_tokens(e, options.prompt.size());
  p.ids = std::move(e.ids);
  p.type_ids = std::move(e.type_ids);
  p.tokens = p.ids.size();
  return p;
}

PreparedInput NeuralEmbedder::prepare_ids(std::span<const std::uint32_t> ids,
                                          const InputOptions& options) const {
  if (ids.empty()) throw Error(ErrorKind::InvalidInput, "input has no token ids");
  if (!options.prompt.empty()) {
    throw Error(ErrorKind::InvalidInput,
                "a prompt cannot be prepended to token ids: include the prompt's tokens in the ids");
  }
  const std::size_t vocab = model_->encoder.dims().vocab;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= vocab) {
      throw Error(
          ErrorKind::InvalidInput,
          fmt::format("token id {} (position {}) is outside the vocabulary of {} tokens", ids[i], i, vocab));
    }
  }
  if (ids.size() > max_input_tokens_) {
    if (!options.truncate) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("input has {} tokens, more than the model's maximum of {}", ids.size(),
                              max_input_tokens_));
    }
    ids = options.side == TruncationSide::Left ? ids.last(max_input_tokens_) : ids.first(max_input_tokens_);
  }
  PreparedInput p;
  p.ids.assign(ids.begin(), ids.end());
  p.tokens = p.ids.size();
  p.query = options.query;
  return p;
}

std::vector<std::size_t> NeuralEmbedder::pooling_skips(std::span<const PreparedInput* const> inputs) const {
  // sentence-transformers masks the prompt's tokens out of mean/max pooling when the
  // Pooling module says include_prompt = false.
  std::vector<std::size_t> skip;
  if (!model_->pooling.include_prompt) {
    skip.reserve(inputs.size());
    for (const PreparedInput* p : inputs) skip.push_back(p->prompt_tokens);
  }
  return skip;
}

std::span<const float> NeuralEmbedder::forward(std::span<const PreparedInput* const> inputs,
                                               model::TokenBatch& batch) const {
  for (const PreparedInput* p : inputs) batch.add(p->ids, p->type_ids, p->visible_tokens);
  model_->encoder.validate(batch);
  thread_local model::EncoderWorkspace workspace;
  return model_->encoder.forward(batch, workspace, pool_);
}

void NeuralEmbedder::embed_prepared(std::span<const PreparedInput* const> inputs,
                                    std::span<float> out) const {
  if (model_->splade) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{} is a sparse (SPLADE) model: it gives sparse vectors (/embed_sparse), not dense ones",
                    id_));
  }
  if (model_->colbert) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{} is a ColBERT (multi-vector) model: it gives token vectors (/embed_hybrid), not "
                    "one dense vector",
                    id_));
  }
  const std::size_t h = dim();
  if (out.size() != inputs.size() * h) {
    throw Error(ErrorKind::Internal,
                fmt::format("embed_prepared: {} floats for {} inputs of {}", out.size(), inputs.size(), h));
  }
  if (inputs.empty()) return;
  model::TokenBatch batch;
  const auto hidden = forward(inputs, batch);
  // Pool straight into the result rows: no intermediate copy.
  model::pool(hidden, h, batch.offsets, model_->pooling.mode, out, pooling_skips(inputs));
}

std::vector<Embeddings> NeuralEmbedder::embed_tokens(std::span<const PreparedInput* const> inputs) const {
  if (inputs.empty()) return {};
  const std::size_t h = dim();
  model::TokenBatch batch;
  const auto hidden = forward(inputs, batch);
  return detail::split_token_rows(hidden, batch, h);
}

RetrievalOutputs NeuralEmbedder::retrieval_outputs() const noexcept {
  // A SPLADE model's sentence embedding is its sparse vector: it has no dense one.
  const bool splade = model_->splade.has_value();
  const bool colbert = model_->colbert.has_value();
  return {!splade && !colbert, splade || model_->lexical.has_value(), model_->multi_vector.has_value()};
}

std::size_t NeuralEmbedder::multi_vector_dim() const noexcept {
  return model_->multi_vector ? model_->multi_vector->dim() : 0;
}

std::vector<RetrievalVectors> NeuralEmbedder::embed_retrieval(
    std::span<const PreparedInput* const> inputs) const {
  std::vector<RetrievalVectors> out(inputs.size());
  if (inputs.empty()) return out;
  const std::size_t h = dim();
  model::TokenBatch batch;
  const auto hidden = forward(inputs, batch);
  if (model_->splade) {
    auto sparse = model_->splade->sparse(hidden, h, batch.offsets, pool_);
    for (std::size_t i = 0; i < inputs.size(); ++i) out[i].sparse = std::move(sparse[i]);
    return out;
  }
  if (colbert_) {
    colbert_vectors(hidden, batch, inputs, out);
    return out;
  }
  std::vector<float> pooled(inputs.size() * h);
  model::pool(hidden, h, batch.offsets, model_->pooling.mode, pooled, pooling_skips(inputs));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto row = std::span<const float>(pooled).subspan(i * h, h);
    out[i].dense.assign(row.begin(), row.end());
  }
  if (model_->lexical) {
    auto sparse = model_->lexical->sparse(hidden, h, batch.ids, batch.offsets, sparse_skip_ids_, pool_);
    for (std::size_t i = 0; i < inputs.size(); ++i) out[i].sparse = std::move(sparse[i]);
  }
  if (model_->multi_vector) {
    const model::MultiVectorHead& head = *model_->multi_vector;
    std::vector<float> vectors;
    head.vectors(hidden, h, batch.offsets, vectors, pool_);
    std::size_t row = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::size_t n = head.rows(batch.length(i));
      Embeddings m(n, head.dim());
      std::copy_n(vectors.begin() + static_cast<std::ptrdiff_t>(row * head.dim()), n * head.dim(),
                  m.values().begin());
      out[i].multi = std::move(m);
      row += n;
    }
  }
  return out;
}

void NeuralEmbedder::colbert_vectors(std::span<const float> hidden, const model::TokenBatch& batch,
                                     std::span<const PreparedInput* const> inputs,
                                     std::vector<RetrievalVectors>& out) const {
  const model::MultiVectorHead& head = *model_->multi_vector;
  const std::size_t d = head.dim();
  std::vector<float> vectors;
  head.vectors(hidden, dim(), batch.offsets, vectors, pool_);
  const auto& skiplist = colbert_->skiplist;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::size_t first = batch.offsets[i];
    const std::size_t n = batch.length(i);
    // PyLate keeps every token of a query and drops a document's skiplist tokens (punctuation).
    std::size_t kept = n;
    if (!inputs[i]->query) {
      kept = 0;
      for (std::size_t t = 0; t < n; ++t) {
        kept += std::binary_search(skiplist.begin(), skiplist.end(), batch.ids[first + t]) ? 0 : 1;
      }
    }
    Embeddings m(kept, d);
    std::size_t row = 0;
    for (std::size_t t = 0; t < n; ++t) {
      if (!inputs[i]->query && std::binary_search(skiplist.begin(), skiplist.end(), batch.ids[first + t]))
        continue;
      std::copy_n(vectors.begin() + static_cast<std::ptrdiff_t>((first + t) * d), d, m.row(row++).begin());
    }
    out[i].multi = std::move(m);
  }
}

std::vector<TokenInfo> NeuralEmbedder::tokenize(std::string_view text, const InputOptions& options) const {
  std::string joined;
  const std::string_view input = with_prompt(text, options.prompt, joined);
  return token_infos(encode(input, options, true));
}

std::string NeuralEmbedder::decode(std::span<const std::uint32_t> ids, bool skip_special_tokens) const {
  return tokenizer_->decode(ids, skip_special_tokens);
}

const std::map<std::string, std::string>& NeuralEmbedder::prompts() const noexcept {
  return model_->st.prompts;
}

std::optional<std::string> NeuralEmbedder::default_prompt_name() const {
  return model_->st.default_prompt_name;
}

}  // namespace warden
