#pragma once
// TEI's /info, OpenAI's /v1/models, Prometheus' /metrics: the handlers.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/app.hpp"
#include "http/body_fields.hpp"

namespace warden::http {

// GET /health: 200 once the server can serve, else 503 with the reason (serving/readiness.hpp).
void health(App& app, const std::shared_ptr<Call>& call);
// info_routes.cpp: TEI's /info, OpenAI's /v1/models and /v1/models/{id} (404
// model_not_found for one nobody serves), Prometheus' /metrics.
void info(App& app, std::shared_ptr<Call> call);
[[nodiscard]] Response list_models(const App& app);
void get_model(App& app, std::shared_ptr<Call> call, const std::string& id);
[[nodiscard]] Response metrics_text(const App& app);

}  // namespace warden::http
