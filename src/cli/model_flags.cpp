// The model flags of the commands that load a model themselves (embed, rerank, guard): --dtype
// with the same names and `auto` rule as `warden serve --dtype`, the flag named in the error,
// and --model opened through the catalog as serve opens it.

#include <fmt/format.h>

#include "catalog/model_catalog.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"

namespace warden::cli {

Precision parse_dtype_flag(std::string_view dtype) {
  try {
    return catalog::resolve_precision(dtype);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("--dtype: {}", e.what()));
  }
}

catalog::CatalogOptions command_catalog_options(ThreadPool* pool, std::string dtype) {
  catalog::CatalogOptions o;
  o.pool = pool;
  o.hub = hub::HubOptions::from_environment();
  o.dtype = std::move(dtype);
  o.progress = [](const hub::Progress& p) {
    if (p.cached || (p.total != 0 && p.done != p.total)) return;
    fmt::print(stderr, "warden: downloaded {} ({} bytes)\n", p.file, p.done);
  };
  return o;
}

}  // namespace warden::cli
