#include "embed/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "embed/hashing_embedder.hpp"

namespace warden {

std::vector<std::string> builtin_embedder_names() {
  return {std::string(HashingEmbedder::kId)};
}

std::unique_ptr<Embedder> make_builtin_embedder(std::string_view name) {
  if (name == HashingEmbedder::kId) return std::make_unique<HashingEmbedder>();
  throw Error(ErrorKind::NotFound, fmt::format("unknown model '{}'; available: {}", name,
                                               fmt::join(builtin_embedder_names(), ", ")));
}

std::string_view default_embedder_name() noexcept {
  return HashingEmbedder::kId;
}

}  // namespace warden
