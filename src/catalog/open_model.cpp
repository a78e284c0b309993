#include "catalog/open_model.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::catalog {

OpenModel open_model(std::string_view source, const CatalogOptions& options, ModelKind kind,
                     std::string_view command) {
  CatalogOptions o = options;
  o.on_error = OnModelError::Exit;
  OpenModel m;
  if (source.empty()) {
    m.model = default_model(o);
    m.fallback_reason = m.model.spec.tier_reason;
  } else {
    m.model = make_model_spec(ModelArg{{}, std::string(source), {}}, o);
  }
  const bool wants_embedder = kind == ModelKind::Embedding;
  const bool is_embedder = m.model.spec.kind == ModelKind::Embedding;
  if (wants_embedder != is_embedder) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("warden {} needs {} model; {} is a {} model", command,
                            wants_embedder ? "an embedding" : "a reranker or classifier", m.model.spec.name,
                            model_kind_name(m.model.spec.kind)));
  }
  m.loaded = m.model.spec.load();
  return m;
}

std::string model_identity(const OpenModel& m) {
  const std::string& tier = m.model.spec.tier;
  if ((tier == "model-dir" || tier == "hub") && !m.model.dir.empty()) {
    return std::filesystem::absolute(m.model.dir).lexically_normal().string();
  }
  return m.model.spec.name;
}

}  // namespace warden::catalog
