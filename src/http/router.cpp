#include "http/router.hpp"

#include <array>
#include <chrono>
#include <exception>
#include <random>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "guard/guard.hpp"
#include "http/api_error.hpp"
#include "http/app.hpp"
#include "http/request_spans.hpp"
#include "http/router_metrics.hpp"
#include "http/routes.hpp"
#include "serving/api_key.hpp"
#include "serving/model_name.hpp"
#include "serving/tasks/task_error.hpp"
#include "trace/span_exporter.hpp"

namespace warden::http {

namespace {

std::string_view path_of(std::string_view target) {
  const auto q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX escapes decoded (clients may send ORG%2FNAME for a name with a slash); anything
// else, a malformed escape included, is kept as it is.
std::string percent_decoded(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// A model name from a path (/models/{name}/..., /admin/models/{name}): percent-decoded the
// same way everywhere, and refused (404: no model can have it) when it could not be a name,
// before any message repeats it.
std::string path_model_name(std::string_view raw) {
  std::string name = percent_decoded(raw);
  if (const std::string problem = serving::lookup_name_problem(name); !problem.empty()) {
    throw ApiError(404, "NotFound", fmt::format("no such model: {}", problem), "model");
  }
  return name;
}

// Splits /models/{name}/{route} (the name may contain '/', as HF ids do) into name and
// route, trying each model-scoped route as the suffix; false when the path is not of that shape.
bool split_model_path(std::string_view path, std::string& name, std::string_view& route) {
  constexpr std::string_view kPrefix = "/models/";
  if (!path.starts_with(kPrefix)) return false;
  // The name ends at a '/': the route keeps it ("/models/x/" is POST / on x).
  const std::string_view rest = path.substr(kPrefix.size() - 1);
  // The longest route that ends the path: /models/x/v1/rerank is /v1/rerank on x, not
  // /rerank on "x/v1".
  const Route* best = nullptr;
  for (const Route& r : routes()) {
    if (!r.model_scoped || rest.size() <= r.path.size() + 1 || !rest.ends_with(r.path)) continue;
    if (best == nullptr || r.path.size() > best->path.size()) best = &r;
  }
  if (best == nullptr) {
    // /models/{name} alone is POST / on that model: the base URL that clients such as
    // @huggingface/inference's endpoint() are given.
    if (rest.size() < 2 || rest.ends_with('/')) return false;
    name = path_model_name(rest.substr(1));
    route = "/";
    return true;
  }
  name = path_model_name(rest.substr(1, rest.size() - 1 - best->path.size()));
  route = best->path;
  return true;
}

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// application/json, with no charset or UTF-8's (RFC 8259 §8.1: JSON between systems is
// UTF-8; a body declared in another charset would be read as what it is not).
bool is_json(std::string_view content_type) {
  const std::size_t semicolon = content_type.find(';');
  if (!iequals(trim(content_type.substr(0, semicolon)), "application/json")) return false;
  std::string_view params = semicolon == std::string_view::npos ? "" : content_type.substr(semicolon + 1);
  while (!params.empty()) {
    const std::size_t next = params.find(';');
    const std::string_view param = params.substr(0, next);
    const std::size_t eq = param.find('=');
    if (eq != std::string_view::npos && iequals(trim(param.substr(0, eq)), "charset")) {
      std::string_view value = trim(param.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
      if (!iequals(value, "utf-8") && !iequals(value, "utf8")) return false;
    }
    if (next == std::string_view::npos) break;
    params.remove_prefix(next + 1);
  }
  return true;
}

// Whether a comma-separated header value (Cache-Control) lists `token`, in any case.
bool has_directive(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    item = item.substr(0, item.find('='));
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (iequals(item, token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::string millis(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

}  // namespace

std::string response_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::uint64_t a = rng();
  const std::uint64_t b = rng();
  // Version 4, variant 1, as RFC 9562 lays a random UUID out.
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xFFFFU, a & 0xFFFU,
                     0x8000U | ((b >> 48) & 0x3FFFU), b & 0xFFFFFFFFFFFFULL);
}

MappedError map_exception(const std::exception_ptr& e, std::string_view param) {
  try {
    std::rethrow_exception(e);
  } catch (const ApiError& err) {
    return {err.status(), err.error_type(), err.what(), err.param()};
  } catch (const serving::tasks::TaskError& err) {
    using serving::tasks::Fault;
    switch (err.fault()) {
      case Fault::Empty:
        return {400, "Empty", err.what(), err.param()};
      case Fault::Invalid:
        return {422, "Validation", err.what(), err.param()};
      case Fault::Untokenizable:
        return {422, "Tokenizer", err.what(), err.param()};
      case Fault::TooLarge:
        return {413, "Validation", err.what(), err.param()};
      case Fault::ModelCannot:
        return {424, "Backend", err.what(), err.param()};
      case Fault::NoModel:
        return {503, "Unhealthy", err.what(), err.param()};
      case Fault::UnknownModel:
        // OpenAI's 404 model_not_found.
        return {404, "NotFound", err.what(), err.param()};
      case Fault::LoadFailed:
        return {500, "Backend", fmt::format("the model failed to load: {}", err.what()), err.param()};
    }
    return {500, "Backend", err.what(), err.param()};
  } catch (const serving::NotComputed& err) {
    switch (err.outcome()) {
      case serving::Outcome::Rejected:
        return {429, "Overloaded", err.what(), {}};
      case serving::Outcome::TimedOut:
        return {504, "Overloaded", err.what(), {}};
      case serving::Outcome::Cancelled:
        return {499, "Cancelled", err.what(), {}};
      default:
        return {503, "Unhealthy", err.what(), {}};
    }
  } catch (const serving::ModelLoadTimeout& err) {
    return {503, "Unhealthy", err.what(), {}};
  } catch (const Error& err) {
    switch (err.kind()) {
      case ErrorKind::InvalidInput:
      case ErrorKind::InvalidArgument:
        return {422, "Validation", err.what(), std::string(param)};
      case ErrorKind::Unsupported:
        return {424, "Backend", err.what(), {}};
      default:
        return {500, "Backend", err.what(), {}};
    }
  } catch (const std::exception& err) {
    return {500, "Backend", err.what(), {}};
  } catch (...) {
    return {500, "Backend", "unknown error", {}};
  }
}

App::App(serving::tasks::Tasks& t, serving::MetricsRegistry* reg, RouterOptions o)
    : pipeline(t.pipeline()),
      models(pipeline.models()),
      scheduler(pipeline.scheduler()),
      options(std::move(o)),
      tasks(t),
      metrics(std::make_unique<RouterMetrics>(reg)),
      created_unix(std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count()) {}

App::~App() {
  pipeline.leases().settle();
  const std::lock_guard lock(admin_mutex);
  admin_tasks.clear();  // joins
}

void App::finish(Call& call, Response response) const {
  const auto load = scheduler.load();
  response.headers.emplace_back("X-Current-Concurrency", std::to_string(load.admitted_inputs));
  response.headers.emplace_back("X-Waiting-Queue-Size", std::to_string(load.waiting_jobs));
  // RFC 9110: an overloaded (429) or stopping (503) server says when to come back, so that
  // well-behaved clients back off instead of retrying at once.
  if (response.status == 429 || response.status == 503) response.headers.emplace_back("Retry-After", "1");
  const Clock::duration total = Clock::now() - call.received;
  if (call.lease != nullptr) {
    // Which model answered, and whether it judges meaning: a stand-in hashing embedder
    // (--on-model-error fallback) must never pass for the model that was asked for.
    const serving::ModelSpec& spec = call.lease->spec();
    response.headers.emplace_back("X-Warden-Model", spec.name);
    if (!call.substituted.empty())
      response.headers.emplace_back("X-Warden-Requested-Model", call.substituted);
    response.headers.emplace_back("X-Warden-Semantic", spec.semantic ? "true" : "false");
    if (!spec.fallback_reason.empty())
      response.headers.emplace_back("X-Warden-Fallback", "hashing-ngram-256");
  }
  if (call.cache_state != nullptr && response.status == 200) {
    response.headers.emplace_back("x-cache", call.cache_state);
  }
  if (call.computed) {
    // TEI's timing headers, in milliseconds. compute = tokenization + queue + inference.
    const Clock::duration compute = call.tokenization + call.job.queue + call.job.inference;
    response.headers.emplace_back("x-compute-time", millis(compute));
    response.headers.emplace_back("x-compute-characters", std::to_string(call.characters));
    response.headers.emplace_back("x-compute-tokens", std::to_string(call.tokens));
    response.headers.emplace_back("x-total-time", millis(total));
    response.headers.emplace_back("x-tokenization-time", millis(call.tokenization));
    response.headers.emplace_back("x-queue-time", millis(call.job.queue));
    response.headers.emplace_back("x-inference-time", millis(call.job.inference));
  }
  metrics->on_response(call, response.status, total);
  if (call.traced) {
    // Our server span's context goes back to the caller (its child in their trace).
    response.headers.emplace_back("traceparent", trace::format_traceparent(call.trace));
    if (call.trace.sampled())
      options.tracer->submit(request_spans(call, call.method, response.status, Clock::now()));
  }
  call.respond(std::move(response));
}

void App::fail(Call& call, int status, std::string_view error_type, std::string_view message,
               std::string_view param) const {
  finish(call, Router::error_response(call.target, status, error_type, message, param));
}

Router::Router(serving::tasks::Tasks& tasks, serving::MetricsRegistry* metrics, RouterOptions options)
    : app_(std::make_unique<App>(tasks, metrics, std::move(options))) {}

Router::~Router() = default;

Response Router::error_response(std::string_view target, int status, std::string_view error_type,
                                std::string_view message, std::string_view param) {
  JsonWriter w;
  if (dialect_of(path_of(target)) == Dialect::OpenAi) {
    // OpenAI's error object.
    std::string_view type = "invalid_request_error";
    if (status >= 500) type = "server_error";
    if (status == 401) type = "authentication_error";
    if (status == 429) type = "rate_limit_error";
    w.begin_object().key("error").begin_object();
    w.key("message").value(message);
    w.key("type").value(type);
    w.key("param");
    if (param.empty()) {
      w.value(nullptr);
    } else {
      w.value(param);
    }
    w.key("code");
    if (status == 401) {
      w.value("invalid_api_key");
    } else if (status == 429) {
      w.value("rate_limit_exceeded");
    } else if (status == 404 && param == "model") {
      w.value("model_not_found");
    } else {
      w.value(nullptr);
    }
    w.end_object().end_object();
  } else {
    w.begin_object().key("error").value(message).key("error_type").value(error_type).end_object();
  }
  return json_response(status, w.take());
}

namespace {

// What the route table says of a request: the route for its method (HEAD counts as GET),
// else the methods the path allows; `label` names the path's route for the metrics
// ("unmatched" when no route has the path).
struct RouteMatch {
  const Route* route = nullptr;
  std::string param;    // the raw {...} segment
  std::string allowed;  // with no route for the method: the methods there are
  std::string label = "unmatched";
};

RouteMatch match_route(std::string_view path, std::string_view method) {
  RouteMatch m;
  for (const Route& r : routes()) {
    std::string_view p;
    if (!path_matches(r, path, p)) continue;
    const bool exact = r.path.find('{') == std::string_view::npos;
    if (m.label == "unmatched" || exact) m.label = std::string(r.path);
    if (r.method == method || (method == "HEAD" && r.method == "GET")) {
      // An exact path wins over a pattern that also matches it.
      if (m.route == nullptr || exact) {
        m.route = &r;
        m.param = std::string(p);
      }
    } else if (m.allowed.find(r.method) == std::string::npos) {
      m.allowed += m.allowed.empty() ? r.method : ", " + std::string(r.method);
    }
  }
  return m;
}

}  // namespace

Response Router::error(std::string_view target, int status, std::string_view error_type,
                       std::string_view message) const {
  Response r = error_response(target, status, error_type, message);
  Call call;
  call.route = match_route(path_of(target), {}).label;
  app_->metrics->on_response(call, status, {});
  return r;
}

void Router::handle(const Request& request, std::shared_ptr<const Cancellation> cancelled, Respond respond) {
  auto call = std::make_shared<Call>();
  call->target = std::string(path_of(request.target));
  call->route = "unmatched";
  call->respond = std::move(respond);
  call->cancelled = std::move(cancelled);
  call->received = request.received;
  call->method = std::string(request.method);
  if (app_->options.tracer != nullptr) {
    // W3C Trace Context: continue the caller's trace (and its sampling decision), or start
    // one — sampled: every request is traced when an endpoint is set.
    call->traced = true;
    call->request_id = std::string(request.request_id);
    if (const auto parent = trace::parse_traceparent(request.traceparent)) {
      call->trace = *parent;
      call->parent_span = parent->span_id;
    } else {
      call->trace.trace_id = trace::new_trace_id();
      call->trace.flags = 1;
    }
    call->trace.span_id = trace::new_span_id();
  }
  // A client may bypass the result cache: no-cache computes afresh (and stores), no-store
  // does not store what it computed.
  call->cache_lookup = !has_directive(request.cache_control, "no-cache");
  call->cache_store = !has_directive(request.cache_control, "no-store");
  App& app = *app_;
  try {
    std::string_view path = path_of(request.target);
    std::string_view scoped_route;
    if (split_model_path(path, call->path_model, scoped_route)) {
      path = scoped_route;
      call->target = std::string(scoped_route);  // errors in the route's format (OpenAI under /v1/)
    }
    RouteMatch match = match_route(path, request.method);
    call->route = std::move(match.label);
    // Probes and scrapes every few seconds would bury the requests in spans.
    if (call->route == "/health" || call->route == "/live" || call->route == "/metrics") call->traced = false;
    const Route* route = match.route;
    if (route == nullptr && match.allowed.empty())
      throw ApiError(404, "NotFound", fmt::format("no route {}", path));
    if (route == nullptr) {
      throw ApiError(405, "MethodNotAllowed", fmt::format("{} accepts {} only", path, match.allowed));
    }
    const std::string& key = app.options.api_key;
    switch (route->access) {
      case Access::Open:
        break;
      case Access::Admin:
        // Changing what the server runs is for its operator only: the API key is required,
        // and without one configured the admin routes stay closed.
        if (key.empty()) {
          throw ApiError(403, "Forbidden", "the admin routes are disabled: start the server with --api-key");
        }
        [[fallthrough]];
      case Access::Metrics:
      case Access::Key:
        if (route->access == Access::Metrics && app.options.public_metrics) break;
        if (!key.empty() && !serving::bearer_authorized(request.authorization, key)) {
          throw ApiError(401, "Unauthorized", "missing or wrong API key (send Authorization: Bearer <key>)");
        }
        break;
    }
    if (request.method == "POST" && !is_json(request.content_type)) {
      throw ApiError(415, "UnsupportedMediaType", "Content-Type must be application/json (charset UTF-8)");
    }
    RouteArgs args{request.body, match.param.empty() ? std::string() : path_model_name(match.param)};
    route->handler(app, call, args);
  } catch (...) {
    const MappedError e = map_exception(std::current_exception(), {});
    Response response = error_response(call->target, e.status, e.error_type, e.message, e.param);
    // RFC 9110: a 401 names the scheme it wants.
    if (e.status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer");
    app.finish(*call, std::move(response));
  }
}

}  // namespace warden::http
