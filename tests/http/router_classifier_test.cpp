// The classification routes (/rerank, /v1/rerank, /predict) on the reranker and classifier
// fixtures, through the whole server path (workers, scheduler batches, formatting), against
// the PyTorch goldens: scores (sigmoid/softmax of the reference's logits) within 1e-4 and
// the same order. Also the wrong kind of model (424 both ways), a request of 1,000 passages
// split into engine batches, the request limits, and what /info and /v1/models say.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "classify/sequence_classifier.hpp"
#include "core/json_writer.hpp"
#include "core/thread_pool.hpp"
#include "http/service.hpp"
#include "serving/metrics.hpp"
#include "support/classifier_goldens.hpp"

namespace warden::http {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using warden::testing::ClassifierCase;
using warden::testing::ClassifierGolden;

constexpr double kTolerance = 1e-4;  // the issue's bar against PyTorch

struct Answer {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
};

std::future<Answer> send(Handler& handler, const std::string& method, const std::string& target,
                         std::string body) {
  struct State {
    std::string target, body;
    std::promise<Answer> promise;
  };
  auto state = std::make_shared<State>();
  state->target = target;
  state->body = std::move(body);
  auto future = state->promise.get_future();
  Request r;
  r.method = method;
  r.target = state->target;
  r.content_type = "application/json";
  r.body = state->body;
  handler.handle(r, std::make_shared<Cancellation>(), [state](Response response) {
    Answer a{response.status, std::move(response.body), {}};
    for (auto& [name, value] : response.headers) a.headers[name] = value;
    state->promise.set_value(std::move(a));
  });
  return future;
}

Answer call(Handler& handler, const std::string& target, std::string body,
            const std::string& method = "POST") {
  auto f = send(handler, method, target, std::move(body));
  EXPECT_EQ(f.wait_for(60s), std::future_status::ready);
  return f.get();
}

std::string json_string(std::string_view s) {
  JsonWriter w;
  w.value(s);
  return w.take();
}

// Appends one item to a comma-separated JSON list body (appends, not operator+: GCC 12's
// -Wrestrict misfires on "lit" + std::string).
void append_item(std::string& list, const std::string& item) {
  if (!list.empty()) list += ',';
  list += item;
}

// One served classifier (a fixture regenerated from its golden) behind a Service.
class Served {
 public:
  explicit Served(const std::string& name, std::size_t max_batch_tokens = 16384)
      : golden_(warden::testing::read_classifier_golden(name)),
        dir_(warden::testing::make_classifier_fixture(name)),
        classifier_(dir_, &pool_, Precision::Float32, golden_.rerank_template),
        service_(ServedModel{nullptr, &classifier_}, options(max_batch_tokens), &metrics_) {}
  ~Served() { fs::remove_all(dir_); }
  Handler& handler() { return service_.handler(); }
  const ClassifierGolden& golden() const { return golden_; }
  const classify::NeuralClassifier& classifier() const { return classifier_; }
  // One sample of the Prometheus text, e.g. "warden_batch_inputs_sum"; -1 when absent.
  double metric(const std::string& name) const {
    const std::string text = metrics_.render();
    const std::size_t at = text.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + name.size() + 2));
  }

 private:
  static ServiceOptions options(std::size_t max_batch_tokens) {
    ServiceOptions o;
    o.workers = 2;
    o.scheduler.max_batch_tokens = max_batch_tokens;
    return o;
  }
  ThreadPool pool_{2};
  ClassifierGolden golden_;
  fs::path dir_;
  classify::NeuralClassifier classifier_;
  serving::MetricsRegistry metrics_;
  Service service_;
};

std::vector<const ClassifierCase*> pair_cases(const ClassifierGolden& g) {
  std::vector<const ClassifierCase*> out;
  for (const ClassifierCase& k : g.cases) {
    if (k.pair) out.push_back(&k);
  }
  return out;
}

TEST(ClassifierRoutes, RerankMatchesTheGoldens) {
  for (const char* name : {"bert-reranker", "xlm-roberta-reranker", "qwen3-reranker", "qwen2-mxbai-reranker",
                           "gemma-reranker"}) {
    SCOPED_TRACE(name);
    Served s(name);
    const auto pairs = pair_cases(s.golden());
    ASSERT_GE(pairs.size(), 2U);
    double worst = 0;
    // Every pair as its own request, all in flight at once: the scheduler batches them together.
    std::vector<std::future<Answer>> scored, raw, v1;
    for (const ClassifierCase* k : pairs) {
      // An LLM reranker's case may carry its own instruction (mxbai's "instruction: ...").
      const std::string told =
          k->instruction.empty() ? "" : R"(, "instruction": )" + json_string(k->instruction);
      const std::string body =
          R"({"query": )" + json_string(k->text) + R"(, "texts": [)" + json_string(*k->pair) + "]" + told;
      scored.push_back(send(s.handler(), "POST", "/rerank", body + "}"));
      raw.push_back(send(s.handler(), "POST", "/rerank", body + R"(, "raw_scores": true})"));
      v1.push_back(send(s.handler(), "POST", "/v1/rerank",
                        R"({"query": )" + json_string(k->text) + R"(, "documents": [)" +
                            json_string(*k->pair) + "]" + told + "}"));
    }
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const Answer a = scored[i].get(), r = raw[i].get(), o = v1[i].get();
      ASSERT_EQ(a.status, 200) << a.body;
      ASSERT_EQ(r.status, 200) << r.body;
      ASSERT_EQ(o.status, 200) << o.body;
      simdjson::dom::parser p1, p2, p3;
      const double score = double(p1.parse(a.body).at(0)["score"]);
      const double logit = double(p2.parse(r.body).at(0)["score"]);
      const double relevance = double(p3.parse(o.body)["results"].at(0)["relevance_score"]);
      EXPECT_NEAR(score, pairs[i]->scores[0], kTolerance);
      EXPECT_NEAR(logit, pairs[i]->logits[0], kTolerance);
      EXPECT_NEAR(relevance, pairs[i]->scores[0], kTolerance);
      worst = std::max({worst, std::fabs(score - pairs[i]->scores[0]), std::fabs(logit - pairs[i]->logits[0]),
                        std::fabs(relevance - pairs[i]->scores[0])});
    }
    // The passages of one query in one request: sorted by score, highest first, as the goldens order them.
    std::map<std::string, std::vector<const ClassifierCase*>> by_query;
    for (const ClassifierCase* k : pairs) {
      if (k->instruction.empty()) by_query[k->text].push_back(k);
    }
    for (const auto& [query, cases] : by_query) {
      if (cases.size() < 2) continue;
      std::string texts;
      for (const ClassifierCase* k : cases) append_item(texts, json_string(*k->pair));
      std::vector<std::size_t> want(cases.size());
      for (std::size_t i = 0; i < want.size(); ++i) want[i] = i;
      std::stable_sort(want.begin(), want.end(), [&](std::size_t a, std::size_t b) {
        return cases[a]->scores[0] > cases[b]->scores[0];
      });
      const Answer a = call(
          s.handler(), "/rerank",
          R"({"query": )" + json_string(query) + R"(, "texts": [)" + texts + R"(], "return_text": true})");
      ASSERT_EQ(a.status, 200) << a.body;
      simdjson::dom::parser p;
      const auto results = p.parse(a.body).get_array().value();
      ASSERT_EQ(results.size(), cases.size());
      for (std::size_t r = 0; r < want.size(); ++r) {
        const auto index = std::uint64_t(results.at(r)["index"]);
        EXPECT_EQ(index, want[r]);
        EXPECT_NEAR(double(results.at(r)["score"]), cases[want[r]]->scores[0], kTolerance);
        EXPECT_EQ(std::string_view(results.at(r)["text"]), *cases[index]->pair);
      }
      // /v1/rerank: the same order, top_n cuts it, documents come back on request.
      const Answer o =
          call(s.handler(), "/v1/rerank",
               R"({"model": )" + json_string(s.classifier().id()) + R"(, "query": )" + json_string(query) +
                   R"(, "documents": [)" + texts + R"(], "top_n": 1, "return_documents": true})");
      ASSERT_EQ(o.status, 200) << o.body;
      simdjson::dom::parser p2;
      const auto doc = p2.parse(o.body);
      EXPECT_EQ(std::string_view(doc["model"]), s.classifier().id());
      const auto top = doc["results"].get_array().value();
      ASSERT_EQ(top.size(), 1U);
      EXPECT_EQ(std::uint64_t(top.at(0)["index"]), want[0]);
      EXPECT_NEAR(double(top.at(0)["relevance_score"]), cases[want[0]]->scores[0], kTolerance);
      EXPECT_EQ(std::string_view(top.at(0)["document"]["text"]), *cases[want[0]]->pair);
      EXPECT_GT(std::uint64_t(doc["usage"]["total_tokens"]), 0U);
      const Answer nodocs = call(s.handler(), "/v1/rerank",
                                 R"({"query": )" + json_string(query) + R"(, "documents": [)" + texts +
                                     R"(], "return_documents": false})");
      ASSERT_EQ(nodocs.status, 200) << nodocs.body;
      simdjson::dom::parser p3;
      const auto all = p3.parse(nodocs.body)["results"].get_array().value();
      EXPECT_EQ(all.size(), cases.size());
      EXPECT_EQ(all.at(0)["document"].error(), simdjson::NO_SUCH_FIELD);
    }
    std::printf("[ golden ] %s /rerank, /v1/rerank: max |score - PyTorch| = %.3g\n", name, worst);
  }
}

// The /predict answer for one input: label -> score.
std::map<std::string, double> predictions(simdjson::dom::element list) {
  std::map<std::string, double> out;
  double last = INFINITY;
  for (const auto p : list.get_array()) {
    const double score = double(p["score"]);
    EXPECT_LE(score, last) << "not sorted by score";
    last = score;
    out[std::string(std::string_view(p["label"]))] = score;
  }
  return out;
}

std::string predict_input(const ClassifierCase& k) {
  std::string out = "[";
  out += json_string(k.text);
  if (k.pair) {
    out += ',';
    out += json_string(*k.pair);
  }
  out += ']';
  return out;
}

TEST(ClassifierRoutes, PredictMatchesTheGoldens) {
  for (const char* name : {"distilbert-classifier", "bert-reranker"}) {
    SCOPED_TRACE(name);
    Served s(name);
    const auto& labels = s.classifier().labels();
    const auto& cases = s.golden().cases;
    double worst = 0;
    auto check = [&](simdjson::dom::element list, const ClassifierCase& k, bool raw) {
      const auto got = predictions(list);
      ASSERT_EQ(got.size(), labels.size());
      for (std::size_t l = 0; l < labels.size(); ++l) {
        const double want = raw ? k.logits[l] : k.scores[l];
        ASSERT_TRUE(got.contains(labels[l])) << labels[l];
        EXPECT_NEAR(got.at(labels[l]), want, kTolerance) << k.text << " " << labels[l];
        worst = std::max(worst, std::fabs(got.at(labels[l]) - want));
      }
    };
    // A batch of every case, texts and pairs together.
    std::string batch;
    for (const ClassifierCase& k : cases) append_item(batch, predict_input(k));
    for (const bool raw : {false, true}) {
      const Answer a =
          call(s.handler(), "/predict",
               R"({"inputs": [)" + batch + "], \"raw_scores\": " + (raw ? "true" : "false") + "}");
      ASSERT_EQ(a.status, 200) << a.body;
      simdjson::dom::parser p;
      const auto lists = p.parse(a.body).get_array().value();
      ASSERT_EQ(lists.size(), cases.size());
      for (std::size_t i = 0; i < cases.size(); ++i) check(lists.at(i), cases[i], raw);
    }
    // Single inputs: a text, and a pair as TEI writes one (["a", "b"]): one list, not a list of lists.
    for (const ClassifierCase& k : cases) {
      const std::string input = k.pair ? predict_input(k) : json_string(k.text);
      const Answer a = call(s.handler(), "/predict", R"({"inputs": )" + input + "}");
      ASSERT_EQ(a.status, 200) << a.body;
      simdjson::dom::parser p;
      check(p.parse(a.body), k, false);
    }
    std::printf("[ golden ] %s /predict: max |score - PyTorch| = %.3g\n", name, worst);
  }
}

TEST(ClassifierRoutes, ComputedAnswersCarryTeiTimingHeaders) {
  Served s("bert-reranker");
  const Answer a = call(s.handler(), "/rerank", R"({"query": "q", "texts": ["a", "b"]})");
  ASSERT_EQ(a.status, 200) << a.body;
  // [CLS] q [SEP] a [SEP], twice.
  EXPECT_EQ(a.headers.at("x-compute-tokens"), "10");
  EXPECT_EQ(a.headers.at("x-compute-characters"), "4");
  for (const char* h :
       {"x-compute-time", "x-total-time", "x-tokenization-time", "x-queue-time", "x-inference-time"}) {
    EXPECT_TRUE(a.headers.contains(h)) << h;
  }
  const Answer refused = call(s.handler(), "/rerank", R"({"query": "", "texts": ["a"]})");
  EXPECT_FALSE(refused.headers.contains("x-compute-time"));
}

// A yes/no reranker takes the request's `instruction` (Qwen3-Reranker's <Instruct>) on /rerank,
// /v1/rerank and /v2/rerank; other rerankers refuse one with a 422 naming the field.
TEST(ClassifierRoutes, AnInstructionGoesToAYesNoRerankerOnly) {
  Served s("qwen3-reranker");
  const std::string pair = R"("query": "what is the capital of France?", )";
  const Answer plain = call(s.handler(), "/rerank", "{" + pair + R"("texts": ["Paris is in France."]})");
  const Answer told = call(
      s.handler(), "/rerank",
      "{" + pair + R"("texts": ["Paris is in France."], "instruction": "Find the answer to the question"})");
  ASSERT_EQ(plain.status, 200) << plain.body;
  ASSERT_EQ(told.status, 200) << told.body;
  simdjson::dom::parser p1, p2;
  EXPECT_NE(double(p1.parse(plain.body).at(0)["score"]), double(p2.parse(told.body).at(0)["score"]));
  for (const char* route : {"/v1/rerank", "/v2/rerank"}) {
    const Answer a =
        call(s.handler(), route,
             "{" + pair + R"("documents": ["Paris is in France."], "instruction": "Find the answer"})");
    EXPECT_EQ(a.status, 200) << route << " " << a.body;
  }
  Served bert("bert-reranker");
  const Answer refused =
      call(bert.handler(), "/rerank", R"({"query": "q", "texts": ["a"], "instruction": "x"})");
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_NE(refused.body.find("instruction"), std::string::npos) << refused.body;
  EXPECT_EQ(
      call(bert.handler(), "/v1/rerank", R"({"query": "q", "documents": ["a"], "instruction": "x"})").status,
      422);
  EXPECT_EQ(call(s.handler(), "/rerank", R"({"query": "q", "texts": ["a"], "instruction": 3})").status, 422);
}

TEST(ClassifierRoutes, TheWrongKindOfModelIs424) {
  Served classifier("distilbert-classifier");
  Handler& h = classifier.handler();
  // A classifier with several labels has no single relevance score.
  const Answer rerank = call(h, "/rerank", R"({"query": "q", "texts": ["a"]})");
  EXPECT_EQ(rerank.status, 424) << rerank.body;
  EXPECT_NE(rerank.body.find("needs a reranker"), std::string::npos) << rerank.body;
  EXPECT_EQ(call(h, "/v1/rerank", R"({"query": "q", "documents": ["a"]})").status, 424);
  // The embedding routes need an embedder.
  const Answer embed = call(h, "/embed", R"({"inputs": "a"})");
  EXPECT_EQ(embed.status, 424) << embed.body;
  EXPECT_NE(embed.body.find("needs an embedding model"), std::string::npos) << embed.body;
  EXPECT_EQ(call(h, "/v1/embeddings", R"({"input": "a"})").status, 424);
  EXPECT_EQ(call(h, "/embed_all", R"({"inputs": "a"})").status, 424);
  EXPECT_EQ(call(h, "/similarity", R"({"inputs": {"source_sentence": "a", "sentences": ["b"]}})").status,
            424);
  EXPECT_EQ(call(h, "/tokenize", R"({"inputs": "a"})").status, 424);
  EXPECT_EQ(call(h, "/decode", R"({"ids": [1]})").status, 424);
  // A malformed body is still the first problem.
  EXPECT_EQ(call(h, "/embed", R"({"inputs": []})").status, 400);
  // A reranker also answers /predict (TEI does: the sigmoid of its one logit).
  Served reranker("bert-reranker");
  EXPECT_EQ(call(reranker.handler(), "/predict", R"({"inputs": "a"})").status, 200);
  EXPECT_EQ(call(reranker.handler(), "/embed", R"({"inputs": "a"})").status, 424);
}

TEST(ClassifierRoutes, AThousandPassagesAreSplitIntoBatches) {
  // Small engine batches: 1,000 pairs of ~10 tokens need many of them.
  Served s("bert-reranker", 256);
  const std::vector<std::string> passages = {"Paris is the capital and largest city of France.",
                                             "The quick brown fox jumps over the lazy dog.", "a",
                                             "The library is next to the station."};
  const std::string query = "what is the capital of France?";
  std::vector<double> alone;
  for (const std::string& p : passages) {
    const Answer a = call(s.handler(), "/rerank",
                          R"({"query": )" + json_string(query) + R"(, "texts": [)" + json_string(p) + "]}");
    ASSERT_EQ(a.status, 200) << a.body;
    simdjson::dom::parser parser;
    alone.push_back(double(parser.parse(a.body).at(0)["score"]));
  }
  const double batches_before = s.metric("warden_batch_inputs_count");
  const double inputs_before = s.metric("warden_batch_inputs_sum");
  std::string texts;
  for (std::size_t i = 0; i < 1000; ++i) append_item(texts, json_string(passages[i % passages.size()]));
  const Answer a =
      call(s.handler(), "/rerank", R"({"query": )" + json_string(query) + R"(, "texts": [)" + texts + "]}");
  ASSERT_EQ(a.status, 200) << a.body.substr(0, 300);
  simdjson::dom::parser parser;
  const auto results = parser.parse(a.body).get_array().value();
  ASSERT_EQ(results.size(), 1000U);
  std::vector<bool> seen(1000, false);
  double last = INFINITY;
  for (const auto r : results) {
    const auto index = std::uint64_t(r["index"]);
    ASSERT_LT(index, 1000U);
    EXPECT_FALSE(seen[index]);
    seen[index] = true;
    const double score = double(r["score"]);
    EXPECT_LE(score, last);
    last = score;
    // A score never depends on the batch it was computed in.
    EXPECT_NEAR(score, alone[index % passages.size()], 1e-5);
  }
  // Admitted and computed as 1,000 inputs, in more than one engine batch.
  EXPECT_EQ(s.metric("warden_batch_inputs_sum") - inputs_before, 1000.0);
  EXPECT_GT(s.metric("warden_batch_inputs_count") - batches_before, 1.0);
}

TEST(ClassifierRoutes, BadInputsGetTeiShapedErrors) {
  Served s("bert-reranker");
  Handler& h = s.handler();
  auto error_type = [](const Answer& a) {
    simdjson::dom::parser p;
    return std::string(std::string_view(p.parse(a.body)["error_type"]));
  };
  const Answer none = call(h, "/rerank", R"({"query": "q", "texts": []})");
  EXPECT_EQ(none.status, 400);
  EXPECT_EQ(error_type(none), "Empty");
  EXPECT_EQ(call(h, "/v1/rerank", R"({"query": "q", "documents": []})").status, 400);
  const Answer empty_query = call(h, "/rerank", R"({"query": "", "texts": ["a"]})");
  EXPECT_EQ(empty_query.status, 422);
  EXPECT_EQ(error_type(empty_query), "Validation");
  EXPECT_EQ(call(h, "/v1/rerank", R"({"query": "", "documents": ["a"]})").status, 422);
  EXPECT_EQ(call(h, "/rerank", R"({"query": "q", "texts": ["a", 7]})").status, 422);
  EXPECT_EQ(call(h, "/v1/rerank", R"({"query": "q", "documents": [{"id": 1}]})").status, 422);
  EXPECT_EQ(call(h, "/predict", R"({"inputs": [["a"], ["b", 3]]})").status, 422);
  std::string many;
  for (int i = 0; i < 10000; ++i) many += i == 0 ? "\"p\"" : ",\"p\"";
  const Answer too_many = call(h, "/rerank", R"({"query": "q", "texts": [)" + many + "]}");
  EXPECT_EQ(too_many.status, 422);
  EXPECT_NE(too_many.body.find("batch size 10000 > maximum allowed batch size 1024"), std::string::npos)
      << too_many.body;
  EXPECT_EQ(call(h, "/v1/rerank", R"({"query": "q", "documents": [)" + many + "]}").status, 422);
  // truncate = false and a pair longer than the model takes.
  std::string longer;
  for (int i = 0; i < 2000; ++i) longer += "word ";
  EXPECT_EQ(call(h, "/rerank", R"({"query": "q", "texts": [")" + longer + R"("], "truncate": false})").status,
            422);
  EXPECT_EQ(call(h, "/rerank", R"({"query": "q", "texts": [")" + longer + R"("]})").status, 200);
}

TEST(ClassifierRoutes, InfoAndModelsReportTheKindAndLabels) {
  Served s("distilbert-classifier");
  const Answer info = call(s.handler(), "/info", "", "GET");
  ASSERT_EQ(info.status, 200) << info.body;
  simdjson::dom::parser p;
  const auto doc = p.parse(info.body);
  const auto& labels = s.classifier().labels();
  EXPECT_EQ(std::string_view(doc["kind"]), "classifier");
  EXPECT_TRUE(bool(doc["semantic"]));
  const auto id2label = doc["model_type"]["classifier"]["id2label"];
  for (std::size_t i = 0; i < labels.size(); ++i) {
    EXPECT_EQ(std::string_view(id2label[std::to_string(i)]), labels[i]);
    EXPECT_EQ(std::string_view(doc["labels"].at(i)), labels[i]);
  }
  const Answer models = call(s.handler(), "/v1/models", "", "GET");
  ASSERT_EQ(models.status, 200) << models.body;
  simdjson::dom::parser p2;
  const auto m = p2.parse(models.body)["data"].at(0);
  EXPECT_EQ(std::string_view(m["kind"]), "classifier");
  EXPECT_EQ(m["labels"].get_array().size(), labels.size());
  EXPECT_TRUE(bool(m["semantic"]));

  Served r("bert-reranker");
  const Answer rinfo = call(r.handler(), "/info", "", "GET");
  simdjson::dom::parser p3;
  const auto rdoc = p3.parse(rinfo.body);
  EXPECT_EQ(std::string_view(rdoc["kind"]), "reranker");
  EXPECT_EQ(std::string_view(rdoc["model_type"]["reranker"]["id2label"]["0"]), r.classifier().labels()[0]);
}

}  // namespace
}  // namespace warden::http
