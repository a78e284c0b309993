#pragma once
// Drives an http::Handler (the router) without sockets: a request in, the Respond callback's
// answer out through a future. The request's strings live in the closure until the answer.

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>

#include "http/handler.hpp"

namespace warden::testing {

struct HandlerAnswer {
  int status = 0;
  std::string body;
  std::string content_type;
  std::map<std::string, std::string> headers;
  // A header's value, or "<absent>" (so a failed expectation shows which).
  [[nodiscard]] std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "<absent>" : it->second;
  }
};

inline std::future<HandlerAnswer> send_to(http::Handler& handler, std::string method, std::string target,
                                          std::string body = {}, std::string authorization = {},
                                          std::shared_ptr<Cancellation> cancel = nullptr,
                                          std::string cache_control = {}, std::string traceparent = {}) {
  struct State {
    std::string method, target, body, authorization, cache_control, traceparent;
    std::promise<HandlerAnswer> promise;
  };
  auto state = std::make_shared<State>();
  state->method = std::move(method);
  state->target = std::move(target);
  state->body = std::move(body);
  state->authorization = std::move(authorization);
  state->cache_control = std::move(cache_control);
  state->traceparent = std::move(traceparent);
  auto future = state->promise.get_future();
  http::Request r;
  r.method = state->method;
  r.target = state->target;
  r.content_type = "application/json";
  r.authorization = state->authorization;
  r.cache_control = state->cache_control;
  r.traceparent = state->traceparent;
  r.body = state->body;
  r.request_id = "test";
  if (!cancel) cancel = std::make_shared<Cancellation>();
  handler.handle(r, cancel, [state](http::Response response) {
    HandlerAnswer a;
    a.status = response.status;
    a.body = std::move(response.body);
    a.content_type = response.content_type;
    for (auto& [k, v] : response.headers) a.headers[k] = v;
    state->promise.set_value(std::move(a));
  });
  return future;
}

// send_to() and wait (at most 20 s; a missing answer is an empty 0-status one).
inline HandlerAnswer call_handler(http::Handler& handler, std::string method, std::string target,
                                  std::string body = {}, std::string authorization = {}) {
  auto f = send_to(handler, std::move(method), std::move(target), std::move(body), std::move(authorization));
  if (f.wait_for(std::chrono::seconds(20)) != std::future_status::ready) return {};
  return f.get();
}

}  // namespace warden::testing
