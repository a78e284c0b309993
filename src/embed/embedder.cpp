#include "embed/embedder.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/l2_normalize.hpp"
#include "core/utf8.hpp"

namespace warden::embed {

PreparedInput Embedder::prepare_ids(std::span<const std::uint32_t> /*ids*/,
                                    const InputOptions& /*options*/) const {
  throw Error(ErrorKind::Unsupported, fmt::format("{} has no vocabulary: it cannot take token ids", id()));
}

std::vector<Embeddings> Embedder::embed_tokens(std::span<const PreparedInput* const> /*inputs*/) const {
  throw Error(ErrorKind::Unsupported, fmt::format("{} has no per-token vectors", id()));
}

std::vector<RetrievalVectors> Embedder::embed_retrieval(std::span<const PreparedInput* const> inputs) const {
  const std::size_t d = dim();
  std::vector<float> pooled(inputs.size() * d);
  embed_prepared(inputs, pooled);
  std::vector<RetrievalVectors> out(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    out[i].dense.assign(pooled.begin() + static_cast<std::ptrdiff_t>(i * d),
                        pooled.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
  }
  return out;
}

std::vector<TokenInfo> Embedder::tokenize(std::string_view /*text*/, const InputOptions& /*options*/) const {
  throw Error(ErrorKind::Unsupported, fmt::format("{} has no tokenizer", id()));
}

std::string Embedder::decode(std::span<const std::uint32_t> /*ids*/, bool /*skip_special_tokens*/) const {
  throw Error(ErrorKind::Unsupported, fmt::format("{} has no tokenizer to decode with", id()));
}

const std::map<std::string, std::string>& Embedder::prompts() const noexcept {
  static const std::map<std::string, std::string> kNone;
  return kNone;
}

Embeddings Embedder::embed(std::span<const std::string_view> texts, const InputOptions& options) const {
  // Every text is checked before any is prepared, so that the error names the first bad
  // index whatever the embedder's own messages say.
  for (std::size_t i = 0; i < texts.size(); ++i) utf8::require_valid(texts[i], fmt::format("input {}", i));
  std::vector<PreparedInput> prepared;
  prepared.reserve(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    try {
      prepared.push_back(prepare(texts[i], options));
    } catch (const Error& e) {
      throw Error(e.kind(), fmt::format("input {}: {}", i, e.what()));
    }
  }
  std::vector<const PreparedInput*> inputs;
  inputs.reserve(prepared.size());
  for (const PreparedInput& p : prepared) inputs.push_back(&p);
  Embeddings out(texts.size(), dim());
  if (texts.empty()) return out;
  embed_prepared(inputs, out.values());
  normalize_rows(out.values());
  return out;
}

void Embedder::normalize_rows(std::span<float> rows) const {
  if (!unit_vectors()) l2_normalize(rows, dim());
}

}  // namespace warden::embed
