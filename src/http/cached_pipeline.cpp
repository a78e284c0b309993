// The result cache in front of the compute pipelines. A route hands over its
// inputs one by one (how to prepare input i, what its cache key is); on a worker each key is
// looked up, and only the inputs the cache does not hold are tokenized and computed, as one
// job. The results are merged back in input order, the new ones stored, and the route's
// format sees what the uncached pipeline would have given it: the same floats (the cache
// holds what comes out of the model — pooled vectors before normalisation and truncation,
// per-token matrices, raw logits — and the route applies the request's options after, as
// always) and the same token counts. A request whose every input is found never reaches the
// scheduler.

#include <algorithm>
#include <exception>

#include "core/error.hpp"
#include "http/router_impl.hpp"
#include "serving/result_cache.hpp"

namespace warden::http {

namespace {

using Value = serving::ResultCache::Value;

Value make_value(std::span<const float> values, std::size_t tokens) {
  auto v = std::make_shared<serving::CachedResult>();
  v->values.assign(values.begin(), values.end());
  v->tokens = tokens;
  return v;
}

// What the cache found for a request: one value (or null) per input.
struct Lookup {
  std::vector<Value> found;
  std::size_t missing = 0;
};

// `fits(floats)`: whether a value has the shape this request needs (it always has: the key
// names the model and the kind; a value that does not fit would be a miss).
template <typename Fits>
Lookup look_up(serving::ResultCache& cache, const Call& call, std::size_t n,
               const Router::Impl::KeyOf& key_of, std::vector<std::string>& keys, Fits fits) {
  Lookup l;
  l.found.resize(n);
  keys.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = key_of(i);
    if (call.cache_lookup) l.found[i] = cache.find(keys[i]);
    if (l.found[i] && !fits(l.found[i]->values.size())) l.found[i].reset();
    if (!l.found[i]) ++l.missing;
  }
  return l;
}

// Prepares inputs [0, n) in order: all of them, or (with `skip`) only those the cache did
// not find.
Router::Impl::Prepare prepare_inputs(std::size_t n, Router::Impl::PrepareInput prepare_input,
                                     std::shared_ptr<const Lookup> skip = nullptr) {
  return [n, prepare_input = std::move(prepare_input), skip = std::move(skip)] {
    std::vector<PreparedInput> inputs;
    inputs.reserve(skip ? skip->missing : n);
    for (std::size_t i = 0; i < n; ++i) {
      if (!skip || !skip->found[i]) inputs.push_back(prepare_input(i));
    }
    return inputs;
  };
}

// The inputs the cache did not find, in order: what the job computes.
std::shared_ptr<std::vector<std::size_t>> missing_inputs(const Lookup& hits) {
  auto missing = std::make_shared<std::vector<std::size_t>>();
  for (std::size_t i = 0; i < hits.found.size(); ++i) {
    if (!hits.found[i]) missing->push_back(i);
  }
  return missing;
}

// What a partly cached request hands to its job. With prepare_all every input was prepared:
// the cached ones stay in `kept` (by input index) for format, the missing ones go to the job;
// otherwise the prepared inputs are exactly the missing ones.
struct JobInputs {
  std::shared_ptr<std::vector<PreparedInput>> kept = std::make_shared<std::vector<PreparedInput>>();
  std::vector<PreparedInput> job;
};
JobInputs split_prepared(std::vector<PreparedInput>& prepared, const Lookup& hits,
                         const std::vector<std::size_t>& missing, bool prepare_all) {
  JobInputs out;
  if (!prepare_all) {
    out.job = std::move(prepared);
    return out;
  }
  out.kept->resize(prepared.size());
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    if (hits.found[i]) (*out.kept)[i] = std::move(prepared[i]);
  }
  for (const std::size_t i : missing) out.job.push_back(std::move(prepared[i]));
  return out;
}

// The job's inputs put back among the kept ones, in input order (empty without prepare_all).
std::vector<PreparedInput> rejoin(bool prepare_all, std::vector<PreparedInput>& kept,
                                  const std::vector<std::size_t>& missing,
                                  std::vector<PreparedInput>& computed) {
  std::vector<PreparedInput> all;
  if (!prepare_all) return all;
  all = std::move(kept);
  for (std::size_t j = 0; j < missing.size(); ++j) all[missing[j]] = std::move(computed[j]);
  return all;
}

}  // namespace

std::string Router::Impl::cache_prefix(const Call& call, std::string_view kind, const InputOptions& o) {
  const serving::ModelSpec& spec = call.lease->spec();
  serving::CacheKey k;
  k.add(call.lease->model().instance).add(spec.name).add(spec.dtype).add(kind);
  k.add(std::uint64_t{o.truncate ? 1U : 0U}).add(std::uint64_t{o.side == TruncationSide::Left ? 1U : 0U});
  k.add(o.prompt).add(std::uint64_t{o.add_special_tokens ? 1U : 0U});
  return k.take();
}

void Router::Impl::respond_here(Call& call, const std::function<Response()>& make) const {
  try {
    finish(call, make());
  } catch (...) {
    const MappedError e = map_exception(std::current_exception(), {});
    fail(call, e.status, e.error_type, e.message, e.param);
  }
}

void Router::Impl::run_embed(std::shared_ptr<Call> call, serving::BatchRunner& runner, std::size_t n,
                             PrepareInput prepare_input, KeyOf key_of, bool prepare_all, Format format) {
  if (!caching() || !key_of) {
    Prepare all = prepare_inputs(n, std::move(prepare_input));
    return run_job(std::move(call), runner, std::move(all), std::move(format));
  }
  workers.post([this, call, &runner, n, prepare_input = std::move(prepare_input), key_of = std::move(key_of),
                prepare_all, format = std::move(format)]() mutable {
    const serving::LoadedModel& m = call->lease->model();
    const bool pooled = &runner == m.embed_runner.get();
    const std::size_t dim = m.embedder->dim();
    auto keys = std::make_shared<std::vector<std::string>>();
    auto hits = std::make_shared<Lookup>(look_up(*cache, *call, n, key_of, *keys, [&](std::size_t floats) {
      return pooled ? floats == dim : dim > 0 && floats % dim == 0;
    }));
    if (hits->missing > 0 && refuse_if_saturated(*call)) return;
    const auto missing = missing_inputs(*hits);
    const Prepare prepare = prepare_inputs(n, prepare_input, prepare_all ? nullptr : hits);
    std::optional<std::vector<PreparedInput>> prepared = prepare_timed(*call, prepare);
    if (!prepared) return;
    if (!prepare_all) {
      for (const Value& v : hits->found) call->tokens += v ? v->tokens : 0;
    }
    // Merges the cached and the computed results (`computed` holds the missing inputs' rows,
    // in order) into what the uncached pipeline gives `format`, storing the computed ones.
    auto merge = [this, call, n, pooled, dim, hits, missing, keys](
                     Embeddings computed_pooled, std::vector<Embeddings> computed_tokens,
                     std::vector<std::size_t> computed_counts, std::vector<PreparedInput> all_prepared) {
      auto r = std::make_shared<EmbedResult>();
      r->tokens.resize(n);
      if (pooled) {
        r->pooled = Embeddings(n, dim);
      } else {
        r->per_token.resize(n);
      }
      std::size_t j = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const Value& v = hits->found[i];
        if (v) {
          r->tokens[i] = v->tokens;
          if (pooled) {
            std::copy(v->values.begin(), v->values.end(), r->pooled.row(i).begin());
          } else {
            Embeddings t(v->values.size() / dim, dim);
            std::copy(v->values.begin(), v->values.end(), t.values().begin());
            r->per_token[i] = std::move(t);
          }
          continue;
        }
        r->tokens[i] = computed_counts[j];
        if (pooled) {
          const std::span<const float> row = computed_pooled.row(j);
          std::copy(row.begin(), row.end(), r->pooled.row(i).begin());
          if (call->cache_store) cache->insert((*keys)[i], make_value(row, r->tokens[i]));
        } else {
          // A matrix is rebuilt from the model's dim on a hit: one of another width is not stored.
          if (call->cache_store && computed_tokens[j].dim() == dim) {
            cache->insert((*keys)[i], make_value(computed_tokens[j].values(), r->tokens[i]));
          }
          r->per_token[i] = std::move(computed_tokens[j]);
        }
        ++j;
      }
      r->prepared = std::move(all_prepared);
      return r;
    };
    if (missing->empty()) {
      // Every input was found: answered here, without the scheduler. Its timings are zero.
      call->computed = true;
      call->cache_state = "hit";
      std::vector<PreparedInput> all = prepare_all ? std::move(*prepared) : std::vector<PreparedInput>{};
      auto r = merge({}, {}, {}, std::move(all));
      return respond_here(*call, [&] { return format(*r); });
    }
    call->cache_state = missing->size() == n ? "miss" : "partial";
    // The job computes the missing inputs; with prepare_all the others stay here for format.
    JobInputs split = split_prepared(*prepared, *hits, *missing, prepare_all);
    auto kept = split.kept;
    std::vector<PreparedInput> job_inputs = std::move(split.job);
    auto job = std::make_shared<serving::EmbedJob>(
        runner, std::move(job_inputs), pooled ? dim : 0, call->cancelled,
        [this, call, prepare_all, missing, kept, merge = std::move(merge), format = std::move(format)](
            serving::EmbedJob& done, serving::Outcome outcome) mutable {
          call->job = done.timings();
          call->computed = outcome == serving::Outcome::Done;
          if (fail_outcome(*call, done, outcome)) return;
          auto computed_pooled = std::make_shared<Embeddings>(std::move(done.pooled));
          auto computed_tokens = std::make_shared<std::vector<Embeddings>>(std::move(done.per_token));
          auto counts = std::make_shared<std::vector<std::size_t>>();
          for (const PreparedInput& in : done.prepared()) counts->push_back(in.tokens);
          auto inputs = std::make_shared<std::vector<PreparedInput>>(done.take_prepared());
          respond_on_worker(call, [=, merge = std::move(merge), format = std::move(format)] {
            std::vector<PreparedInput> all = rejoin(prepare_all, *kept, *missing, *inputs);
            auto r = merge(std::move(*computed_pooled), std::move(*computed_tokens), std::move(*counts),
                           std::move(all));
            return format(*r);
          });
        });
    scheduler.submit(std::move(job));
  });
}

void Router::Impl::run_classify(std::shared_ptr<Call> call, serving::ClassifyRunner& runner,
                                std::size_t labels, std::size_t n, PrepareInput prepare_input, KeyOf key_of,
                                bool prepare_all, ClassifyFormat format) {
  if (!caching() || !key_of) {
    Prepare all = prepare_inputs(n, std::move(prepare_input));
    return run_classify_job(std::move(call), runner, labels, std::move(all), std::move(format));
  }
  workers.post([this, call, &runner, labels, n, prepare_input = std::move(prepare_input),
                key_of = std::move(key_of), prepare_all, format = std::move(format)]() mutable {
    auto keys = std::make_shared<std::vector<std::string>>();
    auto hits = std::make_shared<Lookup>(
        look_up(*cache, *call, n, key_of, *keys, [labels](std::size_t floats) { return floats == labels; }));
    if (hits->missing > 0 && refuse_if_saturated(*call)) return;
    const auto missing = missing_inputs(*hits);
    const Prepare prepare = prepare_inputs(n, prepare_input, prepare_all ? nullptr : hits);
    std::optional<std::vector<PreparedInput>> prepared = prepare_timed(*call, prepare);
    if (!prepared) return;
    if (!prepare_all) {
      for (const Value& v : hits->found) call->tokens += v ? v->tokens : 0;
    }
    auto merge = [this, call, n, labels, hits, keys](const std::vector<float>& computed_logits,
                                                     const std::vector<std::size_t>& computed_counts,
                                                     std::vector<PreparedInput> all_prepared) {
      auto r = std::make_shared<ClassifyResult>();
      r->labels = labels;
      r->logits.resize(n * labels);
      r->tokens.resize(n);
      std::size_t j = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const Value& v = hits->found[i];
        if (v) {
          r->tokens[i] = v->tokens;
          std::copy(v->values.begin(), v->values.end(),
                    r->logits.begin() + static_cast<std::ptrdiff_t>(i * labels));
          continue;
        }
        r->tokens[i] = computed_counts[j];
        const std::span<const float> row(computed_logits.data() + j * labels, labels);
        std::copy(row.begin(), row.end(), r->logits.begin() + static_cast<std::ptrdiff_t>(i * labels));
        if (call->cache_store) cache->insert((*keys)[i], make_value(row, r->tokens[i]));
        ++j;
      }
      r->prepared = std::move(all_prepared);
      return r;
    };
    if (missing->empty()) {
      call->computed = true;
      call->cache_state = "hit";
      std::vector<PreparedInput> all = prepare_all ? std::move(*prepared) : std::vector<PreparedInput>{};
      auto r = merge({}, {}, std::move(all));
      return respond_here(*call, [&] { return format(*r); });
    }
    call->cache_state = missing->size() == n ? "miss" : "partial";
    JobInputs split = split_prepared(*prepared, *hits, *missing, prepare_all);
    auto kept = split.kept;
    std::vector<PreparedInput> job_inputs = std::move(split.job);
    auto job = std::make_shared<serving::ClassifyJob>(
        runner, std::move(job_inputs), labels, call->cancelled,
        [this, call, prepare_all, missing, kept, merge = std::move(merge), format = std::move(format)](
            serving::ClassifyJob& done, serving::Outcome outcome) mutable {
          call->job = done.timings();
          call->computed = outcome == serving::Outcome::Done;
          if (fail_outcome(*call, done, outcome)) return;
          auto logits = std::make_shared<std::vector<float>>(std::move(done.logits));
          auto counts = std::make_shared<std::vector<std::size_t>>();
          for (const PreparedInput& in : done.prepared()) counts->push_back(in.tokens);
          auto inputs = std::make_shared<std::vector<PreparedInput>>(done.take_prepared());
          respond_on_worker(call, [=, merge = std::move(merge), format = std::move(format)] {
            std::vector<PreparedInput> all = rejoin(prepare_all, *kept, *missing, *inputs);
            auto r = merge(*logits, *counts, std::move(all));
            return format(*r);
          });
        });
    scheduler.submit(std::move(job));
  });
}

}  // namespace warden::http
