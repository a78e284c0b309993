#include "embed/neural_embedder.hpp"

#include <algorithm>
#include <future>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "embed/text_input.hpp"
#include "embed/token_rows.hpp"
#include "tokenizer/special_tokens_map.hpp"

namespace warden::embed {

namespace {

// The tokenizer is parsed on its own thread while the weights are packed: both take
// milliseconds, and start-up is the sum of them otherwise.
std::future<std::unique_ptr<tokenizer::Tokenizer>> load_tokenizer_async(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {  // let the model loader report the folder
    return std::async(std::launch::deferred, [] { return std::unique_ptr<tokenizer::Tokenizer>(); });
  }
  return std::async(std::launch::async, [dir] {
    return std::make_unique<tokenizer::Tokenizer>(tokenizer::Tokenizer::from_directory(dir));
  });
}

// The ids FlagEmbedding leaves out of a sparse vector: the tokenizer's cls, eos, pad and unk
// tokens (its special_tokens_map). A folder without the files that name them falls back to
// the spellings BERT's and XLM-R's vocabularies use.
std::vector<std::uint32_t> sparse_skip_ids(const std::filesystem::path& dir,
                                           const tokenizer::Tokenizer& tokenizer) {
  const tokenizer::SpecialTokensMap map = tokenizer::read_special_tokens_map(dir);
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
std::optional<std::uint32_t> token_or_unknown(const tokenizer::Tokenizer& tokenizer, std::string_view token,
                                              std::optional<std::uint32_t> unknown) {
  if (auto id = tokenizer.token_to_id(token)) return id;
  return unknown;
}

}  // namespace

NeuralEmbedder::NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool, Precision precision,
                               std::string_view pooling)
    : NeuralEmbedder(dir, pool, precision, pooling, load_tokenizer_async(dir)) {}

NeuralEmbedder::NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool, Precision precision,
                               std::string_view pooling,
                               std::future<std::unique_ptr<tokenizer::Tokenizer>> tokenizer)
    : id_(std::filesystem::absolute(dir).lexically_normal().filename().string()),
      model_(model::load_encoder_model(dir, pool, active_isa(), precision)),
      tokenizer_(tokenizer.get()),
      pool_(pool) {
  if (id_.empty()) id_ = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  if (!pooling.empty()) model::override_pooling(*model_, pooling, active_isa(), precision);
  prompts_ = model_->st.prompts;
  for (const model::metadata::TaskAdapter& t : model_->config.task_adapters) {
    tasks_.push_back(t.name);
    prompts_.emplace(t.name, t.instruction);  // the prompts file's own wins
  }
  // Never let the tokenizer emit more tokens than the model takes.
  const auto& own = tokenizer_->truncation();
  truncation_ = own.value_or(tokenizer::TruncationParams{});
  truncation_.max_length = model_->max_input_tokens(own ? std::optional(own->max_length) : std::nullopt);
  max_input_tokens_ = truncation_.max_length;
  tokenizer_->set_truncation(truncation_);
  // Batches are packed: padding tokens from the file's padding setting would be pooled.
  tokenizer_->set_padding(std::nullopt);
  model::HeadVocabulary vocabulary;
  if (model_->lexical) vocabulary.sparse_skip_ids = sparse_skip_ids(dir, *tokenizer_);
  if (model_->colbert) {
    const model::heads::ColbertConfig& config = *model_->colbert;
    const tokenizer::SpecialTokensMap map = tokenizer::read_special_tokens_map(dir);
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
    auto& skiplist = vocabulary.colbert_skiplist;
    for (const std::string& word : config.skiplist_words) {
      if (auto id = token_or_unknown(*tokenizer_, word, unknown)) skiplist.push_back(*id);
    }
    std::sort(skiplist.begin(), skiplist.end());
    skiplist.erase(std::unique(skiplist.begin(), skiplist.end()), skiplist.end());
    colbert_ = t;
  }
  heads_ = model::embedder_heads(*model_, std::move(vocabulary));
}

NeuralEmbedder::~NeuralEmbedder() = default;

std::string_view NeuralEmbedder::pooling() const noexcept {
  // TEI names a SPLADE model's pooling "splade"; a ColBERT has none (a vector per token): the
  // first head names it.
  return heads_.front()->name();
}

std::optional<std::uint32_t> NeuralEmbedder::unknown_token_id() const noexcept {
  return embed::unknown_token_id(*tokenizer_);
}

std::size_t NeuralEmbedder::dim() const noexcept {
  const model::heads::Head* dense = model::find_head(heads_, model::heads::HeadOutput::Dense);
  return dense != nullptr ? dense->width() : token_dim();
}

std::size_t NeuralEmbedder::token_dim() const noexcept {
  return model_->encoder.dims().hidden;
}

tokenizer::Encoding NeuralEmbedder::encode(std::string_view input, const InputOptions& options,
                                           bool with_tokens) const {
  tokenizer::EncodeOptions eo;
  eo.add_special_tokens = options.add_special_tokens;
  eo.with_tokens = with_tokens;
  std::optional<tokenizer::TruncationParams> truncation;  // none without truncate: count them all
  if (options.truncate) {
    truncation = truncation_;
    truncation->direction =
        options.side == TruncationSide::Left ? tokenizer::Direction::Left : tokenizer::Direction::Right;
  }
  tokenizer::Encoding e = tokenizer_->encode(input, eo, truncation);
  if (!options.truncate && e.size() > max_input_tokens_) {
    throw Error(
        ErrorKind::InvalidInput,
        fmt::format("input has {} tokens, more than the model's maximum of {}", e.size(), max_input_tokens_));
  }
  return e;
}

namespace {

// The leading special tokens, then the tokens that start inside the prompt's bytes.
std::size_t count_prompt_tokens(const tokenizer::Encoding& e, std::size_t prompt_bytes) {
  if (prompt_bytes == 0) return 0;
  std::size_t n = 0;
  while (n < e.size() && e.special_tokens_mask[n] != 0) ++n;
  while (n < e.size() && e.special_tokens_mask[n] == 0 && e.offsets[n].begin < prompt_bytes) ++n;
  return n;
}

}  // namespace

PreparedInput NeuralEmbedder::prepare_colbert(std::string_view input, const InputOptions& options) const {
  const model::heads::ColbertConfig& config = *model_->colbert;
  const std::optional<std::uint32_t> marker =
      options.query ? colbert_->query_marker : colbert_->document_marker;
  const std::size_t length = options.query ? config.query_length : config.document_length;
  const std::size_t reserved = marker ? 1 : 0;
  const model::engine::EncoderDims& dims = model_->encoder.dims();
  const std::size_t positions = dims.max_positions - dims.position_offset;
  // sentence-transformers cuts at the module's max_seq_length, which PyLate sets to the length
  // less the marker; never past the model's positions.
  const std::size_t limit =
      std::max<std::size_t>(1, std::min(length, positions) - std::min(length, reserved));
  tokenizer::EncodeOptions eo;
  eo.add_special_tokens = options.add_special_tokens;
  std::optional<tokenizer::TruncationParams> truncation;
  if (options.truncate) {
    truncation = truncation_;
    truncation->max_length = limit;
    truncation->direction =
        options.side == TruncationSide::Left ? tokenizer::Direction::Left : tokenizer::Direction::Right;
  }
  tokenizer::Encoding e = tokenizer_->encode(input, eo, truncation);
  if (e.size() == 0) throw Error(ErrorKind::InvalidInput, "input has no tokens");
  if (e.size() > limit) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("input has {} tokens, more than the model's maximum of {} for a {}", e.size(),
                            limit, options.query ? "query" : "document"));
  }
  PreparedInput p;
  p.adapter = adapter_of(options);
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
  tokenizer::Encoding e = encode(input, options, false);
  if (e.size() == 0) throw Error(ErrorKind::InvalidInput, "input has no tokens");
  PreparedInput p;
  p.adapter = adapter_of(options);
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
  p.adapter = adapter_of(options);
  p.ids.assign(ids.begin(), ids.end());
  p.tokens = p.ids.size();
  p.query = options.query;
  return p;
}

model::heads::HeadPass NeuralEmbedder::forward(std::span<const PreparedInput* const> inputs,
                                               model::engine::TokenBatch& batch,
                                               std::vector<std::size_t>& prompts,
                                               std::vector<std::uint8_t>& queries) const {
  prompts.reserve(inputs.size());
  queries.reserve(inputs.size());
  for (const PreparedInput* p : inputs) {
    batch.add(p->ids, p->type_ids, p->visible_tokens, p->adapter);
    prompts.push_back(p->prompt_tokens);
    queries.push_back(p->query ? 1 : 0);
  }
  model_->encoder.validate(batch);
  thread_local model::engine::EncoderWorkspace workspace;
  model::heads::HeadPass pass =
      model::heads::head_pass(batch, model_->encoder.forward(batch, workspace, pool_), token_dim(), pool_);
  pass.prompt_tokens = prompts;
  pass.queries = queries;
  return pass;
}

void NeuralEmbedder::embed_prepared(std::span<const PreparedInput* const> inputs,
                                    std::span<float> out) const {
  const model::heads::Head* dense = model::find_head(heads_, model::heads::HeadOutput::Dense);
  if (dense == nullptr) {
    const bool sparse = heads_.front()->output() == model::heads::HeadOutput::Sparse;
    throw Error(
        ErrorKind::Unsupported,
        sparse ? fmt::format("{} is a sparse (SPLADE) model: it gives sparse vectors (/embed_sparse), not "
                             "dense ones",
                             id_)
               : fmt::format("{} is a ColBERT (multi-vector) model: it gives token vectors "
                             "(/embed_hybrid), not one dense vector",
                             id_));
  }
  if (inputs.empty()) return;
  model::engine::TokenBatch batch;
  std::vector<std::size_t> prompts;
  std::vector<std::uint8_t> queries;
  // Pool straight into the result rows: no intermediate copy.
  model::heads::HeadResults results;
  results.dense = out;
  dense->apply(forward(inputs, batch, prompts, queries), results);
}

std::vector<Embeddings> NeuralEmbedder::embed_tokens(std::span<const PreparedInput* const> inputs) const {
  if (inputs.empty()) return {};
  model::engine::TokenBatch batch;
  std::vector<std::size_t> prompts;
  std::vector<std::uint8_t> queries;
  const model::heads::HeadPass pass = forward(inputs, batch, prompts, queries);
  return detail::split_token_rows(pass.hidden, batch, token_dim());
}

RetrievalOutputs NeuralEmbedder::retrieval_outputs() const noexcept {
  return {model::find_head(heads_, model::heads::HeadOutput::Dense) != nullptr,
          model::find_head(heads_, model::heads::HeadOutput::Sparse) != nullptr,
          model::find_head(heads_, model::heads::HeadOutput::MultiVector) != nullptr};
}

std::size_t NeuralEmbedder::multi_vector_dim() const noexcept {
  const model::heads::Head* multi = model::find_head(heads_, model::heads::HeadOutput::MultiVector);
  return multi != nullptr ? multi->width() : 0;
}

std::vector<RetrievalVectors> NeuralEmbedder::embed_retrieval(
    std::span<const PreparedInput* const> inputs) const {
  std::vector<RetrievalVectors> out(inputs.size());
  if (inputs.empty()) return out;
  model::engine::TokenBatch batch;
  std::vector<std::size_t> prompts;
  std::vector<std::uint8_t> queries;
  const model::heads::HeadPass pass = forward(inputs, batch, prompts, queries);
  const std::size_t h = dim();
  std::vector<float> pooled;
  model::heads::HeadResults results;
  for (const auto& head : heads_) {
    if (head->output() == model::heads::HeadOutput::Dense) {
      pooled.resize(inputs.size() * h);
      results.dense = pooled;
    }
    head->apply(pass, results);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!pooled.empty()) {
      const auto row = std::span<const float>(pooled).subspan(i * h, h);
      out[i].dense.assign(row.begin(), row.end());
    }
    if (!results.sparse.empty()) out[i].sparse = std::move(results.sparse[i]);
    if (!results.multi.empty()) out[i].multi = std::move(results.multi[i]);
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
  return prompts_;
}

std::int32_t NeuralEmbedder::adapter_of(const InputOptions& options) const {
  if (options.task.empty()) return model::engine::TokenBatch::kNoAdapter;
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i] == options.task) return static_cast<std::int32_t>(i);
  }
  throw Error(ErrorKind::InvalidArgument,
              tasks_.empty() ? fmt::format("task `{}`: {} has no task adapters", options.task, id_)
                             : fmt::format("task `{}` is not one of {}'s ({})", options.task, id_,
                                           fmt::join(tasks_, ", ")));
}

std::optional<std::string> NeuralEmbedder::default_prompt_name() const {
  return model_->st.default_prompt_name;
}

}  // namespace warden::embed
