#pragma once
// Built-in embedders by name. The model manager (a later layer) extends this with model
// directories; here live the embedders that need no files.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.hpp"

namespace warden {

// Names accepted by make_builtin_embedder, in a stable order.
std::vector<std::string> builtin_embedder_names();

// Throws Error(NotFound) listing the available names when `name` is not one of them.
std::unique_ptr<Embedder> make_builtin_embedder(std::string_view name);

// The embedder used when the user names none.
std::string_view default_embedder_name() noexcept;

}  // namespace warden
