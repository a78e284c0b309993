// The sequence-classification routes: TEI's /rerank and /predict, Cohere/Jina's
// /v1/rerank. Like the embedding routes, each parses on the I/O thread, hands its task to
// serving/tasks (a cross-encoder's pairs, or a ColBERT's vectors, of many requests share
// batches) and formats the result on a worker; a rerank with `guard` then has the guard judge
// the texts it returns.

#include "http/classify_routes.hpp"
#include "core/json_writer.hpp"
#include "http/guard_route.hpp"
#include "serving/results.hpp"

namespace warden::http {

// The body.

using namespace body;

namespace {

// [dense, sparse, multi]: three numbers >= 0, not all zero.
std::optional<embed::RetrievalWeights> retrieval_weights(object obj) {
  const std::optional<element> field = optional_field(obj, "retrieval_weights");
  if (!field) return std::nullopt;
  const std::string what =
      "`retrieval_weights` must be [dense, sparse, multi]: three numbers >= 0, not all 0";
  array list;
  if (field->get(list) != simdjson::SUCCESS || list.size() != 3) throw validation(what, "retrieval_weights");
  float w[3] = {0, 0, 0};
  std::size_t i = 0;
  for (const element e : list) {
    double x = 0;
    if (e.get(x) != simdjson::SUCCESS || !(x >= 0) || x > 1e6) throw validation(what, "retrieval_weights");
    w[i++] = static_cast<float>(x);
  }
  if (w[0] + w[1] + w[2] <= 0) throw validation(what, "retrieval_weights");
  return embed::RetrievalWeights{w[0], w[1], w[2]};
}

}  // namespace

RerankRequest parse_tei_rerank(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  RerankRequest request;
  request.query = non_empty_query(obj);
  request.texts = string_list(required_field(obj, "texts"), "texts");
  request.raw_scores = bool_or(obj, "raw_scores", false);
  request.return_text = bool_or(obj, "return_text", false);
  request.guard = bool_or(obj, "guard", false);
  request.truncate = optional_bool(obj, "truncate");
  request.truncation_direction = truncation_direction(obj, TruncationDirection::Right);
  request.model = model_field(obj);
  request.retrieval_weights = retrieval_weights(obj);
  request.instruction = optional_string(obj, "instruction").value_or("");
  return request;
}

DocumentsRerankRequest parse_documents_rerank(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  DocumentsRerankRequest request;
  request.model = model_field(obj);
  request.query = non_empty_query(obj);
  // Cohere, Jina and vLLM send `documents`; llama.cpp's and Mixedbread's /v1/reranking send
  // `input`.
  std::string_view field = "documents";
  if (!optional_field(obj, field) && optional_field(obj, "input")) field = "input";
  array list;
  if (required_field(obj, field).get(list) != simdjson::SUCCESS) {
    throw validation(ticked(field) + " must be a list of strings or of {\"text\": str} objects",
                     std::string(field));
  }
  if (list.size() == 0) throw empty(field);
  request.documents.reserve(list.size());
  request.return_input = bool_or(obj, "return_input", false);
  std::size_t i = 0;
  for (const element e : list) {
    const std::string label = item(field, i++);
    if (request.return_input) request.inputs_as_sent.push_back(simdjson::minify(e));
    std::string_view s;
    object doc;
    if (e.get(s) == simdjson::SUCCESS) {
      request.documents.emplace_back(s);
    } else if (e.get(doc) == simdjson::SUCCESS) {
      // Cohere's and Jina's document objects carry the text in "text".
      const std::optional<element> text = optional_field(doc, "text");
      if (!text) throw validation("missing field `" + label + ".text`", std::string(field));
      request.documents.push_back(string_value(*text, label + ".text", field));
    } else {
      throw validation(ticked(label) + " must be a string or a {\"text\": str} object", std::string(field));
    }
  }
  request.documents_field = std::string(field);
  // Cohere's top_n; Jina's and llama.cpp's top_k. Both at once must agree.
  request.top_n = optional_positive(obj, "top_n");
  const std::optional<std::size_t> top_k = optional_positive(obj, "top_k");
  if (request.top_n && top_k && *request.top_n != *top_k) {
    throw validation("`top_n` and `top_k` are the same setting: give one", "top_k");
  }
  if (!request.top_n) request.top_n = top_k;
  request.return_documents = bool_or(obj, "return_documents", false);
  request.guard = bool_or(obj, "guard", false);
  request.retrieval_weights = retrieval_weights(obj);
  request.instruction = optional_string(obj, "instruction").value_or("");
  return request;
}

namespace {

// One /predict sequence given as a list: [text] or [text, text_pair].
PredictInput predict_sequence(array list, std::string_view label) {
  const std::size_t n = list.size();
  if (n != 1 && n != 2) {
    throw validation(
        ticked(label) + " must be a text [str] or a pair [str, str], not " + std::to_string(n) + " elements",
        "inputs");
  }
  PredictInput in;
  in.text = string_value(first(list), item(label, 0), "inputs");
  if (n == 2) in.text_pair = string_value(second(list), item(label, 1), "inputs");
  return in;
}

}  // namespace

PredictRequest parse_predict(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  PredictRequest request;
  const element field = required_field(obj, "inputs");
  const char* const shape =
      "`inputs` must be a string, a pair [str, str] or a batch [[str], [str, str], ...]";
  std::string_view s;
  array list;
  if (field.get(s) == simdjson::SUCCESS) {
    request.inputs.push_back(PredictInput{std::string(s), std::nullopt});
    request.single = true;
  } else if (field.get(list) != simdjson::SUCCESS) {
    throw validation(shape, "inputs");
  } else if (list.size() == 0) {
    // TEI's deserializer rejects [] (422); every other route answers an empty list with
    // 400 Empty, and so does this one.
    throw empty("inputs");
  } else if (first(list).is_string()) {
    // TEI: a first element that is a string makes the whole list ONE sequence, so ["a", "b"]
    // is one (text, text_pair) pair, never a batch of two texts.
    request.inputs.push_back(predict_sequence(list, "inputs"));
    request.single = true;
  } else if (first(list).is_array()) {
    request.inputs.reserve(list.size());
    std::size_t i = 0;
    for (const element e : list) {
      const std::string label = item("inputs", i++);
      array seq;
      if (e.get(seq) != simdjson::SUCCESS)
        throw validation(ticked(label) + " must be [str] or [str, str]", "inputs");
      request.inputs.push_back(predict_sequence(seq, label));
    }
  } else {
    throw validation(shape, "inputs");
  }
  request.raw_scores = bool_or(obj, "raw_scores", false);
  request.truncate = optional_bool(obj, "truncate");
  request.truncation_direction = truncation_direction(obj, TruncationDirection::Right);
  request.model = model_field(obj);
  return request;
}

namespace {

namespace tasks = serving::tasks;

// Every pair's code points (TEI's x-compute-characters): the query with each text.
std::size_t pair_characters(const std::string& query, const std::vector<std::string>& texts) {
  const std::size_t query_chars = code_points(query);
  std::size_t n = 0;
  for (const std::string& t : texts) n += query_chars + code_points(t);
  return n;
}

}  // namespace

namespace {

// TEI's /rerank answer: [{"index", "score"[, "text"]}] by descending score.
// With `guard`, each result also carries the guard's verdict on its text.
Response tei_rerank_answer(const RerankRequest& request, const std::vector<float>& scores,
                           const PassageVerdicts* verdicts) {
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
                                 const PassageVerdicts* verdicts) {
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

void rerank(App& app, std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<RerankRequest>(parse_tei_rerank(body));
  if (request->guard) app.tasks.expect_guard();  // before any compute
  call->characters += pair_characters(request->query, request->texts);
  tasks::Rerank task;
  task.queries = {request->query};
  task.texts = request->texts;
  task.tokenization = tokenization(request->truncate, request->truncation_direction);
  task.instruction = request->instruction;
  task.raw_scores = request->raw_scores;
  task.weights = request->retrieval_weights;
  const std::shared_ptr<const std::vector<std::string>> texts(request, &request->texts);
  app.tasks.rerank(
      app.task_context(*call, request->model), std::move(task),
      app.then_call<std::vector<float>>(call, [&app, call, request, texts](std::vector<float>& scores) {
        // TEI's answer returns every text: with `guard`, every one is judged.
        answer_rerank(app, call, request->guard, serving::by_score(scores), texts, "texts",
                      [request, scores](const PassageVerdicts* verdicts) {
                        return tei_rerank_answer(*request, scores, verdicts);
                      });
      }));
}

void documents_rerank(App& app, std::shared_ptr<Call> call, std::string_view body, int version) {
  auto request = std::make_shared<DocumentsRerankRequest>(parse_documents_rerank(body));
  if (request->guard) app.tasks.expect_guard();  // before any compute
  call->characters += pair_characters(request->query, request->documents);
  tasks::Rerank task;
  task.queries = {request->query};
  task.texts = request->documents;
  task.texts_field = request->documents_field;
  task.instruction = request->instruction;
  // Cohere's and Jina's relevance scores are probabilities: the sigmoid of the logit.
  task.raw_scores = false;
  task.weights = request->retrieval_weights;
  const std::shared_ptr<const std::vector<std::string>> documents(request, &request->documents);
  app.tasks.rerank(app.task_context(*call, request->model), std::move(task),
                   app.then_call<std::vector<float>>(
                       call, [&app, call, request, documents, version](std::vector<float>& scores) {
                         // With `guard`, the top_n documents the answer returns are judged.
                         answer_rerank(app, call, request->guard, returned_documents(*request, scores),
                                       documents, request->documents_field,
                                       [request, model_id = call->lease->spec().name, version, scores,
                                        tokens = call->tokens](const PassageVerdicts* verdicts) {
                                         return documents_rerank_answer(*request, model_id, version, scores,
                                                                        tokens, verdicts);
                                       });
                       }));
}

void answer_rerank(App& app, const std::shared_ptr<Call>& call, bool guard, std::vector<std::size_t> returned,
                   const std::shared_ptr<const std::vector<std::string>>& texts, std::string param,
                   std::function<Response(const PassageVerdicts*)> answer) {
  if (!guard) return app.respond_here(*call, [&] { return answer(nullptr); });
  serving::tasks::GuardTexts judged;
  judged.texts.reserve(returned.size());
  for (const std::size_t i : returned) judged.texts.push_back((*texts)[i]);
  judged.field.name = std::move(param);
  judged.refuse_empty = false;  // a passage may be empty; the guard abstains on it
  guard_texts(
      app, call, std::move(judged),
      [returned, n = texts->size(), answer = std::move(answer)](std::vector<guard::GuardResult> verdicts) {
        PassageVerdicts by_index(n);
        for (std::size_t k = 0; k < returned.size(); ++k) by_index[returned[k]] = std::move(verdicts[k]);
        return answer(&by_index);
      });
}

void predict(App& app, std::shared_ptr<Call> call, std::string_view body) {
  PredictRequest request = parse_predict(body);
  tasks::Classify task;
  for (PredictInput& in : request.inputs) {
    call->characters += code_points(in.text) + (in.text_pair ? code_points(*in.text_pair) : 0);
    task.inputs.push_back({std::move(in.text), std::move(in.text_pair)});
  }
  task.tokenization = tokenization(request.truncate, request.truncation_direction);
  task.raw_scores = request.raw_scores;
  app.tasks.classify(
      app.task_context(*call, std::move(request.model)), std::move(task),
      app.answer<tasks::Classified>(call, [single = request.single](tasks::Classified& r) {
        JsonWriter w;
        if (!single) w.begin_array();
        for (const std::vector<float>& scores : r.scores) {
          w.begin_array();
          for (const std::size_t k : serving::by_score(scores)) {
            w.begin_object().key("score").value(scores[k]).key("label").value((*r.labels)[k]).end_object();
          }
          w.end_array();
        }
        if (!single) w.end_array();
        return json_response(200, w.take());
      }));
}

}  // namespace warden::http
