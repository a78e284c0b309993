#include "http/router.hpp"

#include <array>
#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "guard/guard.hpp"
#include "http/api_error.hpp"
#include "http/openapi.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"
#include "http/router_metrics.hpp"

namespace warden::http {

namespace {

std::string_view path_of(std::string_view target) {
  const auto q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

bool is_openai(std::string_view target) {
  return path_of(target).starts_with("/v1/");
}

enum class Access { Open, Key };  // Open: /health and /metrics answer without the API key

struct RouteEntry {
  std::string_view path;
  std::string_view method;
  Access access;
};
constexpr std::array kRoutes = {
    RouteEntry{"/health", "GET", Access::Open},     RouteEntry{"/metrics", "GET", Access::Open},
    RouteEntry{"/info", "GET", Access::Key},        RouteEntry{"/openapi.json", "GET", Access::Key},
    RouteEntry{"/embed", "POST", Access::Key},      RouteEntry{"/embed_all", "POST", Access::Key},
    RouteEntry{"/similarity", "POST", Access::Key}, RouteEntry{"/tokenize", "POST", Access::Key},
    RouteEntry{"/decode", "POST", Access::Key},     RouteEntry{"/predict", "POST", Access::Key},
    RouteEntry{"/rerank", "POST", Access::Key},     RouteEntry{"/v1/embeddings", "POST", Access::Key},
    RouteEntry{"/v1/models", "GET", Access::Key},   RouteEntry{"/v1/rerank", "POST", Access::Key},
    RouteEntry{"/guard", "POST", Access::Key},
};

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

bool is_json(std::string_view content_type) {
  std::string_view mime = content_type.substr(0, content_type.find(';'));
  while (!mime.empty() && mime.back() == ' ') mime.remove_suffix(1);
  return iequals(mime, "application/json");
}

// Compares in time that depends only on the lengths, so that a client cannot find the key
// byte by byte from response times.
bool constant_time_equals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

bool authorized(std::string_view header, std::string_view key) {
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() < kScheme.size() || !iequals(header.substr(0, kScheme.size()), kScheme)) return false;
  std::string_view token = header.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  return constant_time_equals(token, key);
}

std::string millis(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

}  // namespace

MappedError map_exception(const std::exception_ptr& e, std::string_view param) {
  try {
    std::rethrow_exception(e);
  } catch (const ApiError& err) {
    return {err.status(), err.error_type(), err.what(), err.param()};
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

Router::Impl::Impl(ServedModel served, serving::Scheduler& s, serving::WorkerPool& w,
                   serving::MetricsRegistry* m, RouterOptions o)
    : model(served),
      scheduler(s),
      workers(w),
      options(std::move(o)),
      metrics(std::make_unique<RouterMetrics>(m, s)),
      created_unix(std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count()) {
  if ((model.embedder == nullptr) == (model.classifier == nullptr)) {
    throw Error(ErrorKind::InvalidArgument, "a router serves exactly one model: an embedder or a classifier");
  }
  if (model.embedder != nullptr) {
    embed_runner = std::make_unique<serving::EmbedRunner>(*model.embedder);
    token_runner = std::make_unique<serving::TokenEmbedRunner>(*model.embedder);
  } else {
    classify_runner = std::make_unique<serving::ClassifyRunner>(*model.classifier);
  }
  if (model.guard != nullptr && model.guard->classifier() != nullptr) {
    guard_runner = std::make_unique<serving::ClassifyRunner>(*model.guard->classifier());
  }
}

Router::Impl::~Impl() = default;

const Embedder& Router::Impl::embedder(std::string_view route) const {
  if (model.embedder == nullptr) {
    throw ApiError(424, "Backend",
                   fmt::format("model {} is a {} model: {} needs an embedding model", model.classifier->id(),
                               classifier_kind_name(model.classifier->kind()), route));
  }
  return *model.embedder;
}

const SequenceClassifier& Router::Impl::classifier(std::string_view route) const {
  if (model.classifier == nullptr) {
    throw ApiError(424, "Backend",
                   fmt::format("model {} is an embedding model: {} needs a reranker or classifier model",
                               model.embedder->id(), route));
  }
  return *model.classifier;
}

std::string_view Router::Impl::model_id() const noexcept {
  return model.embedder != nullptr ? model.embedder->id() : model.classifier->id();
}

void Router::Impl::finish(Call& call, Response response) const {
  const auto load = scheduler.load();
  response.headers.emplace_back("X-Current-Concurrency", std::to_string(load.admitted_inputs));
  response.headers.emplace_back("X-Waiting-Queue-Size", std::to_string(load.waiting_jobs));
  // RFC 9110: an overloaded (429) or stopping (503) server says when to come back, so that
  // well-behaved clients back off instead of retrying at once.
  if (response.status == 429 || response.status == 503) response.headers.emplace_back("Retry-After", "1");
  const Clock::duration total = Clock::now() - call.received;
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
  call.respond(std::move(response));
}

void Router::Impl::fail(Call& call, int status, std::string_view error_type, std::string_view message,
                        std::string_view param) const {
  finish(call, error_response(call.target, status, error_type, message, param));
}

Router::Router(ServedModel model, serving::Scheduler& scheduler, serving::WorkerPool& workers,
               serving::MetricsRegistry* metrics, RouterOptions options)
    : impl_(std::make_unique<Impl>(model, scheduler, workers, metrics, std::move(options))) {}

Router::Router(const Embedder& embedder, serving::Scheduler& scheduler, serving::WorkerPool& workers,
               serving::MetricsRegistry* metrics, RouterOptions options)
    : Router(ServedModel{&embedder, nullptr}, scheduler, workers, metrics, std::move(options)) {}

Router::~Router() = default;

Response Router::error_response(std::string_view target, int status, std::string_view error_type,
                                std::string_view message, std::string_view param) {
  JsonWriter w;
  if (is_openai(target)) {
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
    } else {
      w.value(nullptr);
    }
    w.end_object().end_object();
  } else {
    w.begin_object().key("error").value(message).key("error_type").value(error_type).end_object();
  }
  return json_response(status, w.take());
}

Response Router::error(std::string_view target, int status, std::string_view error_type,
                       std::string_view message) const {
  Response r = error_response(target, status, error_type, message);
  Call call;
  call.route = "unmatched";
  for (const RouteEntry& e : kRoutes) {
    if (e.path == path_of(target)) call.route = std::string(e.path);
  }
  impl_->metrics->on_response(call, status, {});
  return r;
}

void Router::handle(const Request& request, std::shared_ptr<const Cancellation> cancelled, Respond respond) {
  auto call = std::make_shared<Call>();
  call->target = std::string(path_of(request.target));
  call->route = "unmatched";
  call->respond = std::move(respond);
  call->cancelled = std::move(cancelled);
  call->received = request.received;
  Impl& impl = *impl_;
  try {
    const std::string_view path = path_of(request.target);
    const RouteEntry* entry = nullptr;
    for (const RouteEntry& r : kRoutes) {
      if (r.path == path) entry = &r;
    }
    if (entry == nullptr) throw ApiError(404, "NotFound", fmt::format("no route {}", path));
    call->route = std::string(entry->path);
    if (request.method != entry->method) {
      throw ApiError(405, "MethodNotAllowed", fmt::format("{} accepts {} only", path, entry->method));
    }
    if (entry->access == Access::Key && !impl.options.api_key.empty() &&
        !authorized(request.authorization, impl.options.api_key)) {
      throw ApiError(401, "Unauthorized", "missing or wrong API key (send Authorization: Bearer <key>)");
    }
    if (request.method == "POST" && !is_json(request.content_type)) {
      throw ApiError(415, "UnsupportedMediaType", "Content-Type must be application/json");
    }
    if (path == "/health") return impl.finish(*call, json_response(200, "{}"));
    if (path == "/metrics") return impl.finish(*call, impl.metrics_text());
    if (path == "/info") return impl.finish(*call, impl.info());
    if (path == "/v1/models") return impl.finish(*call, impl.models());
    if (path == "/openapi.json") return impl.finish(*call, json_response(200, std::string(openapi_json())));
    if (path == "/embed") return impl.embed(call, request.body, false);
    if (path == "/embed_all") return impl.embed(call, request.body, true);
    if (path == "/v1/embeddings") return impl.openai_embed(call, request.body);
    if (path == "/similarity") return impl.similarity(call, request.body);
    if (path == "/tokenize") return impl.tokenize(call, request.body);
    if (path == "/decode") return impl.decode(call, request.body);
    if (path == "/rerank") return impl.rerank(call, request.body);
    if (path == "/v1/rerank") return impl.v1_rerank(call, request.body);
    if (path == "/predict") return impl.predict(call, request.body);
    if (path == "/guard") return impl.guard(call, request.body);
    throw ApiError(500, "Backend", fmt::format("route {} has no handler", path));
  } catch (...) {
    const MappedError e = map_exception(std::current_exception(), {});
    Response response = error_response(call->target, e.status, e.error_type, e.message, e.param);
    // RFC 9110: a 401 names the scheme it wants.
    if (e.status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer");
    impl.finish(*call, std::move(response));
  }
}

}  // namespace warden::http
