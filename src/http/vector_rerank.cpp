// /rerank and its dialects on an embedding model with token vectors (a ColBERT, bge-m3): the
// query (as a query) and the texts (as documents) in one retrieval job, so texts of many
// requests share batches and the result cache keeps each one's outputs (shared with
// /embed_hybrid); scored by serving::VectorRerank.

#include "serving/vector_rerank.hpp"
#include "core/error.hpp"
#include "http/api_error.hpp"
#include "http/router_impl.hpp"
#include "serving/pipeline.hpp"

namespace warden::http {

bool Router::Impl::reranks_by_vectors(const Call& call) {
  return serving::reranks_by_vectors(call.lease->model());
}

void Router::Impl::rerank_by_vectors(const std::shared_ptr<Call>& call,
                                     std::shared_ptr<const std::string> query,
                                     std::shared_ptr<const std::vector<std::string>> texts,
                                     std::string_view param, InputOptions o,
                                     std::optional<RetrievalWeights> weights, ScoresNext next) {
  const Embedder& e = embedder(*call);
  std::shared_ptr<const serving::VectorRerank> scorer;
  try {
    scorer = std::make_shared<const serving::VectorRerank>(e, call->lease->spec().name, weights);
  } catch (const Error& err) {
    throw ApiError(424, "Backend", err.what(), "retrieval_weights");
  }
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
  infer_then(call, std::move(job), [scorer, next = std::move(next)](serving::Inference& r) {
    const std::vector<RetrievalVectors>& outs = r.result.retrieval;
    std::vector<float> scores;
    scores.reserve(outs.size() - 1);
    for (std::size_t i = 1; i < outs.size(); ++i) scores.push_back(scorer->score(outs[0], outs[i]));
    std::size_t tokens = 0;
    for (const std::size_t t : r.tokens) tokens += t;
    next(std::move(scores), tokens);
  });
}

}  // namespace warden::http
