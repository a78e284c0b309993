// POST /guard: the prompt-injection guard (src/guard/) behind the server. The probe: the
// inputs are embedded in the scheduler's batches like any /embed request, then each pooled
// vector and its prepared tokens go to Guard::decide on a worker (a dot product). The
// classifier method: the inputs are classified by the guard's own model in the scheduler's
// batches (its own runner), then each logit row goes to Guard::decide_logits on a worker.

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "guard/guard.hpp"
#include "http/api_error.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"

namespace warden::http {

void Router::Impl::guard(std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<GuardRequest>(parse_guard(body));
  check_batch_size(request->inputs.size(), "inputs");
  // As /embed: an empty text is refused. (A text of only white space is judged, and the
  // guard abstains on it: neither is ever an attack verdict.)
  for (std::size_t i = 0; i < request->inputs.size(); ++i) {
    if (request->inputs[i].empty()) {
      throw ApiError(400, "Empty", fmt::format("`inputs[{}]` cannot be empty", i), "inputs");
    }
  }
  const guard::Guard* g = guard_ptr;
  if (g != nullptr && g->classifier() != nullptr) {
    for (const std::string& text : request->inputs) call->characters += code_points(text);
    return guard_classify(std::move(call), std::move(request));
  }
  if (g == nullptr) {
    throw ApiError(424, "Backend",
                   "no guard is configured (the server was started with --no-guard, serves no embedding "
                   "model, or the guard's bank could not be loaded: see the start-up log)");
  }
  // The probe decides on the vectors of the model it was fitted on, whatever the request's
  // `model` says: that model is pinned in memory for it.
  with_model(call, options.guard_model, {ModelKind::Embedding}, [this, call, request, g] {
    const Embedder& e = dense_embedder(*call);
    for (const std::string& text : request->inputs) call->characters += code_points(text);
    const InputOptions o = input_options(e, std::nullopt, false, std::nullopt);
    auto prepare = [&e, request, o](std::size_t i) {
      return prepare_one(e, request->inputs[i], nullptr, o, i, "inputs");
    };
    // The probe's vectors are the pooled vectors /embed computes with default options: they
    // share cache entries. Every input is prepared (decide reads its tokens); only the
    // vectors the cache does not hold are computed.
    serving::InferenceRequest job =
        serving::InferenceRequest::on(call->lease->model(), serving::Output::Pooled);
    job.inputs = request->inputs.size();
    job.prepare = std::move(prepare);
    job.keep_prepared = true;
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, "pooled", o), request](std::size_t i) {
        return serving::text_key(prefix, request->inputs[i]);
      };
    }
    infer(call, std::move(job), [request, g](serving::Inference& r) {
      JsonWriter w;
      w.begin_array();
      for (std::size_t i = 0; i < r.prepared.size(); ++i) {
        // The text goes along: the unknown-token rule weighs the characters unknown tokens cover.
        w.raw(g->decide(r.result.rows.row(i), r.prepared[i], request->inputs[i]).to_json());
      }
      w.end_array();
      return json_response(200, w.take());
    });
  });
}

void Router::Impl::guard_classify(std::shared_ptr<Call> call, std::shared_ptr<const GuardRequest> request) {
  const guard::Guard* g = guard_ptr;
  const SequenceClassifier& c = *g->classifier();
  // The server's truncation default applies as on every route; the guard takes no options.
  const InputOptions o = classify_options(std::nullopt, false);
  // A text longer than the model reads at once is judged in overlapping windows
  // (Guard::windows): each window is one input of the job, and the verdicts are combined
  // per text afterwards.
  struct Part {
    std::size_t input;
    std::string_view text;  // into request->inputs
  };
  auto parts = std::make_shared<std::vector<Part>>();
  auto windows = std::make_shared<std::vector<std::vector<guard::TextWindow>>>();
  for (std::size_t i = 0; i < request->inputs.size(); ++i) {
    const std::string_view text = request->inputs[i];
    try {
      windows->push_back(g->windows(text));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::InvalidInput && e.kind() != ErrorKind::InvalidArgument) throw;
      throw ApiError(422, "Validation", fmt::format("inputs[{}]: {}", i, e.what()), "inputs");
    }
    for (const guard::TextWindow& w : windows->back())
      parts->push_back({i, text.substr(w.begin, w.end - w.begin)});
  }
  auto prepare = [request, parts, &c, o](std::size_t k) {
    const Part& part = (*parts)[k];
    try {
      return c.prepare(part.text, std::nullopt, o);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::InvalidInput && e.kind() != ErrorKind::InvalidArgument) throw;
      throw ApiError(422, "Validation", fmt::format("inputs[{}]: {}", part.input, e.what()), "inputs");
    }
  };
  // The guard's classifier is no managed model (it lives as long as the server): its keys
  // carry their own tag and its id. Every input is prepared (decide_logits reads its tokens).
  serving::InferenceRequest job;
  job.runner = guard_runner.get();
  job.output = serving::Output::Logits;
  job.width = c.labels().size();
  job.inputs = parts->size();
  job.prepare = std::move(prepare);
  job.keep_prepared = true;
  if (caching()) {
    serving::CacheKey k;
    k.add("guard-classifier").add(c.id()).add(std::uint64_t{o.truncate ? 1U : 0U});
    k.add(std::uint64_t{o.side == TruncationSide::Left ? 1U : 0U});
    job.key = [prefix = k.take(), parts](std::size_t i) {
      return serving::pair_key(prefix, (*parts)[i].text, nullptr);
    };
  }
  infer(std::move(call), std::move(job), [request, parts, windows, g](serving::Inference& r) {
    JsonWriter w;
    w.begin_array();
    std::size_t k = 0;
    for (std::size_t i = 0; i < request->inputs.size(); ++i) {
      std::vector<guard::GuardResult> results;
      for (std::size_t j = 0; j < (*windows)[i].size(); ++j, ++k) {
        results.push_back(g->decide_logits(r.result.rows.row(k), r.prepared[k], (*parts)[k].text));
      }
      w.raw(guard::Guard::combine_windows(results, (*windows)[i], request->inputs[i]).to_json());
    }
    w.end_array();
    return json_response(200, w.take());
  });
}

}  // namespace warden::http
