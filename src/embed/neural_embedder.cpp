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

}  // namespace

NeuralEmbedder::NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool, Precision precision)
    : NeuralEmbedder(dir, pool, precision, load_tokenizer_async(dir)) {}

NeuralEmbedder::NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool, Precision precision,
                               std::future<std::unique_ptr<Tokenizer>> tokenizer)
    : id_(std::filesystem::absolute(dir).lexically_normal().filename().string()),
      model_(model::load_encoder_model(dir, pool, active_isa(), precision)),
      tokenizer_(tokenizer.get()),
      pool_(pool) {
  if (id_.empty()) id_ = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  // Never let the tokenizer emit more tokens than the model takes.
  const auto& own = tokenizer_->truncation();
  truncation_ = own.value_or(TruncationParams{});
  truncation_.max_length = model_->max_input_tokens(own ? std::optional(own->max_length) : std::nullopt);
  max_input_tokens_ = truncation_.max_length;
  tokenizer_->set_truncation(truncation_);
  // Batches are packed: padding tokens from the file's padding setting would be pooled.
  tokenizer_->set_padding(std::nullopt);
  if (model_->lexical) sparse_skip_ids_ = sparse_skip_ids(dir, *tokenizer_);
}

NeuralEmbedder::~NeuralEmbedder() = default;

std::string_view NeuralEmbedder::pooling() const noexcept {
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

PreparedInput NeuralEmbedder::prepare(std::string_view text, const InputOptions& options) const {
  std::string joined;
  const std::string_view input = with_prompt(text, options.prompt, joined);
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
  for (const PreparedInput* p : inputs) batch.add(p->ids, p->type_ids);
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
  return {!splade, splade || model_->lexical.has_value(), model_->multi_vector.has_value()};
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
