// A compute route's last steps: its request goes through the transport-neutral pipeline
// (serving/pipeline.hpp), and what comes back becomes the answer here — the route's format
// for results, the one error map for everything else.

#include <exception>

#include "http/router_impl.hpp"

namespace warden::http {

std::string Router::Impl::cache_prefix(const Call& call, std::string_view kind, const InputOptions& o) {
  return serving::Pipeline::cache_prefix(*call.lease, kind, o);
}

void Router::Impl::respond_here(Call& call, const std::function<Response()>& make) const {
  try {
    finish(call, make());
  } catch (...) {
    const MappedError e = map_exception(std::current_exception(), {});
    fail(call, e.status, e.error_type, e.message, e.param);
  }
}

serving::tasks::Context Router::Impl::task_context(const Call& call, std::string requested) {
  serving::tasks::Context c;
  c.model.exact = call.path_model;  // a path names its model exactly
  c.model.requested = std::move(requested);
  c.asker = call.route;
  c.cancelled = call.cancelled;
  c.cache_lookup = call.cache_lookup;
  c.cache_store = call.cache_store;
  return c;
}

void Router::Impl::adopt(Call& call, serving::LeasePtr lease, const std::string& substituted,
                         const serving::Inference* run) {
  if (lease != nullptr) call.lease = std::move(lease);
  call.substituted = substituted;
  if (run == nullptr) return;
  call.tokenization = run->tokenization;
  call.job = run->job;
  call.tokens = run->total_tokens;
  // Timing headers describe computed work only; a refused request carries none.
  call.computed = run->computed;
  call.cache_state = serving::cache_use_name(run->cache);
}

void Router::Impl::fail_with(Call& call, const std::exception_ptr& error) const {
  const MappedError e = map_exception(error, {});
  fail(call, e.status, e.error_type, e.message, e.param);
}

void Router::Impl::infer(std::shared_ptr<Call> call, serving::InferenceRequest request, Format format) {
  infer_then(call, std::move(request), [this, call, format = std::move(format)](serving::Inference& done) {
    respond_here(*call, [&] { return format(done); });
  });
}

void Router::Impl::infer_then(std::shared_ptr<Call> call, serving::InferenceRequest request, Next next) {
  request.cancelled = call->cancelled;
  request.cache_lookup = call->cache_lookup;
  request.cache_store = call->cache_store;
  pipeline.run(std::move(request), [this, call, next = std::move(next)](serving::Inference& done) {
    Call& c = *call;
    c.tokenization = done.tokenization;
    c.job = done.job;
    c.tokens = done.total_tokens;
    // Timing headers describe computed work only; a refused request carries none.
    c.computed = done.computed;
    c.cache_state = serving::cache_use_name(done.cache);
    if (done.outcome != serving::Outcome::Done) {
      const MappedError e = map_exception(done.error, {});
      return fail(c, e.status, e.error_type, e.message, e.param);
    }
    try {
      next(done);
    } catch (...) {
      const MappedError e = map_exception(std::current_exception(), {});
      fail(c, e.status, e.error_type, e.message, e.param);
    }
  });
}

}  // namespace warden::http
