// tei.v1.Info: the model a call without x-warden-model gets (the first embedding model, else
// the first reranker or classifier), and the server's limits, as HTTP's /info reports them.

#include "grpc/services.hpp"

// WARDEN_VERSION: the project's version, defined by src/CMakeLists.txt.

namespace warden::grpc {

namespace {

void info(Backend& b, const Work& w, std::shared_ptr<const tei::v1::InfoRequest> /*rq*/,
          Reply<tei::v1::InfoResponse> reply) {
  b.tasks().lease(task_context(w, "Info"), [&b, reply](serving::tasks::Finished<serving::LeasePtr>& f) {
    if (f.error) {
      tei::v1::InfoResponse none;
      return reply(to_status(f.error), none);
    }
    const serving::LeasePtr& lease = *f.value;
    const serving::LoadedModel& m = lease->model();
    const serving::ModelSpec& spec = lease->spec();
    const serving::SchedulerOptions& s = b.pipeline().scheduler().options();
    tei::v1::InfoResponse out;
    out.set_version(WARDEN_VERSION);
    out.set_model_id(spec.name);
    // The precision the model runs in (the hashing embedder computes in float32).
    out.set_model_dtype(spec.dtype.empty() ? std::string("float32") : spec.dtype);
    if (m.embedder != nullptr) {
      out.set_model_type(tei::v1::MODEL_TYPE_EMBEDDING);
      out.set_max_input_length(static_cast<std::uint32_t>(m.embedder->max_input_tokens()));
    } else {
      out.set_model_type(m.classifier->kind() == classify::ClassifierKind::Reranker
                             ? tei::v1::MODEL_TYPE_RERANKER
                             : tei::v1::MODEL_TYPE_CLASSIFIER);
      out.set_max_input_length(static_cast<std::uint32_t>(m.classifier->max_input_tokens()));
    }
    out.set_max_concurrent_requests(static_cast<std::uint32_t>(s.max_concurrent));
    out.set_max_batch_tokens(static_cast<std::uint32_t>(s.max_batch_tokens));
    out.set_max_batch_requests(static_cast<std::uint32_t>(s.max_batch_inputs));
    out.set_max_client_batch_size(static_cast<std::uint32_t>(b.tasks().limits().max_batch));
    out.set_tokenization_workers(static_cast<std::uint32_t>(b.pipeline().workers()));
    reply(::grpc::Status::OK, out);
  });
}

}  // namespace

::grpc::ServerUnaryReactor* InfoService::Info(::grpc::CallbackServerContext* context, const Bytes* request,
                                              Bytes* response) {
  return serve_unary<tei::v1::InfoRequest, tei::v1::InfoResponse>(
      backend_, context, request, response, "/tei.v1.Info/Info", serving::tasks::kAnyKind, info);
}

}  // namespace warden::grpc
