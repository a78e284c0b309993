// The descriptive routes: /info (TEI), /v1/models (OpenAI), /metrics (Prometheus).

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "http/api_error.hpp"
#include "http/info_routes.hpp"
#include "http/router_metrics.hpp"
#include "serving/readiness.hpp"

// WARDEN_VERSION: the project's version, defined by src/CMakeLists.txt.

namespace warden::http {

namespace {

// TEI's shape for a classifier or reranker: {"id2label": {"0": name, ...}, "label2id": {name: 0, ...}}.
void write_labels(JsonWriter& w, const classify::SequenceClassifier& c) {
  const auto& labels = c.labels();
  w.begin_object().key("id2label").begin_object();
  for (std::size_t i = 0; i < labels.size(); ++i) w.key(std::to_string(i)).value(labels[i]);
  w.end_object().key("label2id").begin_object();
  for (std::size_t i = 0; i < labels.size(); ++i) w.key(labels[i]).value(static_cast<std::uint64_t>(i));
  w.end_object().end_object();
}

// Warden's own: the label names in id order.
void label_list(JsonWriter& w, const classify::SequenceClassifier& c) {
  w.key("labels").begin_array();
  for (const std::string& l : c.labels()) w.value(l);
  w.end_array();
}

}  // namespace

void health(App& app, const std::shared_ptr<Call>& call) {
  const serving::Health h = serving::health(app.options.readiness, app.models);
  if (h.ok) return app.finish(*call, json_response(200, "{}"));
  app.fail(*call, 503, "Unhealthy", h.reason);
}

void info(App& app, std::shared_ptr<Call> call) {
  // TEI's /info describes one model: the one a request without `model` would get on the
  // embedding routes (or the one named by a /models/{name}/ prefix). Describing it needs it
  // loaded, like any request for it.
  app.tasks.lease(
      app.task_context(*call, {}), app.answer<serving::LeasePtr>(call, [&app](serving::LeasePtr& lease) {
        const serving::LoadedModel& m = lease->model();
        const serving::ModelSpec& spec = lease->spec();
        const serving::SchedulerOptions& s = app.scheduler.options();
        JsonWriter w;
        w.begin_object();
        // TEI's fields first, in TEI's shapes (clients parse them), then Warden's own.
        w.key("model_id").value(spec.name);
        w.key("model_sha").value(nullptr);
        // TEI's field: the precision the model runs in (the hashing embedder computes in float32).
        w.key("model_dtype").value(spec.dtype.empty() ? std::string("float32") : spec.dtype);
        w.key("model_type").begin_object();
        if (m.embedder != nullptr) {
          w.key("embedding").begin_object().key("pooling").value(m.embedder->pooling()).end_object();
        } else {
          w.key(classify::classifier_kind_name(m.classifier->kind()));
          write_labels(w, *m.classifier);
        }
        w.end_object();
        w.key("kind").value(model_kind_name(spec.kind));
        if (!spec.architecture.empty()) w.key("architecture").value(spec.architecture);
        // dim is 0 for a model that does not embed (the published schema requires the field).
        w.key("dim").value(static_cast<std::uint64_t>(m.embedder != nullptr ? m.embedder->dim() : 0));
        if (m.classifier != nullptr) label_list(w, *m.classifier);
        w.key("semantic").value(spec.semantic);
        w.key("tier").value(spec.tier);
        if (!spec.tier_reason.empty()) w.key("tier_reason").value(spec.tier_reason);
        if (!spec.fallback_reason.empty()) {
          w.key("fallback").value(true);
          w.key("fallback_reason").value(spec.fallback_reason);
        }
        w.key("source").value(spec.source);
        w.key("max_input_length")
            .value(static_cast<std::uint64_t>(m.embedder != nullptr ? m.embedder->max_input_tokens()
                                                                    : m.classifier->max_input_tokens()));
        w.key("auto_truncate").value(app.tasks.limits().auto_truncate);
        w.key("max_batch_tokens").value(static_cast<std::uint64_t>(s.max_batch_tokens));
        w.key("max_batch_requests").value(static_cast<std::uint64_t>(s.max_batch_inputs));
        w.key("max_concurrent_requests").value(static_cast<std::uint64_t>(s.max_concurrent));
        w.key("max_queue").value(static_cast<std::uint64_t>(s.max_queue));
        w.key("queue_timeout_ms").value(static_cast<std::int64_t>(s.queue_timeout.count()));
        w.key("max_client_batch_size").value(static_cast<std::uint64_t>(app.tasks.limits().max_batch));
        w.key("max_response_floats")
            .value(static_cast<std::uint64_t>(app.tasks.limits().max_response_floats));
        w.key("tokenization_workers").value(static_cast<std::uint64_t>(app.pipeline.workers()));
        w.key("prompts").begin_array();
        if (m.embedder != nullptr) {
          for (const auto& [name, text] : m.embedder->prompts()) w.value(name);
        }
        w.end_array();
        // The task adapters (each also a prompt name): jina-embeddings-v3's.
        w.key("tasks").begin_array();
        if (m.embedder != nullptr) {
          for (const std::string& name : m.embedder->tasks()) w.value(name);
        }
        w.end_array();
        // Every model this server answers for, loaded or not (GET /admin/models has the details).
        w.key("models").begin_array();
        for (const std::string& name : app.models.names()) w.value(name);
        w.end_array();
        w.key("auth").value(!app.options.api_key.empty());
        w.key("version").value(WARDEN_VERSION);
        w.key("sha").value(nullptr);
        w.key("docker_label").value(nullptr);
        w.end_object();
        return json_response(200, w.take());
      }));
}

namespace {

// One OpenAI model object, with what Warden knows of it: loaded or not (describing a model
// must not load it), its kind and semantic flag from the spec, dim and labels once loaded.
void write_model(JsonWriter& w, const serving::ModelStatus& st, std::int64_t created) {
  w.begin_object();
  w.key("id").value(st.name);
  w.key("object").value("model");
  w.key("created").value(created);
  w.key("owned_by").value("warden");
  w.key("kind").value(model_kind_name(st.kind));
  if (st.dim != 0) w.key("dim").value(static_cast<std::uint64_t>(st.dim));
  if (!st.labels.empty()) {
    w.key("labels").begin_array();
    for (const std::string& l : st.labels) w.value(l);
    w.end_array();
  }
  w.key("semantic").value(st.semantic);
  if (!st.dtype.empty()) w.key("dtype").value(st.dtype);
  if (!st.architecture.empty()) w.key("architecture").value(st.architecture);
  w.key("state").value(serving::model_state_name(st.state));
  if (!st.fallback_reason.empty()) w.key("fallback").value(true);
  w.end_object();
}

}  // namespace

Response list_models(const App& app) {
  JsonWriter w;
  w.begin_object().key("object").value("list").key("data").begin_array();
  for (const serving::ModelStatus& st : app.models.list()) write_model(w, st, app.created_unix);
  w.end_array().end_object();
  return json_response(200, w.take());
}

void get_model(App& app, std::shared_ptr<Call> call, const std::string& id) {
  const std::optional<serving::ModelStatus> st = app.models.status(id);
  if (!st) {
    throw ApiError(404, "NotFound", fmt::format("The model '{}' does not exist", id), "model");
  }
  JsonWriter w;
  write_model(w, *st, app.created_unix);
  app.finish(*call, json_response(200, w.take()));
}

Response metrics_text(const App& app) {
  Response r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = app.metrics->render();
  return r;
}

}  // namespace warden::http
