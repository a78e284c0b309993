// tei.v1.Embed: pooled vectors (Embed), per-token vectors (EmbedAll) and sparse vectors
// (EmbedSparse), one text per request, unary or streamed. The same steps as HTTP's /embed and
// /embed_all: the same tasks (serving/tasks), so the same text gives bit-identical vectors
// over either transport.

#include "core/utf8.hpp"
#include "grpc/services.hpp"

namespace warden::grpc {

namespace {

namespace tasks = serving::tasks;
using tei::v1::EmbedAllRequest;
using tei::v1::EmbedAllResponse;
using tei::v1::EmbedRequest;
using tei::v1::EmbedResponse;
using tei::v1::EmbedSparseRequest;
using tei::v1::EmbedSparseResponse;

// A request's one text, named `inputs` in errors, and its tokenization options.
template <class Req>
std::vector<tasks::Input> one_input(const Req& rq) {
  return {tasks::Input{rq.inputs(), {}, false}};
}
const tasks::Field kInputs{"inputs", false};
template <class Req>
tasks::Tokenization tokenization_of(const Req& rq) {
  return {rq.truncate(), side_of(rq.truncation_direction()),
          rq.has_prompt_name() ? std::optional<std::string>(rq.prompt_name()) : std::nullopt};
}

void embed(Backend& b, const Work& w, std::shared_ptr<const EmbedRequest> rq, Reply<EmbedResponse> reply) {
  tasks::Embed task;
  task.inputs = one_input(*rq);
  task.field = kInputs;
  task.tokenization = tokenization_of(*rq);
  if (rq->has_dimensions()) task.dimensions = rq->dimensions();
  // proto3: an absent `normalize` is true, as in TEI.
  task.normalize = !rq->has_normalize() || rq->normalize();
  b.tasks().embed(task_context(w, "Embed"), std::move(task),
                  replying<Embeddings, EmbedResponse>(w, utf8::code_points(rq->inputs()), std::move(reply),
                                                      [](Embeddings& rows, EmbedResponse& out) {
                                                        const std::span<const float> row = rows.row(0);
                                                        out.mutable_embeddings()->Add(row.begin(), row.end());
                                                      }));
}

void embed_all(Backend& b, const Work& w, std::shared_ptr<const EmbedAllRequest> rq,
               Reply<EmbedAllResponse> reply) {
  tasks::EmbedTokens task;
  task.inputs = one_input(*rq);
  task.field = kInputs;
  task.tokenization = tokenization_of(*rq);
  b.tasks().embed_tokens(task_context(w, "EmbedAll"), std::move(task),
                         replying<std::vector<Embeddings>, EmbedAllResponse>(
                             w, utf8::code_points(rq->inputs()), std::move(reply),
                             [](std::vector<Embeddings>& per_input, EmbedAllResponse& out) {
                               const Embeddings& tokens = per_input[0];
                               for (std::size_t t = 0; t < tokens.rows(); ++t) {
                                 const std::span<const float> row = tokens.row(t);
                                 out.add_token_embeddings()->mutable_embeddings()->Add(row.begin(),
                                                                                       row.end());
                               }
                             }));
}

void embed_sparse(Backend& b, const Work& w, std::shared_ptr<const EmbedSparseRequest> rq,
                  Reply<EmbedSparseResponse> reply) {
  tasks::EmbedRetrieval task;
  task.inputs = one_input(*rq);
  task.field = kInputs;
  task.tokenization = tokenization_of(*rq);
  // Sparse vectors come from a lexical head (bge-m3's sparse_linear.pt); a dense vector is no
  // stand-in for one.
  task.outputs = embed::RetrievalOutputs{.dense = false, .sparse = true, .multi = false};
  b.tasks().embed_retrieval(
      task_context(w, "EmbedSparse"), std::move(task),
      replying<tasks::Retrieved, EmbedSparseResponse>(w, utf8::code_points(rq->inputs()), std::move(reply),
                                                      [](tasks::Retrieved& r, EmbedSparseResponse& out) {
                                                        const SparseVector& v = r.vectors[0].sparse;
                                                        for (std::size_t k = 0; k < v.size(); ++k) {
                                                          auto* s = out.add_sparse_embeddings();
                                                          s->set_index(v.indices[k]);
                                                          s->set_value(v.values[k]);
                                                        }
                                                      }));
}

const std::initializer_list<ModelKind> kEmbedding = {ModelKind::Embedding};

}  // namespace

::grpc::ServerUnaryReactor* EmbedService::Embed(::grpc::CallbackServerContext* context, const Bytes* request,
                                                Bytes* response) {
  return serve_unary<EmbedRequest, EmbedResponse>(backend_, context, request, response, "/tei.v1.Embed/Embed",
                                                  kEmbedding, embed);
}

BidiReactor* EmbedService::EmbedStream(::grpc::CallbackServerContext* context) {
  return new StreamCall<EmbedRequest, EmbedResponse>(backend_, context, "/tei.v1.Embed/EmbedStream",
                                                     kEmbedding, embed);
}

::grpc::ServerUnaryReactor* EmbedService::EmbedSparse(::grpc::CallbackServerContext* context,
                                                      const Bytes* request, Bytes* response) {
  return serve_unary<EmbedSparseRequest, EmbedSparseResponse>(
      backend_, context, request, response, "/tei.v1.Embed/EmbedSparse", kEmbedding, embed_sparse);
}

BidiReactor* EmbedService::EmbedSparseStream(::grpc::CallbackServerContext* context) {
  return new StreamCall<EmbedSparseRequest, EmbedSparseResponse>(
      backend_, context, "/tei.v1.Embed/EmbedSparseStream", kEmbedding, embed_sparse);
}

::grpc::ServerUnaryReactor* EmbedService::EmbedAll(::grpc::CallbackServerContext* context,
                                                   const Bytes* request, Bytes* response) {
  return serve_unary<EmbedAllRequest, EmbedAllResponse>(backend_, context, request, response,
                                                        "/tei.v1.Embed/EmbedAll", kEmbedding, embed_all);
}

BidiReactor* EmbedService::EmbedAllStream(::grpc::CallbackServerContext* context) {
  return new StreamCall<EmbedAllRequest, EmbedAllResponse>(backend_, context, "/tei.v1.Embed/EmbedAllStream",
                                                           kEmbedding, embed_all);
}

}  // namespace warden::grpc
