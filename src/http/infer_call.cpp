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
