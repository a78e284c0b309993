#include "python/opened_model.hpp"

#include "catalog/model_catalog.hpp"
#include "core/thread_pool.hpp"
#include "hub/hub.hpp"

namespace warden::python {

namespace {

catalog::CatalogOptions catalog_options(ThreadPool* pool, const ModelOptions& options) {
  catalog::CatalogOptions o;
  o.pool = pool;
  o.hub = hub::HubOptions::from_environment();
  o.dtype = options.dtype;
  o.pooling = options.pooling;
  o.rerank_template = options.rerank_template;
  return o;
}

}  // namespace

OpenedModel::OpenedModel(const ModelOptions& options, ModelKind kind, std::string_view what)
    : pool_(std::make_unique<ThreadPool>(options.threads)),
      opened_(catalog::open_model(options.source, catalog_options(pool_.get(), options), kind, what)),
      dtype_(options.dtype) {}

OpenedModel::~OpenedModel() = default;

}  // namespace warden::python
