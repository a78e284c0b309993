#include "http/service.hpp"

#include "core/error.hpp"
#include "serving/model_manager.hpp"

namespace warden::http {

namespace {

// One model the caller owns, as a manager of one pinned, preloaded model.
std::unique_ptr<serving::ModelManager> single_model_manager(const ServedModel& model,
                                                            const ServiceOptions& o) {
  if ((model.embedder == nullptr) == (model.classifier == nullptr)) {
    throw Error(ErrorKind::InvalidArgument,
                "a service serves exactly one model: an embedder or a classifier");
  }
  auto manager = std::make_unique<serving::ModelManager>(serving::ModelManagerOptions{});
  serving::ModelSpec spec;
  spec.pinned = true;
  spec.tier = o.tier;
  spec.tier_reason = o.tier_reason;
  if (model.embedder != nullptr) {
    spec.name = std::string(model.embedder->id());
    spec.semantic = model.embedder->semantic();
    // Not owned: an aliasing pointer with no owner.
    std::shared_ptr<const embed::Embedder> e(std::shared_ptr<const embed::Embedder>{}, model.embedder);
    spec.load = [e] { return serving::make_loaded_model(e, 0); };
  } else {
    spec.name = std::string(model.classifier->id());
    spec.kind = model.classifier->kind() == classify::ClassifierKind::Reranker ? ModelKind::Reranker
                                                                               : ModelKind::Classifier;
    std::shared_ptr<const classify::SequenceClassifier> c(
        std::shared_ptr<const classify::SequenceClassifier>{}, model.classifier);
    spec.load = [c] { return serving::make_loaded_model(c, 0); };
  }
  spec.source = spec.name;
  const std::string name = spec.name;
  manager->add(std::move(spec));
  manager->preload({name});
  return manager;
}

}  // namespace

Service::Service(const embed::Embedder& embedder, ServiceOptions options, serving::MetricsRegistry* metrics)
    : Service(ServedModel{&embedder, nullptr}, std::move(options), metrics) {}

Service::Service(ServedModel model, ServiceOptions options, serving::MetricsRegistry* metrics) {
  owned_models_ = single_model_manager(model, options);
  if (options.router.guard_model.empty() && model.guard != nullptr && model.embedder != nullptr) {
    options.router.guard_model = std::string(model.embedder->id());
  }
  start(*owned_models_, model.guard, std::move(options), metrics);
}

Service::Service(serving::ModelManager& models, const guard::Guard* guard, ServiceOptions options,
                 serving::MetricsRegistry* metrics) {
  start(models, guard, std::move(options), metrics);
}

void Service::start(serving::ModelManager& models, const guard::Guard* guard, ServiceOptions options,
                    serving::MetricsRegistry* metrics) {
  serving::RuntimeOptions r;
  r.scheduler = options.scheduler;
  r.workers = options.workers;
  r.cache = options.cache;
  r.limits = {options.router.max_client_batch_size, options.router.max_response_floats,
              options.router.auto_truncate};
  r.strict_model_names = options.router.strict_model_names;
  r.guard = {guard, options.router.guard_model, options.guard_pending};
  runtime_ = std::make_unique<serving::Runtime>(models, std::move(r), metrics);
  router_ = std::make_unique<Router>(runtime_->tasks(), metrics, std::move(options.router));
}

Service::~Service() {
  if (!shut_down_) shutdown(std::chrono::milliseconds(0));
  router_.reset();
  runtime_.reset();
}

void Service::shutdown(std::chrono::milliseconds grace) {
  shut_down_ = true;
  runtime_->shutdown(grace);
}

serving::Pipeline& Service::pipeline() noexcept {
  return runtime_->pipeline();
}

serving::Scheduler& Service::scheduler() noexcept {
  return runtime_->scheduler();
}

}  // namespace warden::http
