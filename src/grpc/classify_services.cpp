// tei.v1.Predict (a classifier's labels for a text or a pair) and tei.v1.Rerank (a
// reranker's scores for a query against texts). The same steps as HTTP's /predict and
// /rerank: the same options, cache keys and scores, so the same inputs give the same numbers.

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "grpc/services.hpp"
#include "serving/results.hpp"
#include "serving/vector_rerank.hpp"

namespace warden::grpc {

namespace {

using tei::v1::PredictPairRequest;
using tei::v1::PredictRequest;
using tei::v1::PredictResponse;
using tei::v1::RerankRequest;
using tei::v1::RerankResponse;
using tei::v1::RerankStreamRequest;

InputOptions classify_options(bool truncate, tei::v1::TruncationDirection direction) {
  InputOptions o;
  o.truncate = truncate;
  o.side = side_of(direction);
  return o;
}

// Predict and PredictPair: one text, or a text and its pair.
void predict_one(Backend& b, const Work& w, std::shared_ptr<const std::string> text,
                 std::shared_ptr<const std::string> pair, bool truncate,
                 tei::v1::TruncationDirection direction, bool raw_scores, Reply<PredictResponse> reply) {
  if (text->empty()) throw Error(ErrorKind::InvalidArgument, "`inputs` cannot be empty");
  auto fail = failing(reply);
  b.with_model(
      w,
      [&b, w, text, pair, truncate, direction, raw_scores, reply, fail](serving::LeasePtr lease) {
        const SequenceClassifier& c = classifier_of(*lease, "Predict");
        const InputOptions o = classify_options(truncate, direction);
        serving::InferenceRequest job =
            serving::InferenceRequest::on(lease->model(), serving::Output::Logits);
        job.inputs = 1;
        job.prepare = [&c, text, pair, o](std::size_t) {
          return c.prepare(*text, pair ? std::optional<std::string_view>(*pair) : std::nullopt, o);
        };
        if (b.pipeline().caching()) {
          job.key = [prefix = serving::Pipeline::cache_prefix(*lease, "logits", o), text, pair](std::size_t) {
            return serving::pair_key(prefix, *text, pair.get());
          };
        }
        b.infer(
            w, lease, std::move(job),
            [&c, w, text, pair, raw_scores, reply](serving::Inference& r) {
              const std::vector<float> scores = serving::class_scores(r.result.rows.row(0), raw_scores);
              PredictResponse out;
              for (const std::size_t k : serving::by_score(scores)) {
                tei::v1::Prediction* p = out.add_predictions();
                p->set_score(scores[k]);
                p->set_label(c.labels()[k]);
              }
              const std::size_t chars = utf8::code_points(*text) + (pair ? utf8::code_points(*pair) : 0);
              fill_metadata(*out.mutable_metadata(), r, chars, w.received);
              reply(::grpc::Status::OK, out);
            },
            fail);
      },
      fail);
}

void predict(Backend& b, const Work& w, std::shared_ptr<const PredictRequest> rq,
             Reply<PredictResponse> reply) {
  predict_one(b, w, std::shared_ptr<const std::string>(rq, &rq->inputs()), nullptr, rq->truncate(),
              rq->truncation_direction(), rq->raw_scores(), std::move(reply));
}

void predict_pair(Backend& b, const Work& w, std::shared_ptr<const PredictPairRequest> rq,
                  Reply<PredictResponse> reply) {
  if (rq->inputs_size() != 2) {
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("`inputs` must hold a text and its pair (2 elements), got {}", rq->inputs_size()));
  }
  predict_one(b, w, std::shared_ptr<const std::string>(rq, &rq->inputs(0)),
              std::shared_ptr<const std::string>(rq, &rq->inputs(1)), rq->truncate(),
              rq->truncation_direction(), rq->raw_scores(), std::move(reply));
}

// A query (per pair) and its texts, as Rerank and RerankStream receive them.
struct Pairs {
  std::vector<std::string> queries;  // one per text, or one for all
  std::vector<std::string> texts;
  bool truncate = false;
  tei::v1::TruncationDirection direction = tei::v1::TRUNCATION_DIRECTION_RIGHT;
  bool raw_scores = false;
  bool return_text = false;
  [[nodiscard]] const std::string& query(std::size_t i) const {
    return queries.size() == 1 ? queries[0] : queries[i];
  }
};

// The ranks of `scores` (best first) with the characters of every pair.
RerankResponse rank_response(const Pairs& rq, const std::vector<float>& scores, std::size_t& chars) {
  RerankResponse out;
  chars = 0;
  for (std::size_t i = 0; i < rq.texts.size(); ++i) {
    chars += utf8::code_points(rq.query(i)) + utf8::code_points(rq.texts[i]);
  }
  for (const std::size_t i : serving::by_score(scores)) {
    tei::v1::Rank* rank = out.add_ranks();
    rank->set_index(static_cast<std::uint32_t>(i));
    rank->set_score(scores[i]);
    if (rq.return_text) rank->set_text(rq.texts[i]);
  }
  return out;
}

// Rerank on an embedding model with token vectors (serving/vector_rerank.hpp): each distinct
// query encoded once, as a query, the texts as documents, all in one retrieval job; the
// similarity is the score (raw_scores changes nothing), as on HTTP's /rerank.
template <typename Fail>
void rerank_by_vectors(Backend& b, const Work& w, const serving::LeasePtr& lease,
                       std::shared_ptr<const Pairs> rq, Reply<RerankResponse> reply, Fail fail) {
  const Embedder& e = embedder_of(*lease, "Rerank");
  auto scorer = std::make_shared<const serving::VectorRerank>(e, lease->spec().name, std::nullopt);
  struct Queries {
    std::vector<std::string> distinct;
    std::vector<std::size_t> of_text;  // each text's query in `distinct`
  };
  auto queries = std::make_shared<Queries>();
  for (std::size_t i = 0; i < rq->texts.size(); ++i) {
    const auto at = std::find(queries->distinct.begin(), queries->distinct.end(), rq->query(i));
    queries->of_text.push_back(static_cast<std::size_t>(at - queries->distinct.begin()));
    if (at == queries->distinct.end()) queries->distinct.push_back(rq->query(i));
  }
  const std::size_t nq = queries->distinct.size();
  InputOptions o = classify_options(rq->truncate, rq->direction);
  InputOptions q = o;
  q.query = true;
  serving::InferenceRequest job = serving::InferenceRequest::on(lease->model(), serving::Output::Retrieval);
  job.inputs = nq + rq->texts.size();
  job.prepare = [&e, rq, queries, nq, o, q](std::size_t i) {
    return i < nq ? e.prepare(queries->distinct[i], q) : e.prepare(rq->texts[i - nq], o);
  };
  if (b.pipeline().caching()) {
    job.key = [query_prefix = serving::Pipeline::cache_prefix(*lease, "retrieval", q),
               prefix = serving::Pipeline::cache_prefix(*lease, "retrieval", o), rq, queries,
               nq](std::size_t i) {
      return i < nq ? serving::text_key(query_prefix, queries->distinct[i])
                    : serving::text_key(prefix, rq->texts[i - nq]);
    };
  }
  b.infer(
      w, lease, std::move(job),
      [w, rq, queries, nq, scorer, reply](serving::Inference& r) {
        const std::vector<RetrievalVectors>& outs = r.result.retrieval;
        std::vector<float> scores(rq->texts.size());
        for (std::size_t i = 0; i < scores.size(); ++i) {
          scores[i] = scorer->score(outs[queries->of_text[i]], outs[nq + i]);
        }
        std::size_t chars = 0;
        RerankResponse out = rank_response(*rq, scores, chars);
        fill_metadata(*out.mutable_metadata(), r, chars, w.received);
        reply(::grpc::Status::OK, out);
      },
      fail);
}

void rerank_pairs(Backend& b, const Work& w, std::shared_ptr<const Pairs> rq, Reply<RerankResponse> reply) {
  if (rq->texts.empty()) throw Error(ErrorKind::InvalidArgument, "`texts` cannot be empty");
  const std::size_t limit = b.options().max_client_batch_size;
  if (rq->texts.size() > limit) {
    // TEI's wording, so clients that match on it keep working.
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("batch size {} > maximum allowed batch size {}", rq->texts.size(), limit));
  }
  auto fail = failing(reply);
  b.with_model(
      w,
      [&b, w, rq, reply, fail](serving::LeasePtr lease) {
        if (serving::reranks_by_vectors(lease->model()))
          return rerank_by_vectors(b, w, lease, rq, reply, fail);
        const SequenceClassifier& c = classifier_of(*lease, "Rerank");
        if (c.kind() != ClassifierKind::Reranker) {
          throw Error(
              ErrorKind::Unsupported,
              fmt::format("model {} is a classifier with {} labels: Rerank needs a reranker (one label)",
                          lease->spec().name, c.labels().size()));
        }
        const InputOptions o = classify_options(rq->truncate, rq->direction);
        serving::InferenceRequest job =
            serving::InferenceRequest::on(lease->model(), serving::Output::Logits);
        job.inputs = rq->texts.size();
        job.prepare = [&c, rq, o](std::size_t i) { return c.prepare(rq->query(i), rq->texts[i], o); };
        if (b.pipeline().caching()) {
          job.key = [prefix = serving::Pipeline::cache_prefix(*lease, "logits", o), rq](std::size_t i) {
            return serving::pair_key(prefix, rq->query(i), &rq->texts[i]);
          };
        }
        b.infer(
            w, lease, std::move(job),
            [w, rq, reply](serving::Inference& r) {
              // One label: one logit per text; the sigmoid unless raw_scores.
              const std::span<const float> logits = r.result.rows.values();
              std::vector<float> scores(logits.size());
              for (std::size_t i = 0; i < logits.size(); ++i)
                scores[i] = rq->raw_scores ? logits[i] : sigmoid(logits[i]);
              std::size_t chars = 0;
              RerankResponse out = rank_response(*rq, scores, chars);
              fill_metadata(*out.mutable_metadata(), r, chars, w.received);
              reply(::grpc::Status::OK, out);
            },
            fail);
      },
      fail);
}

void rerank(Backend& b, const Work& w, std::shared_ptr<const RerankRequest> rq, Reply<RerankResponse> reply) {
  auto pairs = std::make_shared<Pairs>();
  pairs->queries.push_back(rq->query());
  pairs->texts.assign(rq->texts().begin(), rq->texts().end());
  pairs->truncate = rq->truncate();
  pairs->direction = rq->truncation_direction();
  pairs->raw_scores = rq->raw_scores();
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
      if (pairs_->texts.size() >= backend_.options().max_client_batch_size) {
        return end_->finish(
            {::grpc::StatusCode::INVALID_ARGUMENT, fmt::format("batch size > maximum allowed batch size {}",
                                                               backend_.options().max_client_batch_size)});
      }
      if (pairs_->texts.empty()) {
        pairs_->truncate = message.truncate();
        pairs_->direction = message.truncation_direction();
        pairs_->raw_scores = message.raw_scores();
        pairs_->return_text = message.return_text();
      }
      pairs_->queries.push_back(std::move(*message.mutable_query()));
      pairs_->texts.push_back(std::move(*message.mutable_text()));
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
