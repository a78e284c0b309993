// The --dtype flag of the commands that load a model themselves (embed, rerank): the same
// names and `auto` rule as `warden serve --dtype`, with the flag named in the error.

#include <fmt/format.h>

#include "catalog/model_catalog.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"

namespace warden::cli {

kernels::Precision parse_dtype_flag(std::string_view dtype) {
  try {
    return catalog::resolve_precision(dtype);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("--dtype: {}", e.what()));
  }
}

}  // namespace warden::cli
