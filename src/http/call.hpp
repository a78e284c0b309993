#pragma once
// One request being answered: what the router knows of it, what its route adds (the model
// it ran on, the run's record) and how it is answered. Internal to src/http/.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "core/cancellation.hpp"
#include "http/handler.hpp"
#include "serving/inference_job.hpp"
#include "serving/model_manager.hpp"
#include "trace/trace_context.hpp"

namespace warden::http {

using Clock = std::chrono::steady_clock;

// One request being answered. Shared by the closures that carry it across threads.
struct Call {
  std::string method;  // "POST", ...
  std::string route;   // the matched route ("/embed"), or "unmatched"
  std::string target;  // for the error format (OpenAI under /v1/)
  Respond respond;
  std::shared_ptr<const Cancellation> cancelled;
  Clock::time_point received;
  std::string path_model;  // the name in a /models/{name}/ prefix; empty without one
  // The body's `model` when no model has that name and the route's default answered
  // instead (X-Warden-Requested-Model says so); empty otherwise.
  std::string substituted;
  // The model this request runs on, held until the answer is sent: a model replaced or
  // unloaded meanwhile lives on until then.
  serving::LeasePtr lease;
  // Filled in by compute routes, for TEI's x-*-time headers and the metrics.
  bool computed = false;
  Clock::duration tokenization{};
  serving::JobTimings job;
  std::size_t tokens = 0;
  std::size_t characters = 0;
  // The result cache: Cache-Control no-cache skips lookups, no-store skips inserts. state:
  // what x-cache says ("hit", "miss", "partial"); null on routes the cache does not serve.
  bool cache_lookup = true;
  bool cache_store = true;
  const char* cache_state = nullptr;
  // Its trace, when the server exports spans (--otlp-endpoint): the trace it continues (the
  // request's traceparent) or starts, this request's server span and the caller's span.
  bool traced = false;
  trace::TraceContext trace;    // trace id, our server span's id, the sampled flag
  trace::SpanId parent_span{};  // all zeros: the request started the trace
  std::string request_id;
};

using CallPtr = std::shared_ptr<Call>;

}  // namespace warden::http
