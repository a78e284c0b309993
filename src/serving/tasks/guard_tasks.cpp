// The guard's task (guard_tasks.hpp). Each text is read as the guard plans it (Guard::plan:
// its canonical form, in windows the model reads whole), every window one input of the job.
// The probe: the windows are embedded in the scheduler's batches like any embedding, then
// each pooled vector and its prepared tokens go to Guard::decide on a worker (a dot
// product). The classifier method: the windows are classified by the guard's own model in
// the scheduler's batches (its own runner), then each logit row goes to Guard::decide_logits.
// Guard::combine makes one verdict per text.

#include <functional>
#include <utility>

#include <fmt/format.h>

#include "serving/result_cache.hpp"
#include "serving/tasks/task_error.hpp"
#include "serving/tasks/tasks.hpp"

namespace warden::serving::tasks {

namespace {

// The plans of the texts a guard job judges, and the job's parts: (text, window) in order.
struct GuardPlans {
  std::vector<guard::GuardPlan> plans;
  std::vector<std::pair<std::size_t, std::size_t>> parts;

  [[nodiscard]] std::string_view part(std::size_t k) const {
    const auto& [input, window] = parts[k];
    return plans[input].part(window);
  }

  // One verdict per text from `decide(part index, part text)` of its windows.
  [[nodiscard]] std::vector<guard::GuardResult> verdicts(
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
};

// How the guard reads each text (Invalid, naming it, for one it cannot).
std::shared_ptr<const GuardPlans> plan_guard(const guard::Guard& g, const std::vector<std::string>& texts,
                                             const Field& field) {
  auto plans = std::make_shared<GuardPlans>();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    try {
      plans->plans.push_back(g.plan(texts[i]));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::InvalidInput && e.kind() != ErrorKind::InvalidArgument) throw;
      throw TaskError(Fault::Invalid, fmt::format("{}: {}", field.at(i), e.what()), field.name);
    }
    for (std::size_t j = 0; j < plans->plans.back().windows.size(); ++j) plans->parts.emplace_back(i, j);
  }
  return plans;
}

}  // namespace

bool Tasks::has_guard() const {
  if (guard_.guard != nullptr) return true;
  if (guard_.pending == nullptr) return false;
  const auto fitted = guard_.pending->peek();
  return !fitted || *fitted != nullptr;  // being fitted, or fitted
}

void Tasks::expect_guard() const {
  if (!has_guard()) {
    throw TaskError(Fault::ModelCannot,
                    "no guard is configured (the server was started with --no-guard, serves no embedding "
                    "model, or the guard's bank could not be loaded: see the start-up log)");
  }
}

void Tasks::guard(Context context, GuardTexts task, Then<std::vector<guard::GuardResult>> then) {
  using Verdicts = std::vector<guard::GuardResult>;
  check_batch(task.texts.size(), limits_, task.field.name);
  if (task.refuse_empty) refuse_empty(task.texts, task.field);
  expect_guard();
  const guard::Guard* g = guard_.guard;
  if (g == nullptr) {
    const auto fitted = guard_.pending->peek();
    if (!fitted) {
      // Still being fitted: the task goes on when the fit is over (on the fitting thread), and
      // its errors, a failed fit's 424 included, reach `then` as a launched task's would.
      guard_.pending->when_filled([this, context = std::move(context), task = std::move(task),
                                   then = std::move(then)](const guard::Guard* /*fitted*/) mutable {
        Then<Verdicts> answer = then;  // guard() takes `then`; an error before it launches still answers
        try {
          guard(std::move(context), std::move(task), std::move(then));
        } catch (...) {
          Finished<Verdicts> failed;
          failed.error = std::current_exception();
          answer(failed);
        }
      });
      return;
    }
    g = *fitted;
  }
  auto t = std::make_shared<const GuardTexts>(std::move(task));
  if (g->classifier() != nullptr) {
    const classify::SequenceClassifier& c = *g->classifier();
    // The server's truncation default applies as on every task; the guard takes no options.
    const embed::InputOptions o = classify_options({}, limits_);
    const auto plans = plan_guard(*g, t->texts, t->field);
    Job<Verdicts> job;
    job.request.runner = guard_runner_.get();
    job.request.output = Output::Logits;
    job.request.width = c.labels().size();
    job.request.inputs = plans->parts.size();
    job.request.prepare = [plans, &c, o, field = t->field](std::size_t k) {
      return prepare_pair(c, plans->part(k), std::nullopt, o, field, plans->parts[k].first);
    };
    // Every input is prepared (decide_logits reads its tokens).
    job.request.keep_prepared = true;
    if (pipeline_.caching()) {
      // The guard's classifier is no managed model (it lives as long as the server): its keys
      // carry their own tag and its id.
      CacheKey k;
      k.add("guard-classifier").add(c.id()).add(std::uint64_t{o.truncate ? 1U : 0U});
      k.add(std::uint64_t{o.side == embed::TruncationSide::Left ? 1U : 0U});
      job.request.key = [prefix = k.take(), plans](std::size_t i) {
        return pair_key(prefix, plans->part(i), nullptr);
      };
    }
    job.finish = [t, plans, g](Inference& r) {
      return plans->verdicts(t->texts, [&](std::size_t k, std::string_view part) {
        return g->decide_logits(r.result.rows.row(k), r.prepared[k], part);
      });
    };
    return launch<Verdicts>(context, nullptr, {}, std::move(job), std::move(then));
  }
  // The probe decides on the vectors of the model it was fitted on, whatever the request's
  // `model` says: that model is pinned in memory for it.
  context.model.requested = guard_.model;
  const std::string asker = context.asker;
  run<Verdicts>(
      context, {ModelKind::Embedding},
      [this, t, g, asker](const ModelLease& lease) {
        const embed::Embedder& e = embedder_of(lease, asker, /*dense=*/true);
        const auto plans = plan_guard(*g, t->texts, t->field);
        const embed::InputOptions o = embed_options(e, {}, limits_);
        Job<Verdicts> job;
        job.request = InferenceRequest::on(lease.model(), Output::Pooled);
        job.request.inputs = plans->parts.size();
        job.request.prepare = [&e, plans, o, field = t->field](std::size_t k) {
          return prepare_text(e, plans->part(k), o, field, plans->parts[k].first);
        };
        // The probe's vectors are the pooled vectors an embedding with default options
        // computes: they share cache entries. Every window is prepared (decide reads its
        // tokens); only the vectors the cache does not hold are computed.
        job.request.keep_prepared = true;
        if (pipeline_.caching()) {
          job.request.key = [prefix = Pipeline::cache_prefix(lease, "pooled", o), plans](std::size_t k) {
            return text_key(prefix, plans->part(k));
          };
        }
        job.finish = [t, plans, g](Inference& r) {
          return plans->verdicts(t->texts, [&](std::size_t k, std::string_view part) {
            // The part goes along: the unknown-token rule weighs the characters unknown
            // tokens cover.
            return g->decide(r.result.rows.row(k), r.prepared[k], part);
          });
        };
        return job;
      },
      std::move(then));
}

}  // namespace warden::serving::tasks
