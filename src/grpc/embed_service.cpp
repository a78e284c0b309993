// tei.v1.Embed: pooled vectors (Embed), per-token vectors (EmbedAll) and sparse vectors
// (EmbedSparse), one text per request, unary or streamed. The same steps as HTTP's /embed and
// /embed_all: the same options, cache keys and row finishing, so the same text gives
// bit-identical vectors over either transport.

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "grpc/services.hpp"
#include "serving/results.hpp"

namespace warden::grpc {

namespace {

using tei::v1::EmbedAllRequest;
using tei::v1::EmbedAllResponse;
using tei::v1::EmbedRequest;
using tei::v1::EmbedResponse;
using tei::v1::EmbedSparseRequest;
using tei::v1::EmbedSparseResponse;

void require_inputs(const std::string& inputs) {
  // TEI's rule: there is nothing to embed in an empty text.
  if (inputs.empty()) throw Error(ErrorKind::InvalidArgument, "`inputs` cannot be empty");
}

std::optional<std::string> prompt_name(bool has, const std::string& name) {
  return has ? std::optional<std::string>(name) : std::nullopt;
}

// One text's job on an embedder: `output` (Pooled or PerToken), keyed like HTTP's.
serving::InferenceRequest text_job(Backend& b, const serving::ModelLease& lease, serving::Output output,
                                   std::string_view kind, const Embedder& e,
                                   std::shared_ptr<const std::string> text, const InputOptions& o) {
  serving::InferenceRequest job = serving::InferenceRequest::on(lease.model(), output);
  job.inputs = 1;
  job.prepare = [&e, text, o](std::size_t) { return e.prepare(*text, o); };
  if (b.pipeline().caching()) {
    job.key = [prefix = serving::Pipeline::cache_prefix(lease, kind, o), text](std::size_t) {
      return serving::text_key(prefix, *text);
    };
  }
  return job;
}

void embed(Backend& b, const Work& w, std::shared_ptr<const EmbedRequest> rq, Reply<EmbedResponse> reply) {
  require_inputs(rq->inputs());
  auto fail = failing(reply);
  b.with_model(
      w,
      [&b, w, rq, reply, fail](serving::LeasePtr lease) {
        const Embedder& e = embedder_of(*lease, "Embed");
        if (!e.retrieval_outputs().dense) {
          throw Error(
              ErrorKind::Unsupported,
              fmt::format("{} is a sparse embedding model (SPLADE): ask EmbedSparse", lease->spec().name));
        }
        std::optional<std::size_t> dims;
        if (rq->has_dimensions()) dims = rq->dimensions();
        serving::check_dimensions(dims, e.dim(), "dimensions");
        const InputOptions o = serving::input_options(e, rq->truncate(), side_of(rq->truncation_direction()),
                                                      prompt_name(rq->has_prompt_name(), rq->prompt_name()));
        auto text = std::shared_ptr<const std::string>(rq, &rq->inputs());
        serving::InferenceRequest job = text_job(b, *lease, serving::Output::Pooled, "pooled", e, text, o);
        // proto3: an absent `normalize` is true, as in TEI.
        const bool normalize = !rq->has_normalize() || rq->normalize();
        b.infer(
            w, lease, std::move(job),
            [&e, w, rq, dims, normalize, reply](serving::Inference& r) {
              const Embeddings rows =
                  serving::finish_rows(std::move(r.result.rows), dims, normalize, e.unit_vectors());
              EmbedResponse out;
              const std::span<const float> row = rows.row(0);
              out.mutable_embeddings()->Add(row.begin(), row.end());
              fill_metadata(*out.mutable_metadata(), r, utf8::code_points(rq->inputs()), w.received);
              reply(::grpc::Status::OK, out);
            },
            fail);
      },
      fail);
}

void embed_all(Backend& b, const Work& w, std::shared_ptr<const EmbedAllRequest> rq,
               Reply<EmbedAllResponse> reply) {
  require_inputs(rq->inputs());
  auto fail = failing(reply);
  b.with_model(
      w,
      [&b, w, rq, reply, fail](serving::LeasePtr lease) {
        const Embedder& e = embedder_of(*lease, "EmbedAll");
        const InputOptions o = serving::input_options(e, rq->truncate(), side_of(rq->truncation_direction()),
                                                      prompt_name(rq->has_prompt_name(), rq->prompt_name()));
        auto text = std::shared_ptr<const std::string>(rq, &rq->inputs());
        serving::InferenceRequest job = text_job(b, *lease, serving::Output::PerToken, "tokens", e, text, o);
        b.infer(
            w, lease, std::move(job),
            [w, rq, reply](serving::Inference& r) {
              EmbedAllResponse out;
              const Embeddings& tokens = r.result.per_token[0];
              for (std::size_t t = 0; t < tokens.rows(); ++t) {
                const std::span<const float> row = tokens.row(t);
                out.add_token_embeddings()->mutable_embeddings()->Add(row.begin(), row.end());
              }
              fill_metadata(*out.mutable_metadata(), r, utf8::code_points(rq->inputs()), w.received);
              reply(::grpc::Status::OK, out);
            },
            fail);
      },
      fail);
}

void embed_sparse(Backend& b, const Work& w, std::shared_ptr<const EmbedSparseRequest> rq,
                  Reply<EmbedSparseResponse> reply) {
  require_inputs(rq->inputs());
  auto fail = failing(reply);
  b.with_model(
      w,
      [&b, w, rq, reply, fail](serving::LeasePtr lease) {
        const Embedder& e = embedder_of(*lease, "EmbedSparse");
        // Sparse vectors come from a lexical head (bge-m3's sparse_linear.pt); a dense vector
        // is no stand-in for one.
        if (!e.retrieval_outputs().sparse) {
          throw Error(
              ErrorKind::Unsupported,
              fmt::format(
                  "EmbedSparse needs a model with a lexical (sparse) head; {} gives dense vectors only",
                  lease->spec().name));
        }
        const InputOptions o = serving::input_options(e, rq->truncate(), side_of(rq->truncation_direction()),
                                                      prompt_name(rq->has_prompt_name(), rq->prompt_name()));
        auto text = std::shared_ptr<const std::string>(rq, &rq->inputs());
        serving::InferenceRequest job =
            text_job(b, *lease, serving::Output::Retrieval, "retrieval", e, text, o);
        b.infer(
            w, lease, std::move(job),
            [w, rq, reply](serving::Inference& r) {
              EmbedSparseResponse out;
              const SparseVector& v = r.result.retrieval[0].sparse;
              for (std::size_t k = 0; k < v.size(); ++k) {
                auto* s = out.add_sparse_embeddings();
                s->set_index(v.indices[k]);
                s->set_value(v.values[k]);
              }
              fill_metadata(*out.mutable_metadata(), r, utf8::code_points(rq->inputs()), w.received);
              reply(::grpc::Status::OK, out);
            },
            fail);
      },
      fail);
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
