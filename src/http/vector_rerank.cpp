// /rerank and its dialects on an embedding model with token vectors (a ColBERT, bge-m3): the
// query is encoded as a query and each text as a document, all in one retrieval job (so texts
// of many requests share batches, and the result cache keeps each one's vectors), then scored
// as the model's own library scores them (embed/retrieval_scores.hpp): a ColBERT by MaxSim
// (PyLate), bge-m3 by the weighted sum of its dense, sparse and ColBERT scores (FlagEmbedding's
// compute_score; the request's retrieval_weights, else 1 for each output the model has).

#include <fmt/format.h>

#include "embed/retrieval_scores.hpp"
#include "http/api_error.hpp"
#include "http/router_impl.hpp"
#include "serving/pipeline.hpp"

namespace warden::http {

bool Router::Impl::reranks_by_vectors(const Call& call) {
  const serving::LoadedModel& m = call.lease->model();
  return m.embedder != nullptr && m.embedder->retrieval_outputs().multi;
}

void Router::Impl::rerank_by_vectors(const std::shared_ptr<Call>& call,
                                     std::shared_ptr<const std::string> query,
                                     std::shared_ptr<const std::vector<std::string>> texts,
                                     std::string_view param, InputOptions o,
                                     std::optional<RetrievalWeights> weights, ScoresAnswer answer) {
  const Embedder& e = embedder(*call);
  const RetrievalOutputs has = e.retrieval_outputs();
  if (weights) {
    if ((weights->dense > 0 && !has.dense) || (weights->sparse > 0 && !has.sparse) ||
        (weights->multi > 0 && !has.multi)) {
      throw ApiError(424, "Backend",
                     fmt::format("model {} cannot weigh an output it does not give: it gives{}{}{}",
                                 call->lease->spec().name, has.dense ? " dense" : "",
                                 has.sparse ? " sparse" : "", has.multi ? " multi" : ""),
                     "retrieval_weights");
    }
  }
  // A ColBERT alone scores by MaxSim; a model with more outputs by their weighted sum.
  const bool several = has.dense || has.sparse;
  const RetrievalWeights w =
      weights.value_or(RetrievalWeights{has.dense ? 1.0F : 0.0F, has.sparse ? 1.0F : 0.0F, 1.0F});
  const bool maxsim = !several && !weights;
  const std::size_t query_chars = code_points(*query);
  for (const std::string& t : *texts) call->characters += query_chars + code_points(t);
  InputOptions query_options = o;
  query_options.query = true;
  o.query = false;
  serving::InferenceRequest job =
      serving::InferenceRequest::on(call->lease->model(), serving::Output::Retrieval);
  job.inputs = texts->size() + 1;
  job.prepare = [&e, query, texts, o, query_options, param](std::size_t i) {
    if (i == 0) return prepare_one(e, *query, nullptr, query_options, 0, "query");
    return prepare_one(e, (*texts)[i - 1], nullptr, o, i - 1, param);
  };
  if (caching()) {
    job.key = [query_prefix = cache_prefix(*call, "retrieval", query_options),
               prefix = cache_prefix(*call, "retrieval", o), query, texts](std::size_t i) {
      return i == 0 ? serving::text_key(query_prefix, *query) : serving::text_key(prefix, (*texts)[i - 1]);
    };
  }
  infer(call, std::move(job), [w, maxsim, answer = std::move(answer)](serving::Inference& r) {
    const std::vector<RetrievalVectors>& outs = r.result.retrieval;
    std::vector<float> scores;
    scores.reserve(outs.size() - 1);
    for (std::size_t i = 1; i < outs.size(); ++i) {
      scores.push_back(maxsim ? max_sim(outs[0].multi, outs[i].multi) : weighted_score(outs[0], outs[i], w));
    }
    std::size_t tokens = 0;
    for (const std::size_t t : r.tokens) tokens += t;
    return answer(std::move(scores), tokens);
  });
}

}  // namespace warden::http
