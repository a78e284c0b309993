#include "serving/tasks/tasks.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "serving/tasks/task_error.hpp"

namespace warden::serving::tasks {

namespace {

// A failed acquire as the task's error: an unknown model, or the loader's failure (which
// keeps its kind); a load that outlasted its wait stays as it is.
std::exception_ptr load_error(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::NotFound)
      return std::make_exception_ptr(TaskError(Fault::UnknownModel, e.what(), "model"));
    return std::make_exception_ptr(TaskError(Fault::LoadFailed, e.kind(), e.what()));
  } catch (const ModelLoadTimeout&) {
    return error;
  } catch (const std::exception& e) {
    return std::make_exception_ptr(TaskError(Fault::LoadFailed, ErrorKind::Internal, e.what()));
  } catch (...) {
    return std::make_exception_ptr(TaskError(Fault::LoadFailed, ErrorKind::Internal, "unknown error"));
  }
}

}  // namespace

Tasks::Tasks(Pipeline& pipeline, Limits limits, bool strict_names, GuardSetup guard)
    : pipeline_(pipeline), limits_(limits), strict_names_(strict_names), guard_(std::move(guard)) {
  if (guard_.guard != nullptr && guard_.guard->classifier() != nullptr) {
    guard_runner_ = std::make_unique<ClassifyRunner>(*guard_.guard->classifier());
  }
}

Tasks::~Tasks() = default;

ChosenModel Tasks::choose(const ModelChoice& choice, std::initializer_list<ModelKind> kinds) const {
  return choose_model(pipeline_.models(), choice, kinds, strict_names_);
}

void Tasks::with_lease(const ModelChoice& choice, std::initializer_list<ModelKind> kinds, Leased next,
                       LeaseFailed failed) {
  ChosenModel chosen = choose(choice, kinds);
  if (chosen.name.empty()) throw TaskError(Fault::NoModel, "no model is being served");
  const std::string name = chosen.name;
  pipeline_.leases().acquire(name, [chosen = std::move(chosen), next = std::move(next),
                                    failed = std::move(failed)](LeasePtr lease, std::exception_ptr error) {
    if (error) return failed(load_error(error), nullptr, chosen);
    try {
      next(lease, chosen);
    } catch (...) {
      failed(std::current_exception(), lease, chosen);
    }
  });
}

void Tasks::lease(Context context, Then<LeasePtr> then) {
  auto deliver = [then](std::exception_ptr error, LeasePtr lease, const ChosenModel& chosen) {
    Finished<LeasePtr> f;
    f.lease = lease;
    f.substituted = chosen.substituted;
    if (error) {
      f.error = std::move(error);
    } else {
      f.value = std::move(lease);
    }
    then(f);
  };
  with_lease(
      context.model, kAnyKind,
      [deliver](LeasePtr lease, const ChosenModel& chosen) { deliver(nullptr, std::move(lease), chosen); },
      deliver);
}

const embed::Embedder& Tasks::embedder_of(const ModelLease& lease, std::string_view asker, bool dense) {
  const LoadedModel& m = lease.model();
  if (m.embedder == nullptr) {
    throw TaskError(Fault::ModelCannot,
                    fmt::format("model {} is a {} model: {} needs an embedding model", lease.spec().name,
                                classify::classifier_kind_name(m.classifier->kind()), asker));
  }
  if (dense && !m.embedder->retrieval_outputs().dense) {
    const bool multi = m.embedder->retrieval_outputs().multi;
    throw TaskError(
        Fault::ModelCannot,
        fmt::format(
            "model {} is a {} embedding model: it has no dense vectors for {}; ask {}", lease.spec().name,
            multi ? "multi-vector (ColBERT)" : "sparse (SPLADE)", asker,
            multi ? "/embed_hybrid with \"outputs\": [\"multi\"], or /rerank (gRPC: Rerank)"
                  : "/embed_sparse (or /embed_hybrid with \"outputs\": [\"sparse\"]; gRPC: EmbedSparse)"));
  }
  return *m.embedder;
}

const classify::SequenceClassifier& Tasks::classifier_of(const ModelLease& lease, std::string_view asker) {
  const LoadedModel& m = lease.model();
  if (m.classifier == nullptr) {
    throw TaskError(Fault::ModelCannot,
                    fmt::format("model {} is an embedding model: {} needs a reranker or classifier model",
                                lease.spec().name, asker));
  }
  return *m.classifier;
}

}  // namespace warden::serving::tasks
