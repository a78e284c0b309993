// POST /guard, and the guard every guarding route shares (guard_texts: /guard, LiteLLM's
// guardrail, a rerank's passages): the prompt-injection guard (src/guard/) behind the server. Each input is
// read as the guard plans it (Guard::plan: its canonical form, in windows the model reads whole), every
// window one input of the job. The probe: the windows are embedded in the scheduler's batches like any /embed
// request, then each pooled vector and its prepared tokens go to Guard::decide on a worker (a dot product).
// The classifier method: the windows are classified by the guard's own model in the scheduler's batches (its
// own runner), then each logit row goes to Guard::decide_logits. Guard::combine makes one verdict per input.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "guard/guard.hpp"
#include "http/api_error.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"

namespace warden::http {

// The plans of the texts a guard job judges, and the job's parts: (text, window) in order.
struct GuardPlans {
  std::vector<guard::GuardPlan> plans;
  std::vector<std::pair<std::size_t, std::size_t>> parts;
  // One verdict per text from `decide(part index, part text)` of its windows.
  [[nodiscard]] std::vector<guard::GuardResult> verdicts(
      const std::vector<std::string>& texts,
      const std::function<guard::GuardResult(std::size_t, std::string_view)>& decide) const;
};

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
  guard_texts(std::move(call), std::shared_ptr<const std::vector<std::string>>(request, &request->inputs),
              "inputs", [](std::vector<guard::GuardResult> verdicts) {
                JsonWriter w;
                w.begin_array();
                for (const guard::GuardResult& v : verdicts) w.raw(v.to_json());
                w.end_array();
                return json_response(200, w.take());
              });
}

const guard::Guard& Router::Impl::require_guard() const {
  if (guard_ptr == nullptr) {
    throw ApiError(424, "Backend",
                   "no guard is configured (the server was started with --no-guard, serves no embedding "
                   "model, or the guard's bank could not be loaded: see the start-up log)");
  }
  return *guard_ptr;
}

void Router::Impl::guard_texts(std::shared_ptr<Call> call,
                               std::shared_ptr<const std::vector<std::string>> texts, std::string param,
                               GuardAnswer answer) {
  const guard::Guard* g = &require_guard();
  if (g->classifier() != nullptr) {
    for (const std::string& text : *texts) call->characters += code_points(text);
    return guard_classify(std::move(call), std::move(texts), std::move(param), std::move(answer));
  }
  // The probe decides on the vectors of the model it was fitted on, whatever the request's
  // `model` says: that model is pinned in memory for it.
  with_model(call, options.guard_model, {ModelKind::Embedding},
             [this, call, texts, g, param = std::move(param), answer = std::move(answer)] {
               const Embedder& e = dense_embedder(*call);
               for (const std::string& text : *texts) call->characters += code_points(text);
               const auto plans = plan_guard(*g, *texts, param);
               const InputOptions o = input_options(e, std::nullopt, false, std::nullopt);
               auto prepare = [&e, plans, o, param](std::size_t k) {
                 const auto& [input, window] = plans->parts[k];
                 return prepare_one(e, plans->plans[input].part(window), nullptr, o, input, param);
               };
               // The probe's vectors are the pooled vectors /embed computes with default
               // options: they share cache entries. Every window is prepared (decide reads its
               // tokens); only the vectors the cache does not hold are computed.
               serving::InferenceRequest job =
                   serving::InferenceRequest::on(call->lease->model(), serving::Output::Pooled);
               job.inputs = plans->parts.size();
               job.prepare = std::move(prepare);
               job.keep_prepared = true;
               if (caching()) {
                 job.key = [prefix = cache_prefix(*call, "pooled", o), plans](std::size_t k) {
                   const auto& [input, window] = plans->parts[k];
                   return serving::text_key(prefix, plans->plans[input].part(window));
                 };
               }
               infer(call, std::move(job), [texts, plans, g, answer](serving::Inference& r) {
                 return answer(plans->verdicts(*texts, [&](std::size_t k, std::string_view part) {
                   // The part goes along: the unknown-token rule weighs the characters unknown
                   // tokens cover.
                   return g->decide(r.result.rows.row(k), r.prepared[k], part);
                 }));
               });
             });
}

std::shared_ptr<const GuardPlans> Router::Impl::plan_guard(const guard::Guard& g,
                                                           const std::vector<std::string>& texts,
                                                           std::string_view param) {
  auto plans = std::make_shared<GuardPlans>();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    try {
      plans->plans.push_back(g.plan(texts[i]));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::InvalidInput && e.kind() != ErrorKind::InvalidArgument) throw;
      throw ApiError(422, "Validation", fmt::format("{}[{}]: {}", param, i, e.what()), std::string(param));
    }
    for (std::size_t j = 0; j < plans->plans.back().windows.size(); ++j) plans->parts.emplace_back(i, j);
  }
  return plans;
}

void Router::Impl::guard_classify(std::shared_ptr<Call> call,
                                  std::shared_ptr<const std::vector<std::string>> texts, std::string param,
                                  GuardAnswer answer) {
  const guard::Guard* g = guard_ptr;
  const SequenceClassifier& c = *g->classifier();
  // The server's truncation default applies as on every route; the guard takes no options.
  const InputOptions o = classify_options(std::nullopt, false);
  // Each window of each text's canonical form is one input of the job (Guard::plan), and
  // the verdicts are combined per text afterwards.
  const auto plans = plan_guard(*g, *texts, param);
  auto prepare = [plans, &c, o, param](std::size_t k) {
    const auto& [input, window] = plans->parts[k];
    try {
      return c.prepare(plans->plans[input].part(window), std::nullopt, o);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::InvalidInput && e.kind() != ErrorKind::InvalidArgument) throw;
      throw ApiError(422, "Validation", fmt::format("{}[{}]: {}", param, input, e.what()), param);
    }
  };
  // The guard's classifier is no managed model (it lives as long as the server): its keys
  // carry their own tag and its id. Every input is prepared (decide_logits reads its tokens).
  serving::InferenceRequest job;
  job.runner = guard_runner.get();
  job.output = serving::Output::Logits;
  job.width = c.labels().size();
  job.inputs = plans->parts.size();
  job.prepare = std::move(prepare);
  job.keep_prepared = true;
  if (caching()) {
    serving::CacheKey k;
    k.add("guard-classifier").add(c.id()).add(std::uint64_t{o.truncate ? 1U : 0U});
    k.add(std::uint64_t{o.side == TruncationSide::Left ? 1U : 0U});
    job.key = [prefix = k.take(), plans](std::size_t i) {
      const auto& [input, window] = plans->parts[i];
      return serving::pair_key(prefix, plans->plans[input].part(window), nullptr);
    };
  }
  infer(std::move(call), std::move(job),
        [texts, plans, g, answer = std::move(answer)](serving::Inference& r) {
          return answer(plans->verdicts(*texts, [&](std::size_t k, std::string_view part) {
            return g->decide_logits(r.result.rows.row(k), r.prepared[k], part);
          }));
        });
}

std::vector<guard::GuardResult> GuardPlans::verdicts(
    const std::vector<std::string>& texts,
    const std::function<guard::GuardResult(std::size_t, std::string_view)>& decide) const {
  std::vector<guard::GuardResult> out;
  out.reserve(texts.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::vector<guard::GuardResult> results;
    for (std::size_t j = 0; j < plans[i].windows.size(); ++j, ++k)
      results.push_back(decide(k, plans[i].part(j)));
    out.push_back(guard::Guard::combine(results, plans[i], texts[i]));
  }
  return out;
}

}  // namespace warden::http
