#include "embed/static_embedder.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "embed/text_input.hpp"

namespace warden::embed {

namespace {

// The first (or, from the left, last) `n` code points of valid UTF-8 text: Python's
// text[:n] (text[-n:]).
std::string_view cut_code_points(std::string_view text, std::size_t n, TruncationSide side) {
  if (text.size() <= n) return text;  // at most one byte per code point
  const auto is_start = [&text](std::size_t i) {
    return (static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U;
  };
  if (side == TruncationSide::Right) {
    std::size_t seen = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (is_start(i) && seen++ == n) return text.substr(0, i);
    }
    return text;
  }
  std::size_t seen = 0;
  for (std::size_t i = text.size(); i-- > 0;) {
    if (is_start(i) && ++seen == n) return text.substr(i);
  }
  return text;
}

// Keeps the tokens where keep(i) holds, in every parallel vector of `e`.
template <typename Keep>
void filter_tokens(tokenizer::Encoding& e, Keep keep) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (!keep(i)) continue;
    e.ids[out] = e.ids[i];
    e.type_ids[out] = e.type_ids[i];
    e.attention_mask[out] = e.attention_mask[i];
    e.special_tokens_mask[out] = e.special_tokens_mask[i];
    e.sequence_ids[out] = e.sequence_ids[i];
    e.offsets[out] = e.offsets[i];
    e.char_offsets[out] = e.char_offsets[i];
    if (!e.tokens.empty()) e.tokens[out] = std::move(e.tokens[i]);
    ++out;
  }
  e.ids.resize(out);
  e.type_ids.resize(out);
  e.attention_mask.resize(out);
  e.special_tokens_mask.resize(out);
  e.sequence_ids.resize(out);
  e.offsets.resize(out);
  e.char_offsets.resize(out);
  if (!e.tokens.empty()) e.tokens.resize(out);
}

// int(np.median(lengths)): the middle length, or the mean of the two middle ones, truncated.
std::size_t median_length(const std::vector<std::string>& vocabulary) {
  if (vocabulary.empty()) return 0;
  std::vector<std::size_t> lengths;
  lengths.reserve(vocabulary.size());
  for (const auto& token : vocabulary) lengths.push_back(utf8::code_points(token));
  const std::size_t mid = lengths.size() / 2;
  std::nth_element(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(mid), lengths.end());
  const std::size_t upper = lengths[mid];
  if (lengths.size() % 2 == 1) return upper;
  const std::size_t lower =
      *std::max_element(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

}  // namespace

StaticEmbedder::StaticEmbedder(const std::filesystem::path& dir,
                               const model::static_models::StaticLayout& layout)
    : id_(std::filesystem::absolute(dir).lexically_normal().filename().string()),
      model_(model::static_models::StaticModel::load(layout)),
      tokenizer_(std::make_unique<tokenizer::Tokenizer>(
          tokenizer::Tokenizer::from_file(layout.files / "tokenizer.json"))) {
  if (id_.empty()) id_ = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  tokenizer_->set_padding(std::nullopt);  // one text at a time: padding would be averaged in
  if (tokenizer_->vocab_size() > model_->vocab()) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: the tokenizer has {} tokens, the model vectors for {}",
                    (layout.files / "tokenizer.json").string(), tokenizer_->vocab_size(), model_->vocab()));
  }
  if (layout.rules == model::static_models::StaticRules::Model2Vec) {
    unk_ = tokenizer_->model_unk_id();
    median_token_length_ = median_length(tokenizer_->vocabulary());
    max_tokens_ = kModel2VecMaxTokens;
  }
  std::error_code ec;
  if (std::filesystem::exists(dir / "config_sentence_transformers.json", ec)) {
    st_ = model::metadata::read_st_config(dir / "config_sentence_transformers.json");
  }
}

StaticEmbedder::~StaticEmbedder() = default;

tokenizer::Encoding StaticEmbedder::encode(std::string_view input, const InputOptions& options,
                                           bool with_tokens) const {
  tokenizer::EncodeOptions eo;
  eo.add_special_tokens = false;  // both libraries encode without special tokens
  eo.with_tokens = with_tokens;
  const bool model2vec = model_->layout().rules == model::static_models::StaticRules::Model2Vec;
  if (model2vec && options.truncate) {
    input = cut_code_points(input, kModel2VecMaxTokens * median_token_length_, options.side);
  }
  // The tokenizer file's own truncation applies as it does upstream; without truncation every
  // token is counted, so that a long text is refused rather than cut.
  tokenizer::Encoding e =
      tokenizer_->encode(input, eo, options.truncate ? tokenizer_->truncation() : std::nullopt);
  if (!model2vec) return e;
  if (unk_) filter_tokens(e, [&](std::size_t i) { return e.ids[i] != *unk_; });
  if (e.size() > kModel2VecMaxTokens) {
    if (!options.truncate) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("input has {} tokens, more than the model's maximum of {}", e.size(),
                              kModel2VecMaxTokens));
    }
    const std::size_t drop = e.size() - kModel2VecMaxTokens;
    const bool left = options.side == TruncationSide::Left;
    filter_tokens(e, [&](std::size_t i) { return left ? i >= drop : i < kModel2VecMaxTokens; });
  }
  return e;
}

PreparedInput StaticEmbedder::prepare(std::string_view text, const InputOptions& options) const {
  std::string joined;
  const std::string_view input = with_prompt(text, options.prompt, joined);
  tokenizer::Encoding e = encode(input, options, false);
  PreparedInput p;
  p.ids = std::move(e.ids);
  p.tokens = p.ids.size();
  return p;
}

PreparedInput StaticEmbedder::prepare_ids(std::span<const std::uint32_t> ids,
                                          const InputOptions& options) const {
  if (!options.prompt.empty()) {
    throw Error(ErrorKind::InvalidInput,
                "a prompt cannot be prepended to token ids: include the prompt's tokens in the ids");
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= model_->vocab()) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("token id {} (position {}) is outside the vocabulary of {} tokens", ids[i], i,
                              model_->vocab()));
    }
  }
  if (max_tokens_ != 0 && ids.size() > max_tokens_) {
    if (!options.truncate) {
      throw Error(
          ErrorKind::InvalidInput,
          fmt::format("input has {} tokens, more than the model's maximum of {}", ids.size(), max_tokens_));
    }
    ids = options.side == TruncationSide::Left ? ids.last(max_tokens_) : ids.first(max_tokens_);
  }
  PreparedInput p;
  p.ids.assign(ids.begin(), ids.end());
  p.tokens = p.ids.size();
  return p;
}

void StaticEmbedder::embed_prepared(std::span<const PreparedInput* const> inputs,
                                    std::span<float> out) const {
  const std::size_t d = dim();
  if (out.size() != inputs.size() * d) {
    throw Error(ErrorKind::Internal,
                fmt::format("embed_prepared: {} floats for {} inputs of {}", out.size(), inputs.size(), d));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) model_->embed(inputs[i]->ids, out.subspan(i * d, d));
}

std::vector<Embeddings> StaticEmbedder::embed_tokens(std::span<const PreparedInput* const> inputs) const {
  std::vector<Embeddings> out;
  out.reserve(inputs.size());
  for (const PreparedInput* p : inputs) {
    Embeddings e(p->ids.size(), dim());
    for (std::size_t t = 0; t < p->ids.size(); ++t) model_->token_vector(p->ids[t], e.row(t));
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<TokenInfo> StaticEmbedder::tokenize(std::string_view text, const InputOptions& options) const {
  std::string joined;
  const std::string_view input = with_prompt(text, options.prompt, joined);
  return token_infos(encode(input, options, true));
}

std::string StaticEmbedder::decode(std::span<const std::uint32_t> ids, bool skip_special_tokens) const {
  return tokenizer_->decode(ids, skip_special_tokens);
}

}  // namespace warden::embed
