// The gRPC transport (TEI's tei.v1) through a real gRPC client over a socket, against the
// HTTP routes of the same service: the same inputs give bit-identical vectors and the same
// scores and tokens; streams answer in order; bad requests are INVALID_ARGUMENT with a
// message, a model of the wrong kind FAILED_PRECONDITION, a missing key UNAUTHENTICATED, and
// a full queue RESOURCE_EXHAUSTED while the server stays healthy.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "classify/sequence_classifier.hpp"
#include "core/json_writer.hpp"
#include "core/thread_pool.hpp"
#include "core/utf8.hpp"
#include "embed/neural_embedder.hpp"
#include "grpc/grpc_server.hpp"
#include "http/service.hpp"
#include "serving/metrics.hpp"
#include "serving/model_manager.hpp"
#include "support/classifier_goldens.hpp"
#include "support/gated_embedder.hpp"
#include "support/golden_fixture.hpp"
#include "support/handler_client.hpp"
#include "tei.grpc.pb.h"

namespace warden::grpc {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using warden::testing::call_handler;

std::string json_string(std::string_view s) {
  JsonWriter w;
  w.value(s);
  return w.take();
}

// A served model the test owns, as the manager's spec (an aliasing pointer that owns nothing).
template <class Model>
serving::ModelSpec spec_of(const std::string& name, const Model& m, ModelKind kind) {
  serving::ModelSpec s;
  s.name = name;
  s.source = name;
  s.kind = kind;
  s.pinned = true;
  std::shared_ptr<const Model> p(std::shared_ptr<const Model>{}, &m);
  s.load = [p] { return serving::make_loaded_model(p, 0); };
  return s;
}

// An embedder, a reranker and a classifier (fixtures) behind one Service, with HTTP's
// handler and a gRPC server on the same pipeline.
class GrpcService : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    embedder_dir_ = fs::temp_directory_path() / ("warden-grpc-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch bert --head none --preset tiny --seed 1 --pooling mean --out DIR",
        embedder_dir_);
    reranker_dir_ = warden::testing::make_classifier_fixture("bert-reranker");
    classifier_dir_ = warden::testing::make_classifier_fixture("distilbert-classifier");
  }
  static void TearDownTestSuite() {
    fs::remove_all(embedder_dir_);
    fs::remove_all(reranker_dir_);
    fs::remove_all(classifier_dir_);
  }

  explicit GrpcService(std::string api_key = {}) : api_key_(std::move(api_key)) {
    models_.add(spec_of("embedder", embedder_, ModelKind::Embedding));
    models_.add(spec_of("reranker", reranker_, ModelKind::Reranker));
    models_.add(spec_of("classifier", classifier_, ModelKind::Classifier));
    http::ServiceOptions o;
    o.workers = 2;
    o.scheduler.max_batch_tokens = 64;  // small batches: requests are split and merged
    o.router.api_key = api_key_;
    service_ = std::make_unique<http::Service>(models_, nullptr, o, &metrics_);
    GrpcOptions g;
    g.api_key = api_key_;
    server_ = std::make_unique<GrpcServer>(service_->runtime().tasks(), g, &metrics_);
    channel_ = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     ::grpc::InsecureChannelCredentials());
  }
  ~GrpcService() override {
    server_->shutdown(1s);
    service_->shutdown(1s);
  }

  // A client context with the key (when the test has one) and a deadline.
  std::unique_ptr<::grpc::ClientContext> context(const std::string& model = {}) const {
    auto c = std::make_unique<::grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + 30s);
    if (!api_key_.empty()) c->AddMetadata("authorization", "Bearer " + api_key_);
    if (!model.empty()) c->AddMetadata("x-warden-model", model);
    return c;
  }
  testing::HandlerAnswer http(const std::string& target, const std::string& body) {
    return call_handler(service_->handler(), "POST", target, body,
                        api_key_.empty() ? std::string() : "Bearer " + api_key_);
  }

  static fs::path embedder_dir_, reranker_dir_, classifier_dir_;
  std::string api_key_;
  ThreadPool pool_{2};
  embed::NeuralEmbedder embedder_{embedder_dir_, &pool_};
  classify::NeuralClassifier reranker_{reranker_dir_, &pool_};
  classify::NeuralClassifier classifier_{classifier_dir_, &pool_};
  serving::MetricsRegistry metrics_;
  serving::ModelManager models_{serving::ModelManagerOptions{}, &metrics_};
  std::unique_ptr<http::Service> service_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<::grpc::Channel> channel_;
};

fs::path GrpcService::embedder_dir_;
fs::path GrpcService::reranker_dir_;
fs::path GrpcService::classifier_dir_;

// The floats of a JSON array of arrays, as float.
std::vector<std::vector<float>> float_rows(const std::string& body) {
  simdjson::dom::parser p;
  std::vector<std::vector<float>> rows;
  for (const auto row : p.parse(body).get_array()) {
    rows.emplace_back();
    for (const auto x : row.get_array()) rows.back().push_back(static_cast<float>(double(x)));
  }
  return rows;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const std::vector<std::string> kTexts = {"hello world", "the quick brown fox jumps over the lazy dog",
                                         "ünïcödé text, with punctuation!", "a"};

TEST_F(GrpcService, EmbedGivesHttpsVectorsBitForBit) {
  auto stub = tei::v1::Embed::NewStub(channel_);
  for (const std::string& text : kTexts) {
    SCOPED_TRACE(text);
    for (const std::string& options :
         {std::string(), std::string(R"(,"normalize":false)"), std::string(R"(,"dimensions":16)")}) {
      tei::v1::EmbedRequest rq;
      rq.set_inputs(text);
      rq.set_truncate(true);
      if (options.find("normalize") != std::string::npos) rq.set_normalize(false);
      if (options.find("dimensions") != std::string::npos) rq.set_dimensions(16);
      tei::v1::EmbedResponse res;
      const ::grpc::Status s = stub->Embed(context().get(), rq, &res);
      ASSERT_TRUE(s.ok()) << s.error_message();
      const auto a = http("/embed", "{\"inputs\":[" + json_string(text) + "]" + options + "}");
      ASSERT_EQ(a.status, 200) << a.body;
      const std::vector<float> grpc_row(res.embeddings().begin(), res.embeddings().end());
      EXPECT_TRUE(same_bits(grpc_row, float_rows(a.body).at(0))) << options;
      if (options.empty()) {
        // The CLI's and bulk jobs' path (Embedder::embed) normalises by the same rule.
        const std::string_view view(text);
        const Embeddings cli = embedder_.embed(std::span<const std::string_view>(&view, 1));
        EXPECT_TRUE(same_bits(grpc_row, std::vector<float>(cli.row(0).begin(), cli.row(0).end())));
      }
      EXPECT_EQ(res.metadata().compute_chars(), static_cast<std::uint32_t>(utf8::code_points(text)));
      EXPECT_GT(res.metadata().compute_tokens(), 0U);
    }
  }
}

TEST_F(GrpcService, EmbedAllGivesHttpsTokenVectors) {
  auto stub = tei::v1::Embed::NewStub(channel_);
  tei::v1::EmbedAllRequest rq;
  rq.set_inputs("hello world");
  rq.set_truncate(true);
  tei::v1::EmbedAllResponse res;
  const ::grpc::Status s = stub->EmbedAll(context().get(), rq, &res);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const auto a = http("/embed_all", R"({"inputs":"hello world"})");
  ASSERT_EQ(a.status, 200) << a.body;
  simdjson::dom::parser p;
  const auto tokens = p.parse(a.body).get_array().at(0).get_array();
  ASSERT_EQ(static_cast<std::size_t>(res.token_embeddings_size()), tokens.size());
  std::size_t t = 0;
  for (const auto row : tokens) {
    std::vector<float> h;
    for (const auto x : row.get_array()) h.push_back(static_cast<float>(double(x)));
    const auto& g = res.token_embeddings(static_cast<int>(t++)).embeddings();
    EXPECT_TRUE(same_bits(std::vector<float>(g.begin(), g.end()), h));
  }
}

TEST_F(GrpcService, EmbedStreamAnswersEachMessageInOrder) {
  auto stub = tei::v1::Embed::NewStub(channel_);
  auto ctx = context();
  auto stream = stub->EmbedStream(ctx.get());
  std::vector<std::string> texts;
  for (int i = 0; i < 40; ++i)
    texts.push_back(kTexts[static_cast<std::size_t>(i) % kTexts.size()] + std::to_string(i));
  std::thread writer([&] {
    for (const std::string& t : texts) {
      tei::v1::EmbedRequest rq;
      rq.set_inputs(t);
      rq.set_truncate(true);
      stream->Write(rq);
    }
    stream->WritesDone();
  });
  std::vector<std::vector<float>> got;
  tei::v1::EmbedResponse res;
  while (stream->Read(&res)) got.emplace_back(res.embeddings().begin(), res.embeddings().end());
  writer.join();
  const ::grpc::Status s = stream->Finish();
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(got.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto a = http("/embed", "{\"inputs\":" + json_string(texts[i]) + "}");
    EXPECT_TRUE(same_bits(got[i], float_rows(a.body).at(0))) << texts[i];
  }
}

TEST_F(GrpcService, RerankAndPredictGiveHttpsScores) {
  auto rerank = tei::v1::Rerank::NewStub(channel_);
  tei::v1::RerankRequest rq;
  rq.set_query("what is a fox");
  for (const std::string& t : kTexts) rq.add_texts(t);
  rq.set_truncate(true);
  rq.set_return_text(true);
  tei::v1::RerankResponse res;
  const ::grpc::Status s = rerank->Rerank(context().get(), rq, &res);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::string texts;
  for (const std::string& t : kTexts) texts += (texts.empty() ? "" : ",") + json_string(t);
  const auto a = http("/rerank", R"({"query":"what is a fox","texts":[)" + texts + "]}");
  ASSERT_EQ(a.status, 200) << a.body;
  simdjson::dom::parser p;
  std::size_t k = 0;
  for (const auto rank : p.parse(a.body).get_array()) {
    ASSERT_LT(k, static_cast<std::size_t>(res.ranks_size()));
    const tei::v1::Rank& g = res.ranks(static_cast<int>(k++));
    EXPECT_EQ(g.index(), std::uint64_t(rank["index"]));
    EXPECT_EQ(g.score(), static_cast<float>(double(rank["score"])));
    EXPECT_EQ(g.text(), kTexts[g.index()]);
  }
  EXPECT_EQ(k, kTexts.size());

  auto predict = tei::v1::Predict::NewStub(channel_);
  tei::v1::PredictRequest pq;
  pq.set_inputs("I love this");
  pq.set_truncate(true);
  tei::v1::PredictResponse pr;
  const ::grpc::Status ps = predict->Predict(context("classifier").get(), pq, &pr);
  ASSERT_TRUE(ps.ok()) << ps.error_message();
  const auto b = http("/predict", R"({"inputs":"I love this","model":"classifier"})");
  ASSERT_EQ(b.status, 200) << b.body;
  k = 0;
  for (const auto pred : p.parse(b.body).get_array()) {
    ASSERT_LT(k, static_cast<std::size_t>(pr.predictions_size()));
    EXPECT_EQ(pr.predictions(static_cast<int>(k)).label(), std::string_view(pred["label"]));
    EXPECT_EQ(pr.predictions(static_cast<int>(k)).score(), static_cast<float>(double(pred["score"])));
    ++k;
  }
  EXPECT_EQ(k, classifier_.labels().size());
}

TEST_F(GrpcService, RerankStreamRanksEveryPair) {
  auto stub = tei::v1::Rerank::NewStub(channel_);
  tei::v1::RerankResponse res;
  auto ctx = context();
  auto writer = stub->RerankStream(ctx.get(), &res);
  for (const std::string& t : kTexts) {
    tei::v1::RerankStreamRequest rq;
    rq.set_query("what is a fox");
    rq.set_text(t);
    rq.set_truncate(true);
    ASSERT_TRUE(writer->Write(rq));
  }
  writer->WritesDone();
  const ::grpc::Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s.error_message();
  tei::v1::RerankRequest rq;
  rq.set_query("what is a fox");
  for (const std::string& t : kTexts) rq.add_texts(t);
  rq.set_truncate(true);
  tei::v1::RerankResponse unary;
  ASSERT_TRUE(stub->Rerank(context().get(), rq, &unary).ok());
  ASSERT_EQ(res.ranks_size(), unary.ranks_size());
  for (int i = 0; i < res.ranks_size(); ++i) {
    EXPECT_EQ(res.ranks(i).index(), unary.ranks(i).index());
    EXPECT_EQ(res.ranks(i).score(), unary.ranks(i).score());
  }
}

TEST_F(GrpcService, TokenizeAndDecodeGiveHttpsTokens) {
  auto stub = tei::v1::Tokenize::NewStub(channel_);
  tei::v1::EncodeRequest rq;
  rq.set_inputs("hello world");
  rq.set_add_special_tokens(true);
  tei::v1::EncodeResponse res;
  ASSERT_TRUE(stub->Tokenize(context().get(), rq, &res).ok());
  const auto a = http("/tokenize", R"({"inputs":"hello world"})");
  ASSERT_EQ(a.status, 200) << a.body;
  simdjson::dom::parser p;
  std::vector<std::uint32_t> ids;
  std::size_t k = 0;
  for (const auto t : p.parse(a.body).get_array().at(0).get_array()) {
    ASSERT_LT(k, static_cast<std::size_t>(res.tokens_size()));
    const tei::v1::SimpleToken& g = res.tokens(static_cast<int>(k++));
    EXPECT_EQ(g.id(), std::uint64_t(t["id"]));
    EXPECT_EQ(g.text(), std::string_view(t["text"]));
    EXPECT_EQ(g.special(), bool(t["special"]));
    EXPECT_EQ(g.has_start(), !t["start"].is_null());
    ids.push_back(g.id());
  }
  EXPECT_EQ(k, static_cast<std::size_t>(res.tokens_size()));
  tei::v1::DecodeRequest dq;
  for (const std::uint32_t id : ids) dq.add_ids(id);
  dq.set_skip_special_tokens(true);
  tei::v1::DecodeResponse dr;
  ASSERT_TRUE(stub->Decode(context().get(), dq, &dr).ok());
  EXPECT_EQ(dr.text(), "hello world");
}

TEST_F(GrpcService, InfoDescribesTheDefaultModelAndTheModelMetadataPicksAnother) {
  auto stub = tei::v1::Info::NewStub(channel_);
  tei::v1::InfoResponse res;
  ASSERT_TRUE(stub->Info(context().get(), {}, &res).ok());
  EXPECT_EQ(res.model_id(), "embedder");
  EXPECT_EQ(res.model_type(), tei::v1::MODEL_TYPE_EMBEDDING);
  EXPECT_FALSE(res.version().empty());
  EXPECT_GT(res.max_batch_tokens(), 0U);
  ASSERT_TRUE(stub->Info(context("reranker").get(), {}, &res).ok());
  EXPECT_EQ(res.model_id(), "reranker");
  EXPECT_EQ(res.model_type(), tei::v1::MODEL_TYPE_RERANKER);
  const ::grpc::Status unknown = stub->Info(context("no-such-model").get(), {}, &res);
  EXPECT_EQ(unknown.error_code(), ::grpc::StatusCode::NOT_FOUND) << unknown.error_message();
}

TEST_F(GrpcService, BadRequestsAreInvalidArgumentWithAMessage) {
  auto embed = tei::v1::Embed::NewStub(channel_);
  tei::v1::EmbedResponse res;
  tei::v1::EmbedRequest empty;
  ::grpc::Status s = embed->Embed(context().get(), empty, &res);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("cannot be empty"), std::string::npos) << s.error_message();
  tei::v1::EmbedRequest zero;
  zero.set_inputs("a");
  zero.set_dimensions(0);
  s = embed->Embed(context().get(), zero, &res);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("dimensions"), std::string::npos) << s.error_message();
  tei::v1::EmbedRequest prompt;
  prompt.set_inputs("a");
  prompt.set_prompt_name("nope");
  s = embed->Embed(context().get(), prompt, &res);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  // Too long without truncation: TEI's gRPC takes `truncate` as sent (false by default).
  tei::v1::EmbedRequest long_text;
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "word ";
  long_text.set_inputs(text);
  s = embed->Embed(context().get(), long_text, &res);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();

  auto predict = tei::v1::Predict::NewStub(channel_);
  tei::v1::PredictPairRequest one;
  one.add_inputs("only one");
  tei::v1::PredictResponse pr;
  s = predict->PredictPair(context().get(), one, &pr);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("2 elements"), std::string::npos) << s.error_message();
  auto rerank = tei::v1::Rerank::NewStub(channel_);
  tei::v1::RerankResponse rr;
  s = rerank->Rerank(context().get(), tei::v1::RerankRequest{}, &rr);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(GrpcService, AModelOfTheWrongKindIsFailedPrecondition) {
  auto embed = tei::v1::Embed::NewStub(channel_);
  tei::v1::EmbedRequest rq;
  rq.set_inputs("a");
  tei::v1::EmbedResponse res;
  ::grpc::Status s = embed->Embed(context("reranker").get(), rq, &res);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  tei::v1::EmbedSparseRequest sparse;
  sparse.set_inputs("a");
  tei::v1::EmbedSparseResponse sr;
  s = embed->EmbedSparse(context().get(), sparse, &sr);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("sparse"), std::string::npos) << s.error_message();
  auto rerank = tei::v1::Rerank::NewStub(channel_);
  tei::v1::RerankRequest rr;
  rr.set_query("q");
  rr.add_texts("t");
  tei::v1::RerankResponse out;
  s = rerank->Rerank(context("classifier").get(), rr, &out);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
}

TEST_F(GrpcService, CallsAreCountedInTheMetrics) {
  auto stub = tei::v1::Embed::NewStub(channel_);
  tei::v1::EmbedRequest rq;
  rq.set_inputs("count me");
  tei::v1::EmbedResponse res;
  ASSERT_TRUE(stub->Embed(context().get(), rq, &res).ok());
  const std::string text = metrics_.render();
  EXPECT_NE(text.find(R"(warden_grpc_requests_total{code="OK",method="/tei.v1.Embed/Embed"} 1)"),
            std::string::npos)
      << text;
  // The scheduler's series count gRPC's batches like HTTP's (recorded on the compute thread,
  // once the batch's jobs are answered).
  bool batch_seen = false;
  for (int i = 0; i < 500 && !batch_seen; ++i) {
    batch_seen = metrics_.render().find("warden_batch_inputs_count 1") != std::string::npos;
    if (!batch_seen) std::this_thread::sleep_for(2ms);
  }
  EXPECT_TRUE(batch_seen) << metrics_.render();
}

class KeyedGrpcService : public GrpcService {
 protected:
  KeyedGrpcService() : GrpcService("s3cret") {}
};

TEST_F(KeyedGrpcService, AMissingOrWrongKeyIsUnauthenticated) {
  auto stub = tei::v1::Embed::NewStub(channel_);
  tei::v1::EmbedRequest rq;
  rq.set_inputs("a");
  tei::v1::EmbedResponse res;
  ::grpc::ClientContext none;
  EXPECT_EQ(stub->Embed(&none, rq, &res).error_code(), ::grpc::StatusCode::UNAUTHENTICATED);
  ::grpc::ClientContext wrong;
  wrong.AddMetadata("authorization", "Bearer s3cretx");
  EXPECT_EQ(stub->Embed(&wrong, rq, &res).error_code(), ::grpc::StatusCode::UNAUTHENTICATED);
  const ::grpc::Status ok = stub->Embed(context().get(), rq, &res);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  auto info = tei::v1::Info::NewStub(channel_);
  tei::v1::InfoResponse ir;
  ::grpc::ClientContext bare;
  EXPECT_EQ(info->Info(&bare, {}, &ir).error_code(), ::grpc::StatusCode::UNAUTHENTICATED);
}

// Server reflection (what `grpcurl list` asks) lists TEI's services, and the standard health
// service answers, both without the key. Raw bytes: the reflection and health protos are not
// shipped with the -dev package.
TEST_F(KeyedGrpcService, ReflectionAndHealthAnswerWithoutTheKey) {
  ::grpc::GenericStub stub(channel_);
  ::grpc::CompletionQueue cq;
  auto wait = [&cq] {
    void* tag = nullptr;
    bool ok = false;
    return cq.Next(&tag, &ok) && ok;
  };
  ::grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 30s);
  auto call = stub.PrepareCall(&ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  call->StartCall(nullptr);
  ASSERT_TRUE(wait());
  const std::string list_services("\x3a\x00", 2);  // ServerReflectionRequest{list_services: ""}
  ::grpc::Slice slice(list_services);
  ::grpc::ByteBuffer request(&slice, 1);
  call->Write(request, nullptr);
  ASSERT_TRUE(wait());
  call->WritesDone(nullptr);
  ASSERT_TRUE(wait());
  ::grpc::ByteBuffer response;
  call->Read(&response, nullptr);
  ASSERT_TRUE(wait());
  std::vector<::grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const ::grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  for (const char* service :
       {"tei.v1.Info", "tei.v1.Embed", "tei.v1.Predict", "tei.v1.Rerank", "tei.v1.Tokenize"}) {
    EXPECT_NE(bytes.find(service), std::string::npos) << service;
  }
  ::grpc::Status status;
  call->Finish(&status, nullptr);
  ASSERT_TRUE(wait());
  EXPECT_TRUE(status.ok()) << status.error_message();

  // grpc.health.v1.Health/Check with an empty request: SERVING (field 1 = 1), NOT_SERVING (2)
  // while the server says it is not ready (warden serve: until /health is ready).
  const auto check = [&stub] {
    ::grpc::ClientContext health_ctx;
    health_ctx.set_deadline(std::chrono::system_clock::now() + 30s);
    ::grpc::Slice nothing(std::string{});
    ::grpc::ByteBuffer empty(&nothing, 1);  // HealthCheckRequest{}: no bytes, but a message
    ::grpc::ByteBuffer health;
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    ::grpc::Status health_status;
    stub.UnaryCall(&health_ctx, "/grpc.health.v1.Health/Check", {}, &empty, &health, [&](::grpc::Status st) {
      const std::lock_guard lock(m);
      health_status = std::move(st);
      done = true;
      cv.notify_all();
    });
    std::unique_lock lock(m);
    if (!cv.wait_for(lock, 30s, [&] { return done; })) return std::string("<no answer>");
    if (!health_status.ok()) return "<" + health_status.error_message() + ">";
    std::vector<::grpc::Slice> hs;
    if (!health.Dump(&hs).ok()) return std::string("<no body>");
    std::string hb;
    for (const ::grpc::Slice& s : hs) hb.append(reinterpret_cast<const char*>(s.begin()), s.size());
    return hb;
  };
  EXPECT_EQ(check(), std::string("\x08\x01", 2));
  server_->set_serving(false);
  EXPECT_EQ(check(), std::string("\x08\x02", 2));
  server_->set_serving(true);
  EXPECT_EQ(check(), std::string("\x08\x01", 2));
}

TEST(GrpcAdmission, AFullQueueIsResourceExhaustedAndTheServerStaysHealthy) {
  warden::testing::GatedEmbedder embedder;
  serving::MetricsRegistry metrics;
  http::ServiceOptions o;
  o.scheduler.max_concurrent = 1;
  o.scheduler.max_queue = 1;
  http::Service service(embedder, o, &metrics);
  GrpcServer server(service.runtime().tasks(), {}, &metrics);
  auto channel = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()),
                                       ::grpc::InsecureChannelCredentials());
  auto stub = tei::v1::Embed::NewStub(channel);
  auto embed = [&stub](const std::string& text) {
    tei::v1::EmbedRequest rq;
    rq.set_inputs(text);
    tei::v1::EmbedResponse res;
    ::grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 30s);
    return stub->Embed(&ctx, rq, &res);
  };
  auto first = std::async(std::launch::async, embed, "a");
  ASSERT_TRUE(embedder.wait_entered(1));
  auto queued = std::async(std::launch::async, embed, "b");
  for (int i = 0; i < 1000 && service.scheduler().load().waiting_jobs == 0; ++i)
    std::this_thread::sleep_for(2ms);
  const ::grpc::Status refused = embed("c");
  EXPECT_EQ(refused.error_code(), ::grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("overloaded"), std::string::npos);
  embedder.open();
  EXPECT_TRUE(first.get().ok());
  EXPECT_TRUE(queued.get().ok());
  EXPECT_TRUE(embed("d").ok());  // healthy after the overload
  EXPECT_NE(metrics.render().find("warden_rejected_total 1"), std::string::npos);
  server.shutdown(1s);
}

// Rerank and RerankStream on a ColBERT: the same MaxSim scores HTTP's /rerank gives, each
// distinct query of a stream encoded once.
TEST(GrpcColbert, RerankScoresByMaxSimAsHttpDoes) {
  const fs::path dir = fs::temp_directory_path() / ("warden-grpc-colbert-" + std::to_string(::getpid()));
  warden::testing::run_fixture_command(
      "warden-fixture --arch bert --head none --preset tiny --seed 1 --colbert --out DIR", dir);
  {
    ThreadPool pool(2);
    const embed::NeuralEmbedder colbert(dir, &pool);
    serving::MetricsRegistry metrics;
    serving::ModelManager models{serving::ModelManagerOptions{}, &metrics};
    models.add(spec_of("colbert", colbert, ModelKind::Embedding));
    http::ServiceOptions o;
    o.workers = 2;
    http::Service service(models, nullptr, o, &metrics);
    GrpcServer server(service.runtime().tasks(), GrpcOptions{}, &metrics);
    auto channel = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()),
                                         ::grpc::InsecureChannelCredentials());
    auto stub = tei::v1::Rerank::NewStub(channel);
    tei::v1::RerankRequest rq;
    rq.set_query("what is a fox");
    for (const std::string& t : kTexts) rq.add_texts(t);
    rq.set_truncate(true);
    tei::v1::RerankResponse res;
    ::grpc::ClientContext ctx;
    const ::grpc::Status s = stub->Rerank(&ctx, rq, &res);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::string texts;
    for (const std::string& t : kTexts) texts += (texts.empty() ? "" : ",") + json_string(t);
    const auto a = call_handler(service.handler(), "POST", "/rerank",
                                R"({"query":"what is a fox","texts":[)" + texts + "]}");
    ASSERT_EQ(a.status, 200) << a.body;
    simdjson::dom::parser p;
    int k = 0;
    for (const auto rank : p.parse(a.body).get_array()) {
      ASSERT_LT(k, res.ranks_size());
      EXPECT_EQ(res.ranks(k).index(), std::uint64_t(rank["index"]));
      EXPECT_EQ(res.ranks(k).score(), static_cast<float>(double(rank["score"])));
      ++k;
    }
    EXPECT_EQ(k, static_cast<int>(kTexts.size()));

    // A stream of pairs with two queries: each text against its own.
    tei::v1::RerankResponse streamed;
    ::grpc::ClientContext sctx;
    auto writer = stub->RerankStream(&sctx, &streamed);
    for (std::size_t i = 0; i < kTexts.size(); ++i) {
      tei::v1::RerankStreamRequest one;
      one.set_query(i % 2 == 0 ? "what is a fox" : "hello");
      one.set_text(kTexts[i]);
      one.set_truncate(true);
      ASSERT_TRUE(writer->Write(one));
    }
    writer->WritesDone();
    ASSERT_TRUE(writer->Finish().ok());
    ASSERT_EQ(streamed.ranks_size(), static_cast<int>(kTexts.size()));
    for (const auto& rank : streamed.ranks()) {
      if (rank.index() % 2 != 0) continue;  // the "what is a fox" pairs score as in the unary call
      for (const auto& u : res.ranks()) {
        if (u.index() == rank.index()) {
          EXPECT_EQ(u.score(), rank.score());
        }
      }
    }
    server.shutdown(1s);
    service.shutdown(1s);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warden::grpc
