// The operator's routes (API key required, closed without one; see Router::handle):
//   GET    /admin/models         every model: state, memory, loads, requests in flight
//   POST   /admin/models         {"model": source, "name"?: alias}: load it, or replace the
//                                model of that name (hot swap; requests in flight finish on
//                                the old one); answers when the new one is loaded
//   DELETE /admin/models/{name}  stop serving a model (requests in flight finish on it)

#include <atomic>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/precision.hpp"
#include "http/admin_routes.hpp"
#include "http/api_error.hpp"
#include "serving/model_name.hpp"

namespace warden::http {

// The body.

using namespace body;

AdminModelRequest parse_admin_model(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  AdminModelRequest request;
  request.source = required_string(obj, "model");
  request.name = optional_string(obj, "name").value_or("");
  if (request.source.size() > 200) throw validation("`model` is longer than 200 bytes", "model");
  for (const char c : request.source) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      throw validation("`model` contains a control character", "model");
    }
  }
  if (request.source.empty()) throw validation("`model` cannot be empty", "model");
  if (!request.name.empty() && !serving::is_valid_alias(request.name)) {
    throw validation(fmt::format("`name` must be {}", serving::kAliasRule), "name");
  }
  request.dtype = optional_string(obj, "dtype").value_or("");
  if (!request.dtype.empty() && request.dtype != "auto" && !parse_precision(request.dtype)) {
    throw validation("`dtype` must be one of float32, bfloat16, int8, auto", "dtype");
  }
  return request;
}

namespace {

void write_status(JsonWriter& w, const serving::ModelStatus& st) {
  w.begin_object();
  w.key("name").value(st.name);
  w.key("source").value(st.source);
  w.key("kind").value(model_kind_name(st.kind));
  w.key("semantic").value(st.semantic);
  w.key("pinned").value(st.pinned);
  if (!st.dtype.empty()) w.key("dtype").value(st.dtype);
  if (!st.architecture.empty()) w.key("architecture").value(st.architecture);
  w.key("state").value(serving::model_state_name(st.state));
  w.key("resident_bytes").value(static_cast<std::uint64_t>(st.resident_bytes));
  w.key("in_flight").value(static_cast<std::uint64_t>(st.in_flight));
  w.key("loads").value(static_cast<std::uint64_t>(st.loads));
  w.key("hits").value(static_cast<std::uint64_t>(st.hits));
  w.key("last_used_unix_ms").value(st.last_used_unix_ms);
  if (!st.fallback_reason.empty()) w.key("fallback_reason").value(st.fallback_reason);
  if (!st.last_error.empty()) w.key("last_error").value(st.last_error);
  w.end_object();
}

// Loads triggered from the API at once, at most: each holds a thread and, while it
// downloads, a connection to the hub.
constexpr std::size_t kMaxAdminLoads = 4;

}  // namespace

void admin_list(App& app, std::shared_ptr<Call> call) {
  JsonWriter w;
  w.begin_object().key("models").begin_array();
  for (const serving::ModelStatus& st : app.models.list()) write_status(w, st);
  w.end_array();
  w.key("resident_bytes").value(static_cast<std::uint64_t>(app.models.resident_bytes()));
  w.end_object();
  app.finish(*call, json_response(200, w.take()));
}

void admin_remove(App& app, std::shared_ptr<Call> call, const std::string& n) {
  if (n == app.options.guard_model && app.tasks.has_guard()) {
    throw ApiError(409, "Conflict", fmt::format("model {} is the guard's model and cannot be removed", n));
  }
  if (!app.models.remove(n)) {
    throw ApiError(404, "NotFound", fmt::format("model '{}' is not served", n), "name");
  }
  JsonWriter w;
  w.begin_object().key("removed").value(n).end_object();
  app.finish(*call, json_response(200, w.take()));
}

void admin_put(App& app, std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<AdminModelRequest>(parse_admin_model(body));
  if (!app.options.make_spec)
    throw ApiError(501, "NotImplemented", "this server cannot load models at run time");
  if (!request->name.empty() && request->name == app.options.guard_model && app.tasks.has_guard()) {
    throw ApiError(409, "Conflict",
                   fmt::format("model {} is the guard's model and cannot be replaced", request->name));
  }

  const std::lock_guard lock(app.admin_mutex);
  // Forget the threads that are done (joined by their destructors).
  std::erase_if(app.admin_tasks, [](const App::AdminTask& t) { return t.done->load(); });
  if (app.admin_tasks.size() >= kMaxAdminLoads) {
    throw ApiError(429, "Overloaded", fmt::format("{} model loads are already in progress", kMaxAdminLoads));
  }
  auto done_flag = std::make_shared<std::atomic<bool>>(false);
  // Shutdown waits for the load (its answer uses the workers).
  std::shared_ptr<void> open = app.pipeline.leases().hold_open();
  // The spec factory may download (minutes, for a large model): never on an I/O thread.
  app.admin_tasks.push_back(App::AdminTask{
      done_flag, std::jthread([&app, call, request, done_flag, open = std::move(open)]() mutable {
        auto settle = [done_flag, open = std::move(open)]() mutable {
          done_flag->store(true);
          open.reset();
        };
        serving::ModelSpec spec;
        try {
          spec = app.options.make_spec(request->name, request->source, request->dtype);
        } catch (...) {
          const MappedError e = map_exception(std::current_exception(), "model");
          // A source that does not exist (a folder, a hub id) is the client's mistake.
          app.fail(*call, e.status == 500 ? 422 : e.status, e.error_type, e.message, "model");
          return settle();
        }
        const std::string spec_name = spec.name;
        app.models.put(std::move(spec), [&app, call, spec_name, settle](std::exception_ptr error) mutable {
          if (error) {
            const MappedError e = map_exception(error, "model");
            app.fail(*call, e.status == 500 ? 422 : e.status, e.error_type,
                     fmt::format("model {} failed to load: {}", spec_name, e.message), "model");
          } else {
            JsonWriter w;
            const std::optional<serving::ModelStatus> st = app.models.status(spec_name);
            if (st) {
              write_status(w, *st);
            } else {
              w.begin_object().key("name").value(spec_name).end_object();
            }
            app.finish(*call, json_response(200, w.take()));
          }
          settle();
        });
      })});
}

}  // namespace warden::http
