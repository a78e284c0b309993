// The embedding tasks (embed_tasks.hpp) on an embedder: checks, then one pipeline run, then
// the rows finished as sentence-transformers does (Matryoshka cut, then normalisation).

#include <algorithm>
#include <atomic>
#include <tuple>

#include <fmt/format.h>

#include "serving/results.hpp"
#include "serving/tasks/task_error.hpp"
#include "serving/tasks/tasks.hpp"

namespace warden::serving::tasks {

namespace {

// Invalid (naming `field`) unless `dimensions` is absent or between 1 and the model's `dim`.
void check_dims(std::optional<std::size_t> dimensions, std::size_t dim, const std::string& field) {
  try {
    check_dimensions(dimensions, dim, field);
  } catch (const Error& e) {
    throw TaskError(Fault::Invalid, e.what(), field);
  }
}

// The request's options, with a prompt by purpose when the model has one.
embed::InputOptions options_for(const embed::Embedder& e, const Embed& task, const Limits& limits) {
  embed::InputOptions o = embed_options(e, task.tokenization, limits);
  apply_purposes(e, task.purposes, o);
  return o;
}

// Inputs as one pipeline request on `lease`'s model: each prepared by `prepare`, keyed
// under `kind` when the cache is on.
template <class Prepare>
InferenceRequest inputs_job(Pipeline& pipeline, const ModelLease& lease, Output output, std::string_view kind,
                            const embed::InputOptions& o, std::shared_ptr<const std::vector<Input>> inputs,
                            Prepare prepare) {
  InferenceRequest job = InferenceRequest::on(lease.model(), output);
  job.inputs = inputs->size();
  job.prepare = std::move(prepare);
  if (pipeline.caching()) {
    job.key = [prefix = Pipeline::cache_prefix(lease, kind, o), inputs](std::size_t i) {
      return input_key(prefix, (*inputs)[i]);
    };
  }
  return job;
}

std::string output_list(const embed::RetrievalOutputs& o) {
  std::vector<std::string_view> names;
  if (o.dense) names.emplace_back("dense");
  if (o.sparse) names.emplace_back("sparse");
  if (o.multi) names.emplace_back("multi");
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

// ModelCannot naming what the model can give when it cannot give everything asked for.
void require_outputs(const ModelLease& lease, const embed::Embedder& e,
                     const embed::RetrievalOutputs& wanted) {
  const embed::RetrievalOutputs has = e.retrieval_outputs();
  std::string lacking;
  for (const auto& [asked, given, name] :
       {std::tuple{wanted.dense, has.dense, "dense"}, std::tuple{wanted.sparse, has.sparse, "sparse"},
        std::tuple{wanted.multi, has.multi, "multi"}}) {
    if (asked && !given) lacking += lacking.empty() ? name : std::string(", ") + name;
  }
  if (lacking.empty()) return;
  throw TaskError(
      Fault::ModelCannot,
      fmt::format("model {} cannot give {} output: it gives {} (sparse needs a lexical head such as "
                  "bge-m3's sparse_linear.pt, multi a multi-vector head such as its colbert_linear.pt)",
                  lease.spec().name, lacking, output_list(has)),
      "outputs");
}

}  // namespace

void Tasks::embed(Context context, Embed task, Then<Embeddings> then) {
  // A malformed request is the client's first problem: before an unknown model or one of the wrong kind.
  check_batch(task.inputs.size(), limits_, task.field.name);
  if (task.refuse_empty) refuse_empty(task.inputs, task.field);
  auto t = std::make_shared<const Embed>(std::move(task));
  const std::string asker = context.asker;
  run<Embeddings>(
      context, {ModelKind::Embedding},
      [this, t, asker](const ModelLease& lease) {
        const embed::Embedder& e = embedder_of(lease, asker, /*dense=*/true);
        check_dims(t->dimensions, e.dim(), t->dimensions_field);
        const embed::InputOptions o = options_for(e, *t, limits_);
        check_response_floats(t->inputs.size() * t->dimensions.value_or(e.dim()) * t->copies, limits_,
                              t->field.name);
        auto inputs = std::shared_ptr<const std::vector<Input>>(t, &t->inputs);
        Job<Embeddings> job;
        job.request =
            inputs_job(pipeline_, lease, Output::Pooled, "pooled", o, inputs,
                       [&e, t, o](std::size_t i) { return prepare_input(e, t->inputs[i], o, t->field, i); });
        job.finish = [t, unit = e.unit_vectors()](Inference& r) {
          return finish_rows(std::move(r.result.rows), t->dimensions, t->normalize, unit);
        };
        return job;
      },
      std::move(then));
}

void Tasks::embed_tokens(Context context, EmbedTokens task, Then<std::vector<Embeddings>> then) {
  check_batch(task.inputs.size(), limits_, task.field.name);
  refuse_empty(task.inputs, task.field);
  auto t = std::make_shared<const EmbedTokens>(std::move(task));
  const std::string asker = context.asker;
  run<std::vector<Embeddings>>(
      context, {ModelKind::Embedding},
      [this, t, asker](const ModelLease& lease) {
        const embed::Embedder& e = embedder_of(lease, asker);
        const embed::InputOptions o = embed_options(e, t->tokenization, limits_);
        // tokens x dim values: counted as the inputs are tokenized, so that an answer over
        // the limit is refused before anything is computed.
        auto counted = std::make_shared<std::atomic<std::size_t>>(0);
        auto inputs = std::shared_ptr<const std::vector<Input>>(t, &t->inputs);
        Job<std::vector<Embeddings>> job;
        job.request =
            inputs_job(pipeline_, lease, Output::PerToken, "tokens", o, inputs,
                       [limits = limits_, &e, t, o, counted](std::size_t i) {
                         embed::PreparedInput p = prepare_input(e, t->inputs[i], o, t->field, i);
                         const std::size_t floats = p.tokens * e.token_dim();
                         check_response_floats(counted->fetch_add(floats) + floats, limits, t->field.name);
                         return p;
                       });
        job.finish = [limits = limits_, t](Inference& r) {
          // Inputs found in the result cache were not tokenized: the whole answer is counted again.
          std::size_t floats = 0;
          for (const Embeddings& tokens : r.result.per_token) floats += tokens.values().size();
          check_response_floats(floats, limits, t->field.name);
          return std::move(r.result.per_token);
        };
        return job;
      },
      std::move(then));
}

void Tasks::similarity(Context context, Similarity task, Then<std::vector<float>> then) {
  check_batch(task.sentences.size() + 1, limits_, "sentences");
  if (task.source.empty())
    throw TaskError(Fault::Empty, "`source_sentence` cannot be empty", "source_sentence");
  refuse_empty(task.sentences, Field{"sentences"});
  auto t = std::make_shared<const Similarity>(std::move(task));
  const std::string asker = context.asker;
  run<std::vector<float>>(
      context, {ModelKind::Embedding},
      [this, t, asker](const ModelLease& lease) {
        const embed::Embedder& e = embedder_of(lease, asker, /*dense=*/true);
        const embed::InputOptions o = embed_options(e, t->tokenization, limits_);
        // Input 0 is the source, input i the sentence i - 1.
        auto text = [t](std::size_t i) -> const std::string& {
          return i == 0 ? t->source : t->sentences[i - 1];
        };
        Job<std::vector<float>> job;
        job.request = InferenceRequest::on(lease.model(), Output::Pooled);
        job.request.inputs = t->sentences.size() + 1;
        job.request.prepare = [&e, t, o](std::size_t i) {
          if (i == 0) return prepare_text(e, t->source, o, Field{"source_sentence", false}, 0);
          return prepare_text(e, t->sentences[i - 1], o, Field{"sentences"}, i - 1);
        };
        if (pipeline_.caching()) {
          job.request.key = [prefix = Pipeline::cache_prefix(lease, "pooled", o), text](std::size_t i) {
            return text_key(prefix, text(i));
          };
        }
        job.finish = [unit = e.unit_vectors()](Inference& r) {
          // Cosine similarity of the source with each sentence: dot products of unit vectors.
          const Embeddings rows = finish_rows(std::move(r.result.rows), std::nullopt, true, unit);
          const std::span<const float> source = rows.row(0);
          std::vector<float> scores;
          for (std::size_t i = 1; i < rows.rows(); ++i) {
            const std::span<const float> s = rows.row(i);
            double dot = 0.0;
            for (std::size_t k = 0; k < s.size(); ++k)
              dot += static_cast<double>(source[k]) * static_cast<double>(s[k]);
            scores.push_back(static_cast<float>(dot));
          }
          return scores;
        };
        return job;
      },
      std::move(then));
}

void Tasks::embed_retrieval(Context context, EmbedRetrieval task, Then<Retrieved> then) {
  check_batch(task.inputs.size(), limits_, task.field.name);
  refuse_empty(task.inputs, task.field);
  auto t = std::make_shared<const EmbedRetrieval>(std::move(task));
  const std::string asker = context.asker;
  run<Retrieved>(
      context, {ModelKind::Embedding},
      [this, t, asker](const ModelLease& lease) {
        const embed::Embedder& e = embedder_of(lease, asker);
        const embed::RetrievalOutputs wanted = t->outputs.value_or(e.retrieval_outputs());
        require_outputs(lease, e, wanted);
        if (wanted.dense) check_dims(t->dimensions, e.dim(), "dimensions");
        embed::InputOptions o = embed_options(e, t->tokenization, limits_);
        o.query = t->query;
        const std::size_t n = t->inputs.size();
        const std::size_t dense_floats = wanted.dense ? t->dimensions.value_or(e.dim()) : 0;
        // Per token, at most one sparse entry (an id and a weight) and one multi-vector row.
        const std::size_t per_token = (wanted.sparse ? 2 : 0) + (wanted.multi ? e.multi_vector_dim() : 0);
        check_response_floats(n * dense_floats, limits_, t->field.name);
        auto counted = std::make_shared<std::atomic<std::size_t>>(n * dense_floats);
        auto inputs = std::shared_ptr<const std::vector<Input>>(t, &t->inputs);
        Job<Retrieved> job;
        job.request =
            inputs_job(pipeline_, lease, Output::Retrieval, "retrieval", o, inputs,
                       [limits = limits_, &e, t, o, per_token, counted](std::size_t i) {
                         embed::PreparedInput p = prepare_input(e, t->inputs[i], o, t->field, i);
                         const std::size_t floats = p.tokens * per_token;
                         check_response_floats(counted->fetch_add(floats) + floats, limits, t->field.name);
                         return p;
                       });
        job.finish = [limits = limits_, t, wanted, unit = e.unit_vectors()](Inference& r) {
          Retrieved out{wanted, std::move(r.result.retrieval)};
          // Inputs found in the result cache were not counted as they were tokenized.
          std::size_t floats = 0;
          for (const embed::RetrievalVectors& v : out.vectors) {
            floats += (wanted.dense ? t->dimensions.value_or(v.dense.size()) : 0) +
                      (wanted.sparse ? 2 * v.sparse.size() : 0) +
                      (wanted.multi ? v.multi.values().size() : 0);
          }
          check_response_floats(floats, limits, t->field.name);
          for (embed::RetrievalVectors& v : out.vectors) {
            if (wanted.dense) {
              Embeddings row(1, v.dense.size());
              std::copy(v.dense.begin(), v.dense.end(), row.values().begin());
              row = finish_rows(std::move(row), t->dimensions, t->normalize, unit);
              const std::span<const float> finished = row.row(0);
              v.dense.assign(finished.begin(), finished.end());
            } else {
              v.dense.clear();
            }
            v.sparse =
                wanted.sparse ? prune_sparse(std::move(v.sparse), t->top_k, t->threshold) : SparseVector{};
            if (!wanted.multi) v.multi = Embeddings();
          }
          return out;
        };
        return job;
      },
      std::move(then));
}

}  // namespace warden::serving::tasks
