#pragma once
// What every route handler (`<family>_routes.hpp`) may use: the tasks (serving/tasks, one API
// with gRPC), the server's options, models and metrics, and the answering of a call — a
// task's end as its answer, the one error map, the headers every answer carries. Internal to
// src/http/.

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/utf8.hpp"
#include "http/call.hpp"
#include "http/router.hpp"
#include "serving/model_manager.hpp"
#include "serving/pipeline.hpp"
#include "serving/scheduler.hpp"
#include "serving/tasks/tasks.hpp"

namespace warden::http {

// A fresh id for an answer that carries one (Cohere's `id`): 128 random bits as a UUID.
std::string response_id();

// TEI's x-compute-characters counts code points.
using utf8::code_points;

struct RouterMetrics;

struct App {
  App(serving::tasks::Tasks& tasks, serving::MetricsRegistry* m, RouterOptions o);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  serving::Pipeline& pipeline;
  serving::ModelManager& models;
  serving::Scheduler& scheduler;
  RouterOptions options;
  // What the routes ask of the models: the runtime's, shared with gRPC (serving/tasks/tasks.hpp).
  serving::tasks::Tasks& tasks;
  std::unique_ptr<RouterMetrics> metrics;
  std::int64_t created_unix = 0;  // /v1/models' "created"
  // POST /admin/models runs the spec factory (which may download) on threads of its own;
  // joined when the router goes.
  struct AdminTask {
    std::shared_ptr<std::atomic<bool>> done;  // set when the task has answered
    std::jthread thread;
  };
  std::mutex admin_mutex;
  std::vector<AdminTask> admin_tasks;

  // The task context of a call whose body names `requested` (its `model`).
  [[nodiscard]] static serving::tasks::Context task_context(const Call& call, std::string requested);
  // A task's end as the call's answer: the lease, the substitution and the run's record go
  // on the call (headers, metrics); a result becomes `format`'s response (on a worker), an
  // error its mapped answer.
  template <class R>
  serving::tasks::Then<R> answer(std::shared_ptr<Call> call, std::function<Response(R&)> format) {
    return then_call<R>(call, [this, call, format = std::move(format)](R& value) {
      respond_here(*call, [&] { return format(value); });
    });
  }
  // The same, but `next` answers the call itself, now or through a job of its own (a rerank's
  // guard); what it throws is mapped to the call's error.
  template <class R>
  serving::tasks::Then<R> then_call(std::shared_ptr<Call> call, std::function<void(R&)> next) {
    return [this, call, next = std::move(next)](serving::tasks::Finished<R>& f) {
      adopt(*call, f.lease, f.substituted, f.run);
      if (f.error) return fail_with(*call, f.error);
      try {
        next(*f.value);
      } catch (...) {
        fail_with(*call, std::current_exception());
      }
    };
  }
  // What a task's end tells the call (answer).
  static void adopt(Call& call, serving::LeasePtr lease, const std::string& substituted,
                    const serving::Inference* run);
  // Answers the call with `error`'s mapped status and body.
  void fail_with(Call& call, const std::exception_ptr& error) const;

  // Sends the answer: adds the load and timing headers, records metrics, responds.
  void finish(Call& call, Response response) const;
  void fail(Call& call, int status, std::string_view error_type, std::string_view message,
            std::string_view param = {}) const;

  // Builds the answer on this thread, mapping what `make` throws.
  void respond_here(Call& call, const std::function<Response()>& make) const;
};

// The one map from an error to its answer: an ApiError's own status, a task's refusal by its
// fault (serving/tasks/task_error.hpp), a warden::Error by its kind, a request the pipeline did not compute
// (serving::NotComputed) by its outcome, a model load that outlasted its wait 503, anything else 500.
struct MappedError {
  int status;
  std::string error_type;
  std::string message;
  std::string param;
};
MappedError map_exception(const std::exception_ptr& e, std::string_view param);

}  // namespace warden::http
