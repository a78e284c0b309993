// The sequence-classification routes: TEI's /rerank and /predict, Cohere/Jina's
// /v1/rerank. Like the embedding routes, each parses on the I/O thread, tokenizes on a
// worker, computes in the scheduler's batches (pairs of many requests share a batch, a
// large request is split) and formats its answer on a worker (router.hpp).

#include <algorithm>
#include <cmath>
#include <exception>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "http/api_error.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"
#include "http/router_metrics.hpp"
#include "serving/results.hpp"

namespace warden::http {

namespace {

// The reranking routes need one relevance logit per pair; a classifier with several labels
// has no single relevance (TEI refuses it the same way).
void require_reranker(const SequenceClassifier& c, std::string_view route) {
  if (c.kind() != ClassifierKind::Reranker) {
    throw ApiError(424, "Backend",
                   fmt::format("model {} is a classifier with {} labels: {} needs a reranker (one label)",
                               c.id(), c.labels().size(), route));
  }
}

}  // namespace

InputOptions Router::Impl::classify_options(std::optional<bool> truncate, bool left) const {
  InputOptions o;
  o.truncate = truncate.value_or(options.auto_truncate);
  o.side = left ? TruncationSide::Left : TruncationSide::Right;
  return o;
}

namespace {

// `o` with a rerank request's instruction: the prompt of a yes/no reranker (Qwen3-Reranker); any
// other model (c null: a reranking by vectors) takes none, which is a 422 naming the field.
InputOptions with_instruction(InputOptions o, const SequenceClassifier* c, const std::string& instruction,
                              std::string_view model) {
  if (instruction.empty()) return o;
  if (c == nullptr || !c->takes_instruction()) {
    throw ApiError(
        422, "Validation",
        fmt::format("`instruction` is for yes/no rerankers (Qwen3-Reranker); model {} takes none", model),
        "instruction");
  }
  o.prompt = instruction;
  return o;
}

// Prepares the (query, passage) pair i on a worker, naming the passage at fault.
PreparedInput prepare_pair(const SequenceClassifier& c, const std::string& query, const std::string& passage,
                           const InputOptions& o, std::size_t i, std::string_view param) {
  try {
    return c.prepare(query, passage, o);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::InvalidInput && e.kind() != ErrorKind::InvalidArgument) throw;
    throw ApiError(422, "Validation", fmt::format("{}[{}]: {}", param, i, e.what()), std::string(param));
  }
}

}  // namespace

namespace {

// TEI's /rerank answer: [{"index", "score"[, "text"]}] by descending score.
// With `guard`, each result also carries the guard's verdict on its text.
Response tei_rerank_answer(const RerankRequest& request, const std::vector<float>& scores,
                           const Router::Impl::PassageVerdicts* verdicts) {
  JsonWriter w;
  w.begin_array();
  for (const std::size_t i : serving::by_score(scores)) {
    w.begin_object();
    w.key("index").value(static_cast<std::uint64_t>(i));
    w.key("score").value(scores[i]);
    if (request.return_text) w.key("text").value(request.texts[i]);
    if (verdicts != nullptr && (*verdicts)[i]) w.key("guard").raw((*verdicts)[i]->to_json());
    w.end_object();
  }
  w.end_array();
  return json_response(200, w.take());
}

// One answer for every documents dialect: Cohere's id, results and meta; Jina's and vLLM's
// usage; `data`, the same list, for the clients that read that name; Mixedbread's fields
// (each result's `score`, `object` and `input` when asked for; the list's `object`, `top_k`
// and `return_input`).
// The documents a documents-dialect answer returns: the top_n by score.
std::vector<std::size_t> returned_documents(const DocumentsRerankRequest& request,
                                            const std::vector<float>& scores) {
  std::vector<std::size_t> order = serving::by_score(scores);
  if (request.top_n && *request.top_n < order.size()) order.resize(*request.top_n);
  return order;
}

Response documents_rerank_answer(const DocumentsRerankRequest& request, const std::string& model_id,
                                 int version, const std::vector<float>& scores, std::size_t tokens,
                                 const Router::Impl::PassageVerdicts* verdicts) {
  const std::vector<std::size_t> order = returned_documents(request, scores);
  auto write_results = [&](JsonWriter& w) {
    w.begin_array();
    for (const std::size_t i : order) {
      w.begin_object();
      w.key("index").value(static_cast<std::uint64_t>(i));
      w.key("relevance_score").value(scores[i]);
      if (request.return_documents) {
        w.key("document").begin_object().key("text").value(request.documents[i]).end_object();
      }
      w.key("score").value(scores[i]);
      if (request.return_input) w.key("input").raw(request.inputs_as_sent[i]);
      if (verdicts != nullptr && (*verdicts)[i]) w.key("guard").raw((*verdicts)[i]->to_json());
      w.key("object").value("rank_result");
      w.end_object();
    }
    w.end_array();
  };
  JsonWriter w;
  w.begin_object();
  w.key("id").value(response_id());
  // The response names the model that answered: the name it is served under.
  w.key("model").value(model_id);
  w.key("results");
  write_results(w);
  w.key("data");
  write_results(w);
  w.key("object").value("list");
  w.key("top_k").value(static_cast<std::uint64_t>(order.size()));
  w.key("return_input").value(request.return_input);
  w.key("meta").begin_object();
  w.key("api_version").begin_object().key("version").value(std::to_string(version)).end_object();
  w.key("billed_units").begin_object().key("search_units").value(1).end_object();
  w.end_object();
  w.key("usage").begin_object();
  w.key("prompt_tokens").value(static_cast<std::uint64_t>(tokens));
  w.key("completion_tokens").value(0);
  w.key("total_tokens").value(static_cast<std::uint64_t>(tokens));
  w.end_object();
  w.end_object();
  return json_response(200, w.take());
}

}  // namespace

void Router::Impl::rerank(std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<RerankRequest>(parse_tei_rerank(body));
  check_batch_size(request->texts.size(), "texts");
  if (request->guard) (void)require_guard();  // before any compute
  const std::shared_ptr<const std::vector<std::string>> texts(request, &request->texts);
  // TEI's answer returns every text: with `guard`, every one is judged.
  const auto next = [this, call, request, texts](std::vector<float> scores, std::size_t /*tokens*/) {
    answer_rerank(call, request->guard, serving::by_score(scores), texts, "texts",
                  [request, scores](const PassageVerdicts* verdicts) {
                    return tei_rerank_answer(*request, scores, verdicts);
                  });
  };
  with_model(call, request->model, {ModelKind::Reranker}, [this, call, request, texts, next] {
    InputOptions o =
        classify_options(request->truncate, request->truncation_direction == TruncationDirection::Left);
    if (reranks_by_vectors(*call)) {
      (void)with_instruction(o, nullptr, request->instruction, call->lease->spec().name);
      // Similarities (MaxSim, bge-m3's weighted sum) are the scores as they are: no sigmoid.
      rerank_by_vectors(call, std::shared_ptr<const std::string>(request, &request->query), texts, "texts", o,
                        request->retrieval_weights, next);
      return;
    }
    const SequenceClassifier& c = classifier(*call);
    require_reranker(c, call->route);
    o = with_instruction(o, &c, request->instruction, call->lease->spec().name);
    const std::size_t query_chars = code_points(request->query);
    for (const std::string& t : request->texts) call->characters += query_chars + code_points(t);
    auto prepare = [&c, request, o](std::size_t i) {
      return prepare_pair(c, request->query, request->texts[i], o, i, "texts");
    };
    serving::InferenceRequest job =
        serving::InferenceRequest::on(call->lease->model(), serving::Output::Logits);
    job.inputs = request->texts.size();
    job.prepare = std::move(prepare);
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, "logits", o), request](std::size_t i) {
        return serving::pair_key(prefix, request->query, &request->texts[i]);
      };
    }
    infer_then(call, std::move(job), [request, next](serving::Inference& r) {
      // One label: one logit per text.
      const std::span<const float> logits = r.result.rows.values();
      std::vector<float> scores(logits.begin(), logits.end());
      if (!request->raw_scores) {
        for (float& s : scores) s = sigmoid(s);
      }
      next(std::move(scores), 0);
    });
  });
}

void Router::Impl::documents_rerank(std::shared_ptr<Call> call, std::string_view body, int version) {
  auto request = std::make_shared<DocumentsRerankRequest>(parse_documents_rerank(body));
  check_batch_size(request->documents.size(), request->documents_field);
  if (request->guard) (void)require_guard();  // before any compute
  const std::shared_ptr<const std::vector<std::string>> documents(request, &request->documents);
  with_model(call, request->model, {ModelKind::Reranker}, [this, call, request, version, documents] {
    InputOptions o = classify_options(std::nullopt, false);
    const std::string model_id = call->lease->spec().name;
    // With `guard`, the top_n documents the answer returns are judged.
    const auto next = [this, call, request, documents, model_id, version](std::vector<float> scores,
                                                                          std::size_t tokens) {
      answer_rerank(call, request->guard, returned_documents(*request, scores), documents,
                    request->documents_field,
                    [request, model_id, version, scores, tokens](const PassageVerdicts* verdicts) {
                      return documents_rerank_answer(*request, model_id, version, scores, tokens, verdicts);
                    });
    };
    if (reranks_by_vectors(*call)) {
      (void)with_instruction(o, nullptr, request->instruction, model_id);
      rerank_by_vectors(call, std::shared_ptr<const std::string>(request, &request->query), documents,
                        request->documents_field, o, request->retrieval_weights, next);
      return;
    }
    const SequenceClassifier& c = classifier(*call);
    require_reranker(c, call->route);
    o = with_instruction(o, &c, request->instruction, model_id);
    const std::size_t query_chars = code_points(request->query);
    for (const std::string& d : request->documents) call->characters += query_chars + code_points(d);
    auto prepare = [&c, request, o](std::size_t i) {
      return prepare_pair(c, request->query, request->documents[i], o, i, request->documents_field);
    };
    serving::InferenceRequest job =
        serving::InferenceRequest::on(call->lease->model(), serving::Output::Logits);
    job.inputs = request->documents.size();
    job.prepare = std::move(prepare);
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, "logits", o), request](std::size_t i) {
        return serving::pair_key(prefix, request->query, &request->documents[i]);
      };
    }
    infer_then(call, std::move(job), [next](serving::Inference& r) {
      // Cohere's and Jina's relevance scores are probabilities: the sigmoid of the logit.
      const std::span<const float> logits = r.result.rows.values();
      std::vector<float> scores(logits.begin(), logits.end());
      for (float& s : scores) s = sigmoid(s);
      std::size_t tokens = 0;
      for (const std::size_t t : r.tokens) tokens += t;
      next(std::move(scores), tokens);
    });
  });
}

void Router::Impl::answer_rerank(const std::shared_ptr<Call>& call, bool guard,
                                 std::vector<std::size_t> returned,
                                 const std::shared_ptr<const std::vector<std::string>>& texts,
                                 std::string param, std::function<Response(const PassageVerdicts*)> answer) {
  if (!guard) return respond_here(*call, [&] { return answer(nullptr); });
  auto judged = std::make_shared<std::vector<std::string>>();
  judged->reserve(returned.size());
  for (const std::size_t i : returned) judged->push_back((*texts)[i]);
  guard_texts(
      call, judged, std::move(param),
      [returned, n = texts->size(), answer = std::move(answer)](std::vector<guard::GuardResult> verdicts) {
        PassageVerdicts by_index(n);
        for (std::size_t k = 0; k < returned.size(); ++k) by_index[returned[k]] = std::move(verdicts[k]);
        return answer(&by_index);
      });
}

void Router::Impl::predict(std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<PredictRequest>(parse_predict(body));
  check_batch_size(request->inputs.size(), "inputs");
  with_model(call, request->model, {ModelKind::Classifier, ModelKind::Reranker}, [this, call, request] {
    const SequenceClassifier& c = classifier(*call);
    const InputOptions o =
        classify_options(request->truncate, request->truncation_direction == TruncationDirection::Left);
    for (const PredictInput& in : request->inputs) {
      call->characters += code_points(in.text) + (in.text_pair ? code_points(*in.text_pair) : 0);
    }
    auto prepare = [&c, request, o](std::size_t i) {
      const PredictInput& in = request->inputs[i];
      try {
        return c.prepare(in.text,
                         in.text_pair ? std::optional<std::string_view>(*in.text_pair) : std::nullopt, o);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::InvalidInput && e.kind() != ErrorKind::InvalidArgument) throw;
        throw ApiError(422, "Validation", fmt::format("inputs[{}]: {}", i, e.what()), "inputs");
      }
    };
    serving::InferenceRequest job =
        serving::InferenceRequest::on(call->lease->model(), serving::Output::Logits);
    job.inputs = request->inputs.size();
    job.prepare = std::move(prepare);
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, "logits", o), request](std::size_t i) {
        const PredictInput& in = request->inputs[i];
        return serving::pair_key(prefix, in.text, in.text_pair ? &*in.text_pair : nullptr);
      };
    }
    const std::vector<std::string>* labels = &c.labels();
    infer(call, std::move(job), [request, labels](serving::Inference& r) {
      JsonWriter w;
      if (!request->single) w.begin_array();
      for (std::size_t i = 0; i < r.tokens.size(); ++i) {
        const std::span<const float> row = r.result.rows.row(i);
        const std::vector<float> scores = serving::class_scores(row, request->raw_scores);
        w.begin_array();
        for (const std::size_t k : serving::by_score(scores)) {
          w.begin_object().key("score").value(scores[k]).key("label").value((*labels)[k]).end_object();
        }
        w.end_array();
      }
      if (!request->single) w.end_array();
      return json_response(200, w.take());
    });
  });
}

}  // namespace warden::http
