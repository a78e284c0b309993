// tei.v1.Predict (a classifier's labels for a text or a pair) and tei.v1.Rerank (a
// reranker's scores for a query against texts). The same tasks as HTTP's /predict and /rerank
// (serving/tasks), so the same inputs give the same numbers.

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "grpc/services.hpp"
#include "serving/results.hpp"

namespace warden::grpc {

namespace {

namespace tasks = serving::tasks;
using tei::v1::PredictPairRequest;
using tei::v1::PredictRequest;
using tei::v1::PredictResponse;
using tei::v1::RerankRequest;
using tei::v1::RerankResponse;
using tei::v1::RerankStreamRequest;

// Predict and PredictPair: one text, or a text and its pair.
void predict_one(Backend& b, const Work& w, std::string text, std::optional<std::string> pair, bool truncate,
                 tei::v1::TruncationDirection direction, bool raw_scores, Reply<PredictResponse> reply) {
  if (text.empty()) throw Error(ErrorKind::InvalidArgument, "`inputs` cannot be empty");
  const std::size_t chars = utf8::code_points(text) + (pair ? utf8::code_points(*pair) : 0);
  tasks::Classify task;
  task.inputs.push_back({std::move(text), std::move(pair)});
  task.field = {"inputs", false};
  task.tokenization = {truncate, side_of(direction), std::nullopt};
  task.raw_scores = raw_scores;
  b.tasks().classify(task_context(w, "Predict"), std::move(task),
                     replying<tasks::Classified, PredictResponse>(
                         w, chars, std::move(reply), [](tasks::Classified& r, PredictResponse& out) {
                           const std::vector<float>& scores = r.scores[0];
                           for (const std::size_t k : serving::by_score(scores)) {
                             tei::v1::Prediction* p = out.add_predictions();
                             p->set_score(scores[k]);
                             p->set_label((*r.labels)[k]);
                           }
                         }));
}

void predict(Backend& b, const Work& w, std::shared_ptr<const PredictRequest> rq,
             Reply<PredictResponse> reply) {
  predict_one(b, w, rq->inputs(), std::nullopt, rq->truncate(), rq->truncation_direction(), rq->raw_scores(),
              std::move(reply));
}

void predict_pair(Backend& b, const Work& w, std::shared_ptr<const PredictPairRequest> rq,
                  Reply<PredictResponse> reply) {
  if (rq->inputs_size() != 2) {
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("`inputs` must hold a text and its pair (2 elements), got {}", rq->inputs_size()));
  }
  predict_one(b, w, rq->inputs(0), rq->inputs(1), rq->truncate(), rq->truncation_direction(),
              rq->raw_scores(), std::move(reply));
}

// A query (per pair) and its texts, as Rerank and RerankStream receive them, and how the
// answer shows them.
struct Pairs {
  tasks::Rerank task;
  bool return_text = false;
};

// Rerank and RerankStream's ranks: by a cross-encoder, or by an embedding model's token
// vectors (the similarity is the score: raw_scores changes nothing), as on HTTP's /rerank.
void rerank_pairs(Backend& b, const Work& w, std::shared_ptr<Pairs> rq, Reply<RerankResponse> reply) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < rq->task.texts.size(); ++i) {
    chars += utf8::code_points(rq->task.query(i)) + utf8::code_points(rq->task.texts[i]);
  }
  auto texts = std::make_shared<const std::vector<std::string>>(rq->task.texts);
  b.tasks().rerank(
      task_context(w, "Rerank"), std::move(rq->task),
      replying<std::vector<float>, RerankResponse>(
          w, chars, std::move(reply),
          [texts, return_text = rq->return_text](std::vector<float>& scores, RerankResponse& out) {
            for (const std::size_t i : serving::by_score(scores)) {
              tei::v1::Rank* rank = out.add_ranks();
              rank->set_index(static_cast<std::uint32_t>(i));
              rank->set_score(scores[i]);
              if (return_text) rank->set_text((*texts)[i]);
            }
          }));
}

void rerank(Backend& b, const Work& w, std::shared_ptr<const RerankRequest> rq, Reply<RerankResponse> reply) {
  auto pairs = std::make_shared<Pairs>();
  pairs->task.queries.push_back(rq->query());
  pairs->task.texts.assign(rq->texts().begin(), rq->texts().end());
  pairs->task.tokenization = {rq->truncate(), side_of(rq->truncation_direction()), std::nullopt};
  pairs->task.raw_scores = rq->raw_scores();
  pairs->return_text = rq->return_text();
  rerank_pairs(b, w, std::move(pairs), std::move(reply));
}

// RerankStream: pairs arrive one per message and are ranked together when the client is
// done sending; raw_scores and return_text are the first message's (TEI's rule).
class RerankStreamCall final : public ::grpc::ServerReadReactor<Bytes> {
 public:
  RerankStreamCall(Backend& backend, ::grpc::CallbackServerContext* context, Bytes* response)
      : backend_(backend), response_(response) {
    const ::grpc::Status auth = backend.authorize(*context);
    if (!auth.ok()) {
      end_->finish(auth);
      return;
    }
    work_.model = backend.model_for(*context, {ModelKind::Reranker});
    StartRead(&incoming_);
  }
  void OnReadDone(bool ok) override {
    if (work_.cancelled->cancelled()) return;  // ended by the cancel; a pending read completes not ok
    if (ok) {
      RerankStreamRequest message;
      if (!parse_request(incoming_, message)) return end_->finish(unparsable(message));
      if (pairs_->task.texts.size() >= backend_.tasks().limits().max_batch) {
        return end_->finish(
            {::grpc::StatusCode::INVALID_ARGUMENT,
             fmt::format("batch size > maximum allowed batch size {}", backend_.tasks().limits().max_batch)});
      }
      if (pairs_->task.texts.empty()) {
        pairs_->task.tokenization = {message.truncate(), side_of(message.truncation_direction()),
                                     std::nullopt};
        pairs_->task.raw_scores = message.raw_scores();
        pairs_->return_text = message.return_text();
      }
      pairs_->task.queries.push_back(std::move(*message.mutable_query()));
      pairs_->task.texts.push_back(std::move(*message.mutable_text()));
      StartRead(&incoming_);
      return;
    }
    // The client is done sending: one job for every pair.
    try {
      rerank_pairs(backend_, work_, pairs_, [end = end_](const ::grpc::Status& status, RerankResponse& out) {
        end->finish(status, [&](RerankStreamCall& call) { *call.response_ = serialize_answer(out); });
      });
    } catch (...) {
      end_->finish(to_status(std::current_exception()));
    }
  }
  void OnCancel() override {
    work_.cancelled->cancel();
    end_->finish({::grpc::StatusCode::CANCELLED, "the client cancelled the call"});
  }
  void OnDone() override { delete this; }

 private:
  friend class CallEnd<RerankStreamCall>;
  void finished(const ::grpc::Status& status) {
    backend_.record("/tei.v1.Rerank/RerankStream", status, Clock::now() - work_.received);
    Finish(status);
  }
  Backend& backend_;
  Bytes* response_;
  Work work_;
  Bytes incoming_;
  std::shared_ptr<Pairs> pairs_ = std::make_shared<Pairs>();
  std::shared_ptr<CallEnd<RerankStreamCall>> end_ = std::make_shared<CallEnd<RerankStreamCall>>(this);
};

const std::initializer_list<ModelKind> kClassifiers = {ModelKind::Classifier, ModelKind::Reranker};
const std::initializer_list<ModelKind> kRerankers = {ModelKind::Reranker};

}  // namespace

::grpc::ServerUnaryReactor* PredictService::Predict(::grpc::CallbackServerContext* context,
                                                    const Bytes* request, Bytes* response) {
  return serve_unary<PredictRequest, PredictResponse>(backend_, context, request, response,
                                                      "/tei.v1.Predict/Predict", kClassifiers, predict);
}

::grpc::ServerUnaryReactor* PredictService::PredictPair(::grpc::CallbackServerContext* context,
                                                        const Bytes* request, Bytes* response) {
  return serve_unary<PredictPairRequest, PredictResponse>(
      backend_, context, request, response, "/tei.v1.Predict/PredictPair", kClassifiers, predict_pair);
}

BidiReactor* PredictService::PredictStream(::grpc::CallbackServerContext* context) {
  return new StreamCall<PredictRequest, PredictResponse>(backend_, context, "/tei.v1.Predict/PredictStream",
                                                         kClassifiers, predict);
}

BidiReactor* PredictService::PredictPairStream(::grpc::CallbackServerContext* context) {
  return new StreamCall<PredictPairRequest, PredictResponse>(
      backend_, context, "/tei.v1.Predict/PredictPairStream", kClassifiers, predict_pair);
}

::grpc::ServerUnaryReactor* RerankService::Rerank(::grpc::CallbackServerContext* context,
                                                  const Bytes* request, Bytes* response) {
  return serve_unary<RerankRequest, RerankResponse>(backend_, context, request, response,
                                                    "/tei.v1.Rerank/Rerank", kRerankers, rerank);
}

::grpc::ServerReadReactor<Bytes>* RerankService::RerankStream(::grpc::CallbackServerContext* context,
                                                              Bytes* response) {
  return new RerankStreamCall(backend_, context, response);
}

}  // namespace warden::grpc
