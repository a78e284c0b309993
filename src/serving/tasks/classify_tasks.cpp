// The scoring tasks (classify_tasks.hpp): a classifier's labels, and reranking by a
// cross-encoder or by an embedder's token vectors.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "serving/results.hpp"
#include "serving/tasks/task_error.hpp"
#include "serving/tasks/tasks.hpp"
#include "serving/vector_rerank.hpp"

namespace warden::serving::tasks {

namespace {

// The reranking tasks need one relevance logit per pair; a classifier with several labels has
// no single relevance (TEI refuses it the same way).
void require_reranker(const classify::SequenceClassifier& c, std::string_view asker) {
  if (c.kind() != classify::ClassifierKind::Reranker) {
    throw TaskError(Fault::ModelCannot,
                    fmt::format("model {} is a classifier with {} labels: {} needs a reranker (one label)",
                                c.id(), c.labels().size(), asker));
  }
}

// `o` with a rerank's instruction: the prompt of a yes/no reranker (Qwen3-Reranker); any other
// model (c null: a reranking by vectors) takes none.
embed::InputOptions with_instruction(embed::InputOptions o, const classify::SequenceClassifier* c,
                                     const std::string& instruction, std::string_view model) {
  if (instruction.empty()) return o;
  if (c == nullptr || !c->takes_instruction()) {
    throw TaskError(
        Fault::Invalid,
        fmt::format("`instruction` is for yes/no rerankers (Qwen3-Reranker); model {} takes none", model),
        "instruction");
  }
  o.prompt = instruction;
  return o;
}

// Each distinct query once, and each text's query among them.
struct Queries {
  std::vector<std::string> distinct;
  std::vector<std::size_t> of_text;
};

Queries distinct_queries(const Rerank& task) {
  Queries q;
  for (std::size_t i = 0; i < task.texts.size(); ++i) {
    const std::string& query = task.query(i);
    const auto at = std::find(q.distinct.begin(), q.distinct.end(), query);
    q.of_text.push_back(static_cast<std::size_t>(at - q.distinct.begin()));
    if (at == q.distinct.end()) q.distinct.push_back(query);
  }
  return q;
}

// Reranking by token vectors: each distinct query encoded once, as a query, the texts as
// documents, all in one retrieval job (so texts of many requests share batches, and the
// result cache keeps each one's outputs, shared with EmbedRetrieval); the similarity is the
// score as it is.
Tasks::Job<std::vector<float>> vector_rerank_job(Pipeline& pipeline, const ModelLease& lease,
                                                 std::shared_ptr<const Rerank> t,
                                                 const embed::InputOptions& options, std::string_view asker) {
  const embed::Embedder& e = Tasks::embedder_of(lease, asker);
  (void)with_instruction(options, nullptr, t->instruction, lease.spec().name);
  std::shared_ptr<const VectorRerank> scorer;
  try {
    scorer = std::make_shared<const VectorRerank>(e, lease.spec().name, t->weights);
  } catch (const Error& err) {
    throw TaskError(Fault::ModelCannot, err.what(), "retrieval_weights");
  }
  auto queries = std::make_shared<const Queries>(distinct_queries(*t));
  const std::size_t nq = queries->distinct.size();
  embed::InputOptions q = options;
  q.query = true;
  embed::InputOptions o = options;
  o.query = false;
  Tasks::Job<std::vector<float>> job;
  job.request = InferenceRequest::on(lease.model(), Output::Retrieval);
  job.request.inputs = nq + t->texts.size();
  job.request.prepare = [&e, t, queries, nq, o, q](std::size_t i) {
    if (i < nq) return prepare_text(e, queries->distinct[i], q, Field{"query", nq > 1}, i);
    return prepare_text(e, t->texts[i - nq], o, Field{t->texts_field}, i - nq);
  };
  if (pipeline.caching()) {
    job.request.key = [query_prefix = Pipeline::cache_prefix(lease, "retrieval", q),
                       prefix = Pipeline::cache_prefix(lease, "retrieval", o), t, queries,
                       nq](std::size_t i) {
      return i < nq ? text_key(query_prefix, queries->distinct[i]) : text_key(prefix, t->texts[i - nq]);
    };
  }
  job.finish = [scorer, queries, nq](Inference& r) {
    const std::vector<embed::RetrievalVectors>& outs = r.result.retrieval;
    std::vector<float> scores(outs.size() - nq);
    for (std::size_t i = 0; i < scores.size(); ++i) {
      scores[i] = scorer->score(outs[queries->of_text[i]], outs[nq + i]);
    }
    return scores;
  };
  return job;
}

}  // namespace

void Tasks::classify(Context context, Classify task, Then<Classified> then) {
  check_batch(task.inputs.size(), limits_, task.field.name);
  auto t = std::make_shared<const Classify>(std::move(task));
  const std::string asker = context.asker;
  run<Classified>(
      context, {ModelKind::Classifier, ModelKind::Reranker},
      [this, t, asker](const ModelLease& lease) {
        const classify::SequenceClassifier& c = classifier_of(lease, asker);
        const embed::InputOptions o = classify_options(t->tokenization, limits_);
        Job<Classified> job;
        job.request = InferenceRequest::on(lease.model(), Output::Logits);
        job.request.inputs = t->inputs.size();
        job.request.prepare = [&c, t, o](std::size_t i) {
          const Classify::Text& in = t->inputs[i];
          return prepare_pair(c, in.text, in.pair ? std::optional<std::string_view>(*in.pair) : std::nullopt,
                              o, t->field, i);
        };
        if (pipeline_.caching()) {
          job.request.key = [prefix = Pipeline::cache_prefix(lease, "logits", o), t](std::size_t i) {
            const Classify::Text& in = t->inputs[i];
            return pair_key(prefix, in.text, in.pair ? &*in.pair : nullptr);
          };
        }
        job.finish = [t, labels = &c.labels()](Inference& r) {
          Classified out;
          out.labels = labels;
          for (std::size_t i = 0; i < t->inputs.size(); ++i) {
            out.scores.push_back(class_scores(r.result.rows.row(i), t->raw_scores));
          }
          return out;
        };
        return job;
      },
      std::move(then));
}

void Tasks::rerank(Context context, Rerank task, Then<std::vector<float>> then) {
  if (task.texts.empty()) {
    throw TaskError(Fault::Invalid, fmt::format("`{}` cannot be empty", task.texts_field), task.texts_field);
  }
  check_batch(task.texts.size(), limits_, task.texts_field);
  auto t = std::make_shared<const Rerank>(std::move(task));
  const std::string asker = context.asker;
  run<std::vector<float>>(
      context, {ModelKind::Reranker},
      [this, t, asker](const ModelLease& lease) {
        const embed::InputOptions options = classify_options(t->tokenization, limits_);
        if (reranks_by_vectors(lease.model())) return vector_rerank_job(pipeline_, lease, t, options, asker);
        const classify::SequenceClassifier& c = classifier_of(lease, asker);
        require_reranker(c, asker);
        const embed::InputOptions o = with_instruction(options, &c, t->instruction, lease.spec().name);
        Job<std::vector<float>> job;
        job.request = InferenceRequest::on(lease.model(), Output::Logits);
        job.request.inputs = t->texts.size();
        job.request.prepare = [&c, t, o](std::size_t i) {
          return prepare_pair(c, t->query(i), t->texts[i], o, Field{t->texts_field}, i);
        };
        if (pipeline_.caching()) {
          job.request.key = [prefix = Pipeline::cache_prefix(lease, "logits", o), t](std::size_t i) {
            return pair_key(prefix, t->query(i), &t->texts[i]);
          };
        }
        job.finish = [t](Inference& r) {
          // One label: one logit per text; the sigmoid unless raw_scores.
          const std::span<const float> logits = r.result.rows.values();
          std::vector<float> scores(logits.begin(), logits.end());
          if (!t->raw_scores) {
            for (float& s : scores) s = classify::sigmoid(s);
          }
          return scores;
        };
        return job;
      },
      std::move(then));
}

}  // namespace warden::serving::tasks
