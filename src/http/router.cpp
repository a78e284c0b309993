#include "http/router.hpp"

#include <array>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <cmath>
#include <cstring>
#include <exception>
#include <vector>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "http/api_error.hpp"
#include "http/base64.hpp"
#include "http/requests.hpp"

namespace warden::http {

namespace {

std::string_view path_of(std::string_view target) {
  const auto q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

bool is_openai(std::string_view target) {
  return path_of(target).starts_with("/v1/");
}

// The routes this slice implements, and the one method each accepts. Anything else is 404
// (unknown path) or 405 (known path, other method): no route pretends to exist.
struct RouteEntry {
  std::string_view path;
  std::string_view method;
};
constexpr std::array kRoutes = {
    RouteEntry{"/health", "GET"},
    RouteEntry{"/info", "GET"},
    RouteEntry{"/embed", "POST"},
    RouteEntry{"/v1/embeddings", "POST"},
};

bool is_json(std::string_view content_type) {
  const auto semicolon = content_type.find(';');
  std::string_view mime = content_type.substr(0, semicolon);
  while (!mime.empty() && mime.back() == ' ') mime.remove_suffix(1);
  if (mime.size() != 16) return false;
  constexpr std::string_view kJson = "application/json";
  for (std::size_t i = 0; i < mime.size(); ++i) {
    const char c = (mime[i] >= 'A' && mime[i] <= 'Z') ? static_cast<char>(mime[i] - 'A' + 'a') : mime[i];
    if (c != kJson[i]) return false;
  }
  return true;
}

// Runs the embedder, mapping its input errors (invalid UTF-8 in a text) to 422.
Embeddings embed_texts(const Embedder& embedder, const std::vector<Input>& inputs) {
  std::vector<std::string_view> views;
  for (const Input& in : inputs) {
    if (in.is_ids)
      throw ApiError(422, "Validation", "token ids are not supported by this route yet", "input");
    views.emplace_back(in.text);
  }
  try {
    return embedder.embed(views);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::InvalidInput || e.kind() == ErrorKind::InvalidArgument) {
      throw ApiError(422, "Validation", e.what(), "input");
    }
    throw ApiError(500, "Backend", e.what());
  }
}

void l2_normalize(std::span<float> v) {
  double sum = 0.0;
  for (const float x : v) sum += static_cast<double>(x) * static_cast<double>(x);
  if (sum == 0.0) return;
  const auto inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (float& x : v) x *= inv;
}

}  // namespace

// One compute thread, in arrival order: the embedders are not safe to call concurrently.
// (The scheduler of issue 6 replaces this with dynamic batching.)
class SerialExecutor {
 public:
  SerialExecutor() : thread_([this] { loop(); }) {}
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;
  ~SerialExecutor() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void post(std::function<void()> task) {
    {
      const std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping, and nothing left to finish
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

Router::Router(const Embedder& embedder) : embedder_(embedder), compute_(std::make_unique<SerialExecutor>()) {}
Router::~Router() = default;

void Router::handle(const Request& request, std::shared_ptr<const Cancellation> /*cancelled*/, Respond respond) {
  if (!is_compute(request.method, request.target)) {
    respond(handle_now(request));
    return;
  }
  // The request's views stay valid until respond() is called, which happens on the
  // compute thread after the route has run.
  compute_->post([this, request, respond = std::move(respond)] { respond(handle_now(request)); });
}

bool Router::is_compute(std::string_view method, std::string_view target) noexcept {
  const std::string_view path = path_of(target);
  return method == "POST" && (path == "/embed" || path == "/v1/embeddings");
}

Response Router::error_response(std::string_view target, int status, std::string_view error_type,
                       std::string_view message, std::string_view param) {
  JsonWriter w;
  if (is_openai(target)) {
    // OpenAI's error object; its `type` for a client mistake is invalid_request_error.
    w.begin_object().key("error").begin_object();
    w.key("message").value(message);
    w.key("type").value(status >= 500 ? "server_error" : "invalid_request_error");
    w.key("param");
    if (param.empty()) {
      w.value(nullptr);
    } else {
      w.value(param);
    }
    w.key("code").value(nullptr);
    w.end_object().end_object();
  } else {
    w.begin_object().key("error").value(message).key("error_type").value(error_type).end_object();
  }
  return json_response(status, w.take());
}

Response Router::handle_now(const Request& request) const noexcept {
  try {
    return route(request);
  } catch (const ApiError& e) {
    return error_response(request.target, e.status(), e.error_type(), e.what(), e.param());
  } catch (const std::exception& e) {
    return error_response(request.target, 500, "Backend", e.what());
  } catch (...) {
    return error_response(request.target, 500, "Backend", "unknown error");
  }
}

Response Router::route(const Request& request) const {
  const std::string_view path = path_of(request.target);
  const RouteEntry* entry = nullptr;
  for (const RouteEntry& r : kRoutes) {
    if (r.path == path) entry = &r;
  }
  if (entry == nullptr) throw ApiError(404, "NotFound", "no route " + std::string(path));
  if (request.method != entry->method) {
    throw ApiError(405, "MethodNotAllowed",
                   std::string(path) + " accepts " + std::string(entry->method) + " only");
  }
  if (request.method == "POST" && !is_json(request.content_type)) {
    throw ApiError(415, "UnsupportedMediaType", "Content-Type must be application/json");
  }
  if (path == "/health") return json_response(200, "{}");
  if (path == "/info") return info();
  if (path == "/embed") return tei_embed(request.body);
  return openai_embed(request.body);
}

Response Router::info() const {
  JsonWriter w;
  w.begin_object();
  w.key("model_id").value(embedder_.id());
  w.key("model_type").value("embedding");
  w.key("dim").value(static_cast<std::uint64_t>(embedder_.dim()));
  w.key("semantic").value(embedder_.semantic());
  w.key("version").value("0.1.0");
  w.end_object();
  return json_response(200, w.take());
}

Response Router::tei_embed(std::string_view body) const {
  const EmbedRequest request = parse_tei_embed(body);
  Embeddings embeddings = embed_texts(embedder_, request.inputs);
  JsonWriter w;
  w.begin_array();
  for (std::size_t i = 0; i < embeddings.rows(); ++i) {
    // The embedders already L2-normalise; doing it again here makes normalize=true a
    // guarantee of this route rather than a property of whichever embedder is loaded.
    if (request.normalize) l2_normalize(embeddings.row(i));
    w.begin_array();
    for (const float x : embeddings.row(i)) w.value(x);
    w.end_array();
  }
  w.end_array();
  return json_response(200, w.take());
}

Response Router::openai_embed(std::string_view body) const {
  const OpenAiEmbedRequest request = parse_openai_embed(body);
  const Embeddings embeddings = embed_texts(embedder_, request.input);
  JsonWriter w;
  w.begin_object().key("object").value("list").key("data").begin_array();
  for (std::size_t i = 0; i < embeddings.rows(); ++i) {
    w.begin_object().key("object").value("embedding").key("embedding");
    const std::span<const float> row = embeddings.row(i);
    if (request.base64) {
      w.value(base64_floats(row));
    } else {
      w.begin_array();
      for (const float x : row) w.value(x);
      w.end_array();
    }
    w.key("index").value(static_cast<std::uint64_t>(i)).end_object();
  }
  w.end_array();
  // One model per process in this slice: the response names the model that answered.
  w.key("model").value(embedder_.id());
  // The Embedder interface does not report token counts yet, so usage is 0 rather than an
  // invented number (docs/api.md).
  w.key("usage").begin_object().key("prompt_tokens").value(0).key("total_tokens").value(0).end_object();
  w.end_object();
  return json_response(200, w.take());
}

}  // namespace warden::http
