// tei.v1.Tokenize: the tokenizer alone (Tokenize, Decode), on a worker like HTTP's /tokenize
// and /decode; no model compute, so no batches.

#include "grpc/services.hpp"

namespace warden::grpc {

namespace {

using tei::v1::DecodeRequest;
using tei::v1::DecodeResponse;
using tei::v1::EncodeRequest;
using tei::v1::EncodeResponse;

void tokenize(Backend& b, const Work& w, std::shared_ptr<const EncodeRequest> rq,
              Reply<EncodeResponse> reply) {
  serving::tasks::Tokenize task;
  task.inputs = {rq->inputs()};
  task.field = {"inputs", false};
  if (rq->has_prompt_name()) task.prompt_name = rq->prompt_name();
  task.add_special_tokens = rq->add_special_tokens();
  b.tasks().tokenize(
      task_context(w, "Tokenize"), std::move(task),
      [reply = std::move(reply)](serving::tasks::Finished<std::vector<std::vector<embed::TokenInfo>>>& f) {
        EncodeResponse out;
        if (f.error) return reply(to_status(f.error), out);
        for (const embed::TokenInfo& t : (*f.value)[0]) {
          tei::v1::SimpleToken* token = out.add_tokens();
          token->set_id(t.id);
          token->set_text(t.text);
          token->set_special(t.special);
          if (t.start) token->set_start(static_cast<std::uint32_t>(*t.start));
          if (t.stop) token->set_stop(static_cast<std::uint32_t>(*t.stop));
        }
        reply(::grpc::Status::OK, out);
      });
}

void decode(Backend& b, const Work& w, std::shared_ptr<const DecodeRequest> rq, Reply<DecodeResponse> reply) {
  serving::tasks::Decode task;
  task.ids = {std::vector<std::uint32_t>(rq->ids().begin(), rq->ids().end())};
  task.field = {"ids", false};
  task.skip_special_tokens = rq->skip_special_tokens();
  b.tasks().decode(task_context(w, "Decode"), std::move(task),
                   [reply = std::move(reply)](serving::tasks::Finished<std::vector<std::string>>& f) {
                     DecodeResponse out;
                     if (f.error) return reply(to_status(f.error), out);
                     out.set_text((*f.value)[0]);
                     reply(::grpc::Status::OK, out);
                   });
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
