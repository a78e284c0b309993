// POST /guard: the prompt-injection guard (src/guard/) behind the server. The inputs are
// embedded in the scheduler's batches like any /embed request, then each pooled vector and
// its prepared tokens go to Guard::decide on a worker (the probe is a dot product).

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "guard/guard.hpp"
#include "http/api_error.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"

namespace warden::http {

void Router::Impl::guard(std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<GuardRequest>(parse_guard(body));
  check_batch_size(request->inputs.size(), "inputs");
  const Embedder& e = embedder("/guard");
  if (model.guard == nullptr) {
    throw ApiError(424, "Backend",
                   fmt::format("no guard is configured for model {} (the server was started with --no-guard, or "
                               "its bank could not be loaded: see the start-up log)",
                               e.id()));
  }
  for (const std::string& text : request->inputs) call->characters += code_points(text);
  const InputOptions o = input_options(std::nullopt, false, std::nullopt);
  auto prepare = [this, request, o] {
    std::vector<PreparedInput> inputs;
    inputs.reserve(request->inputs.size());
    for (std::size_t i = 0; i < request->inputs.size(); ++i) {
      inputs.push_back(prepare_one(request->inputs[i], nullptr, o, i, "inputs"));
    }
    return inputs;
  };
  const guard::Guard* g = model.guard;
  run_job(std::move(call), *embed_runner, std::move(prepare), [request, g](EmbedResult& r) {
    JsonWriter w;
    w.begin_array();
    for (std::size_t i = 0; i < r.prepared.size(); ++i) {
      // The text goes along: the unknown-token rule weighs the characters unknown tokens cover.
      w.raw(g->decide(r.pooled.row(i), r.prepared[i], request->inputs[i]).to_json());
    }
    w.end_array();
    return json_response(200, w.take());
  });
}

}  // namespace warden::http
