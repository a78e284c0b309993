// A route's last steps: its task (serving/tasks) ends, and what comes back becomes the
// answer here — the route's format for results, the one error map for everything else.

#include <exception>

#include "http/app.hpp"

namespace warden::http {

void App::respond_here(Call& call, const std::function<Response()>& make) const {
  try {
    finish(call, make());
  } catch (...) {
    const MappedError e = map_exception(std::current_exception(), {});
    fail(call, e.status, e.error_type, e.message, e.param);
  }
}

serving::tasks::Context App::task_context(const Call& call, std::string requested) {
  serving::tasks::Context c;
  c.model.exact = call.path_model;  // a path names its model exactly
  c.model.requested = std::move(requested);
  c.asker = call.route;
  c.cancelled = call.cancelled;
  c.cache_lookup = call.cache_lookup;
  c.cache_store = call.cache_store;
  return c;
}

void App::adopt(Call& call, serving::LeasePtr lease, const std::string& substituted,
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

void App::fail_with(Call& call, const std::exception_ptr& error) const {
  const MappedError e = map_exception(error, {});
  fail(call, e.status, e.error_type, e.message, e.param);
}

}  // namespace warden::http
