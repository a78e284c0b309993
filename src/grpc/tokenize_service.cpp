// tei.v1.Tokenize: the tokenizer alone (Tokenize, Decode), on a worker like HTTP's /tokenize
// and /decode; no model compute, so no batches.

#include <fmt/format.h>

#include "core/error.hpp"
#include "grpc/services.hpp"
#include "serving/results.hpp"

namespace warden::grpc {

namespace {

using tei::v1::DecodeRequest;
using tei::v1::DecodeResponse;
using tei::v1::EncodeRequest;
using tei::v1::EncodeResponse;

// Runs `answer` on a worker with the call's embedder, its lease held until then.
template <class Res>
void on_worker(Backend& b, const Work& w, std::string_view method,
               std::function<void(const Embedder&, Res&)> answer, Reply<Res> reply) {
  auto fail = failing(reply);
  b.with_model(
      w,
      [&b, method, answer = std::move(answer), reply, fail](serving::LeasePtr lease) {
        const Embedder& e = embedder_of(*lease, method);
        b.pipeline().post([lease, &e, answer, reply, fail] {
          try {
            Res out;
            answer(e, out);
            reply(::grpc::Status::OK, out);
          } catch (...) {
            fail(to_status(std::current_exception()));
          }
        });
      },
      fail);
}

void tokenize(Backend& b, const Work& w, std::shared_ptr<const EncodeRequest> rq,
              Reply<EncodeResponse> reply) {
  on_worker<EncodeResponse>(
      b, w, "Tokenize",
      [&b, rq](const Embedder& e, EncodeResponse& out) {
        std::optional<std::string> name;
        if (rq->has_prompt_name()) name = rq->prompt_name();
        InputOptions o = serving::input_options(e, b.options().auto_truncate, TruncationSide::Right, name);
        o.add_special_tokens = rq->add_special_tokens();
        for (const TokenInfo& t : serving::tei_tokens(e, rq->inputs(), o)) {
          tei::v1::SimpleToken* token = out.add_tokens();
          token->set_id(t.id);
          token->set_text(t.text);
          token->set_special(t.special);
          if (t.start) token->set_start(static_cast<std::uint32_t>(*t.start));
          if (t.stop) token->set_stop(static_cast<std::uint32_t>(*t.stop));
        }
      },
      std::move(reply));
}

void decode(Backend& b, const Work& w, std::shared_ptr<const DecodeRequest> rq, Reply<DecodeResponse> reply) {
  on_worker<DecodeResponse>(
      b, w, "Decode",
      [rq](const Embedder& e, DecodeResponse& out) {
        const std::vector<std::uint32_t> ids(rq->ids().begin(), rq->ids().end());
        out.set_text(e.decode(ids, rq->skip_special_tokens()));
      },
      std::move(reply));
}

const std::initializer_list<ModelKind> kEmbedding = {ModelKind::Embedding};

}  // namespace

::grpc::ServerUnaryReactor* TokenizeService::Tokenize(::grpc::CallbackServerContext* context,
                                                      const Bytes* request, Bytes* response) {
  return serve_unary<EncodeRequest, EncodeResponse>(backend_, context, request, response,
                                                    "/tei.v1.Tokenize/Tokenize", kEmbedding, tokenize);
}

BidiReactor* TokenizeService::TokenizeStream(::grpc::CallbackServerContext* context) {
  return new StreamCall<EncodeRequest, EncodeResponse>(backend_, context, "/tei.v1.Tokenize/TokenizeStream",
                                                       kEmbedding, tokenize);
}

::grpc::ServerUnaryReactor* TokenizeService::Decode(::grpc::CallbackServerContext* context,
                                                    const Bytes* request, Bytes* response) {
  return serve_unary<DecodeRequest, DecodeResponse>(backend_, context, request, response,
                                                    "/tei.v1.Tokenize/Decode", kEmbedding, decode);
}

BidiReactor* TokenizeService::DecodeStream(::grpc::CallbackServerContext* context) {
  return new StreamCall<DecodeRequest, DecodeResponse>(backend_, context, "/tei.v1.Tokenize/DecodeStream",
                                                       kEmbedding, decode);
}

}  // namespace warden::grpc
