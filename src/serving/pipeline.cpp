#include "serving/pipeline.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "serving/metrics.hpp"
#include "serving/worker_pool.hpp"

namespace warden::serving {

namespace {

using Value = ResultCache::Value;

Value make_value(std::span<const float> values, std::size_t tokens) {
  auto v = std::make_shared<CachedResult>();
  v->values.assign(values.begin(), values.end());
  v->tokens = tokens;
  return v;
}

// Whether a cached value has the shape this request needs (it always has: the key names the
// model and the kind; one that does not fit is a miss).
bool fits(Output output, std::size_t width, const CachedResult& v) {
  const std::size_t floats = v.values.size();
  if (output == Output::Retrieval) return v.retrieval.dense.size() == width;
  if (output == Output::PerToken) return width > 0 && floats % width == 0;
  return floats == width;
}

}  // namespace

InferenceRequest InferenceRequest::on(const LoadedModel& model, Output output) {
  InferenceRequest r;
  r.output = output;
  switch (output) {
    case Output::Pooled:
      r.runner = model.embed_runner.get();
      r.width = model.embedder->dim();
      break;
    case Output::PerToken:
      r.runner = model.token_runner.get();
      r.width = model.embedder->token_dim();
      break;
    case Output::Retrieval:
      r.runner = model.retrieval_runner.get();
      r.width = model.embedder->dim();
      break;
    case Output::Logits:
      r.runner = model.classify_runner.get();
      r.width = model.classifier->labels().size();
      break;
  }
  if (r.runner == nullptr)
    throw Error(ErrorKind::Internal, "InferenceRequest::on: the model has no such output");
  return r;
}

const char* cache_use_name(CacheUse use) noexcept {
  switch (use) {
    case CacheUse::Off:
      return nullptr;
    case CacheUse::Hit:
      return "hit";
    case CacheUse::Miss:
      return "miss";
    case CacheUse::Partial:
      return "partial";
  }
  return nullptr;
}

// One request in flight: what it asked, what the cache found, where it stands.
struct Pipeline::Run {
  InferenceRequest request;
  Done done;
  std::vector<std::string> keys;           // per input, when the request uses the cache
  std::vector<Value> found;                // per input: the cache's value or null
  std::vector<std::size_t> missing;        // the inputs to compute, in order
  std::vector<embed::PreparedInput> kept;  // keep_prepared: the found inputs, by input index
  Inference inference;
};

Pipeline::Pipeline(ModelManager& models, Scheduler& scheduler, WorkerPool& workers, ResultCacheOptions cache,
                   MetricsRegistry* metrics)
    : leases_(models), scheduler_(scheduler), workers_(workers) {
  if (cache.max_bytes > 0) cache_ = std::make_unique<ResultCache>(cache, metrics);
  if (metrics != nullptr) {
    tokenization_ = &metrics->histogram("warden_tokenization_duration_seconds",
                                        "Time tokenizing one request's inputs", default_latency_buckets());
    // The same series the scheduler's observer counts into (scheduler_metrics.cpp): these are
    // the 429s decided before tokenizing.
    rejected_ =
        &metrics->counter("warden_rejected_total", "Requests refused with 429: the wait queue was full");
  }
}

Pipeline::~Pipeline() = default;

void Pipeline::post(std::function<void()> task) {
  workers_.post(std::move(task));
}

std::size_t Pipeline::workers() const noexcept {
  return workers_.size();
}

std::string Pipeline::cache_prefix(const ModelLease& lease, std::string_view kind,
                                   const embed::InputOptions& o) {
  const ModelSpec& spec = lease.spec();
  CacheKey k;
  k.add(lease.model().instance).add(spec.name).add(spec.dtype).add(kind);
  k.add(std::uint64_t{o.truncate ? 1U : 0U})
      .add(std::uint64_t{o.side == embed::TruncationSide::Left ? 1U : 0U});
  k.add(o.prompt).add(std::uint64_t{o.add_special_tokens ? 1U : 0U}).add(std::uint64_t{o.query ? 1U : 0U});
  k.add(o.task);  // a task adapter changes the weights (jina-embeddings-v3's tasks share empty prompts)
  return k.take();
}

void Pipeline::run(InferenceRequest request, Done done) {
  auto run = std::make_shared<Run>();
  run->request = std::move(request);
  run->done = std::move(done);
  workers_.post([this, run] {
    const InferenceRequest& rq = run->request;
    Inference& inf = run->inference;
    const std::size_t n = rq.inputs;
    const bool cached = cache_ != nullptr && rq.key;
    run->found.resize(n);
    if (cached) {
      inf.cache = CacheUse::Miss;
      run->keys.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        run->keys[i] = rq.key(i);
        if (rq.cache_lookup) run->found[i] = cache_->find(run->keys[i]);
        if (run->found[i] && !fits(rq.output, rq.width, *run->found[i])) run->found[i].reset();
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!run->found[i]) run->missing.push_back(i);
    }
    // Refused before tokenizing when the wait queue is already full: overload costs little.
    if (!run->missing.empty() && scheduler_.saturated()) {
      if (rejected_ != nullptr) rejected_->inc();
      inf.outcome = Outcome::Rejected;
      inf.error = not_computed(inf.outcome);
      return run->done(inf);
    }
    // Prepared: every input with keep_prepared, else only those to compute.
    std::vector<embed::PreparedInput> prepared;
    const auto start = Clock::now();
    try {
      prepared.reserve(rq.keep_prepared ? n : run->missing.size());
      for (std::size_t i = 0; i < n; ++i) {
        if (rq.keep_prepared || !run->found[i]) prepared.push_back(rq.prepare(i));
      }
    } catch (...) {
      inf.outcome = Outcome::Failed;
      inf.error = std::current_exception();
      return run->done(inf);
    }
    inf.tokenization = Clock::now() - start;
    for (const embed::PreparedInput& in : prepared) inf.total_tokens += in.tokens;
    if (!rq.keep_prepared) {
      for (const Value& v : run->found) inf.total_tokens += v ? v->tokens : 0;
    }
    // With keep_prepared the found inputs stay here; the job gets the missing ones.
    std::vector<embed::PreparedInput> job_inputs;
    if (rq.keep_prepared) {
      run->kept.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (run->found[i]) run->kept[i] = std::move(prepared[i]);
      }
      for (const std::size_t i : run->missing) job_inputs.push_back(std::move(prepared[i]));
    } else {
      job_inputs = std::move(prepared);
    }
    if (run->missing.empty()) {
      // Every input was found: answered here, without the scheduler. Its timings are zero.
      inf.cache = CacheUse::Hit;
      return finish(*run, {}, {});
    }
    if (cached && run->missing.size() < n) inf.cache = CacheUse::Partial;
    auto job = std::make_shared<InferenceJob>(
        *rq.runner, rq.output, rq.width, std::move(job_inputs), rq.cancelled,
        [this, run](InferenceJob& finished, Outcome outcome) {
          // On the compute thread (or the submitting one for an immediate refusal): take the
          // rows and leave; merging and the caller's formatting happen on a worker.
          Inference& result = run->inference;
          result.job = finished.timings();
          result.outcome = outcome;
          if (outcome != Outcome::Done) {
            result.error = outcome == Outcome::Failed ? finished.exception() : not_computed(outcome);
            return run->done(result);
          }
          auto rows = std::make_shared<InferenceRows>(std::move(finished.out));
          auto inputs = std::make_shared<std::vector<embed::PreparedInput>>(finished.take_prepared());
          workers_.post([this, run, rows, inputs] { finish(*run, std::move(*rows), std::move(*inputs)); });
        });
    scheduler_.submit(std::move(job));
  });
}

std::exception_ptr Pipeline::not_computed(Outcome outcome) const {
  switch (outcome) {
    case Outcome::Rejected:
      return std::make_exception_ptr(
          NotComputed(outcome, "model is overloaded: the wait queue is full, retry later"));
    case Outcome::TimedOut:
      return std::make_exception_ptr(NotComputed(
          outcome, fmt::format("request waited longer than the queue timeout of {} ms and was not computed",
                               scheduler_.options().queue_timeout.count())));
    case Outcome::Cancelled:
      // The client is gone; the answer goes nowhere but keeps the bookkeeping whole.
      return std::make_exception_ptr(NotComputed(outcome, "client closed the connection before its answer"));
    case Outcome::Stopped:
      return std::make_exception_ptr(NotComputed(outcome, "server is shutting down"));
    case Outcome::Done:
    case Outcome::Failed:
      break;
  }
  return std::make_exception_ptr(Error(ErrorKind::Internal, "a job ended without results or an error"));
}

void Pipeline::finish(Run& run, InferenceRows computed, std::vector<embed::PreparedInput> computed_inputs) {
  const InferenceRequest& rq = run.request;
  Inference& inf = run.inference;
  const std::size_t n = rq.inputs;
  const bool per_token = rq.output == Output::PerToken;
  const bool retrieval = rq.output == Output::Retrieval;
  const bool store = !run.keys.empty() && rq.cache_store;
  InferenceRows& out = inf.result;
  if (per_token) {
    out.per_token.resize(n);
  } else if (retrieval) {
    out.retrieval.resize(n);
  } else {
    out.rows = Embeddings(n, rq.width);
  }
  inf.tokens.resize(n);
  std::size_t j = 0;  // the next computed input
  for (std::size_t i = 0; i < n; ++i) {
    if (const Value& v = run.found[i]) {
      inf.tokens[i] = v->tokens;
      if (retrieval) {
        out.retrieval[i] = v->retrieval;
      } else if (per_token) {
        Embeddings t(v->values.size() / rq.width, rq.width);
        std::copy(v->values.begin(), v->values.end(), t.values().begin());
        out.per_token[i] = std::move(t);
      } else {
        std::copy(v->values.begin(), v->values.end(), out.rows.row(i).begin());
      }
      continue;
    }
    inf.tokens[i] = computed_inputs[j].tokens;
    if (retrieval) {
      if (store) {
        auto v = std::make_shared<CachedResult>();
        v->retrieval = computed.retrieval[j];
        v->tokens = inf.tokens[i];
        cache_->insert(run.keys[i], std::move(v));
      }
      out.retrieval[i] = std::move(computed.retrieval[j]);
    } else if (per_token) {
      // A matrix is rebuilt from the model's width on a hit: one of another width is not stored.
      if (store && computed.per_token[j].dim() == rq.width) {
        cache_->insert(run.keys[i], make_value(computed.per_token[j].values(), inf.tokens[i]));
      }
      out.per_token[i] = std::move(computed.per_token[j]);
    } else {
      const std::span<const float> row = computed.rows.row(j);
      std::copy(row.begin(), row.end(), out.rows.row(i).begin());
      if (store) cache_->insert(run.keys[i], make_value(row, inf.tokens[i]));
    }
    ++j;
  }
  if (rq.keep_prepared) {
    inf.prepared = std::move(run.kept);
    for (std::size_t k = 0; k < run.missing.size(); ++k)
      inf.prepared[run.missing[k]] = std::move(computed_inputs[k]);
  }
  inf.computed = true;
  if (tokenization_ != nullptr)
    tokenization_->observe(std::chrono::duration<double>(inf.tokenization).count());
  run.done(inf);
}

std::string text_key(const std::string& prefix, std::string_view text) {
  CacheKey k;
  k.add("text").add(text);
  return prefix + k.str();
}

std::string ids_key(const std::string& prefix, std::span<const std::uint32_t> ids) {
  CacheKey k;
  k.add("ids").add(ids);
  return prefix + k.str();
}

std::string pair_key(const std::string& prefix, std::string_view text, const std::string* pair) {
  CacheKey k;
  k.add(pair != nullptr ? "pair" : "single").add(text);
  if (pair != nullptr) k.add(*pair);
  return prefix + k.str();
}

}  // namespace warden::serving
