#pragma once
// Built-in embedders by name. The model manager (a later layer) extends this with model
// directories; here live the embedders Warden knows without being given a folder: the
// hashing fallback (no files) and use-lite (the folder scripts/fetch-use-lite makes).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/precision.hpp"
#include "embed/embedder.hpp"

namespace warden {
class ThreadPool;
}  // namespace warden

namespace warden::embed {

// Names accepted by make_builtin_embedder, in a stable order.
std::vector<std::string> builtin_embedder_names();

// Throws Error(NotFound) listing the available names when `name` is not one of them, and
// Error(NotFound) naming the folder when use-lite is asked for but was never converted.
// `pool` (not owned, may be null) runs the neural ones, in `precision` (the hashing
// embedder has no weights and ignores it).
std::unique_ptr<Embedder> make_builtin_embedder(std::string_view name, ThreadPool* pool = nullptr,
                                                Precision precision = Precision::Float32);

// The embedder used when the user names none: use-lite when its converted folder exists
// (use_lite_model_dir()), else hashing-ngram-256, in which case `fallback_reason` says
// why (for a warning: the fallback is lexical only and must never be silent).
struct DefaultEmbedder {
  std::string name;
  std::string fallback_reason;  // empty when the semantic default is available
};
DefaultEmbedder default_embedder();

}  // namespace warden::embed
