#include "embed/use_lite_embedder.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/use_lite_format.hpp"

namespace warden {

namespace fs = std::filesystem;

namespace {

fs::path env_path(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? fs::path(v) : fs::path();
}

UseLiteTokenizer load_tokenizer(const fs::path& dir) {
  if (!fs::exists(dir / model::use_lite::kConfigFile)) {
    throw Error(ErrorKind::NotFound,
                fmt::format("no converted USE-lite model in {} (run scripts/fetch-use-lite --convert "
                            "build/release/bin/warden, or set WARDEN_USE_LITE_DIR)",
                            dir.string()));
  }
  return UseLiteTokenizer::from_file(dir / model::use_lite::kVocabFile);
}

}  // namespace

fs::path use_lite_cache_dir() {
  if (auto p = env_path("WARDEN_USE_LITE_CACHE"); !p.empty()) return p;
  fs::path base = env_path("XDG_CACHE_HOME");
  if (base.empty()) base = env_path("HOME") / ".cache";
  return base / "warden" / "use-lite";
}

fs::path use_lite_model_dir() {
  if (auto p = env_path("WARDEN_USE_LITE_DIR"); !p.empty()) return p;
  return use_lite_cache_dir() / "model";
}

UseLiteEmbedder::UseLiteEmbedder(const fs::path& dir, ThreadPool* pool)
    : tokenizer_(load_tokenizer(dir)), pool_(pool) {
  model_ = model::UseLiteModel::load(dir, pool);
  if (tokenizer_.vocab_size() > model_->config().vocab) {
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: {} pieces but only {} embedding rows", dir.string(),
                                                    tokenizer_.vocab_size(), model_->config().vocab));
  }
}

UseLiteEmbedder::~UseLiteEmbedder() = default;

Embeddings UseLiteEmbedder::embed(std::span<const std::string_view> texts) const {
  for (std::size_t i = 0; i < texts.size(); ++i) utf8::require_valid(texts[i], fmt::format("input {}", i));
  model::TokenBatch batch;
  const std::size_t max_length = model_->config().max_length;
  for (const std::string_view text : texts) {
    const std::vector<std::uint32_t> ids = tokenizer_.encode(text);
    // The graph keeps only the first 128 tokens (ClipToMaxLength): later ones are dropped.
    batch.add(std::span(ids).first(std::min(ids.size(), max_length)));
  }
  model_->validate(batch);
  Embeddings out(texts.size(), dim());
  if (texts.empty()) return out;
  thread_local model::UseLiteWorkspace workspace;
  std::vector<float> values(texts.size() * dim());
  model_->embed(batch, workspace, pool_, values);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::copy_n(values.data() + i * dim(), dim(), out.row(i).data());
  }
  return out;
}

}  // namespace warden
