#include "grpc/grpc_server.hpp"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "grpc/http2_gate.hpp"
#include "grpc/services.hpp"
#include "serving/metrics.hpp"

namespace warden::grpc {

struct GrpcServer::Impl {
  Impl(serving::tasks::Tasks& tasks, GrpcOptions options, serving::MetricsRegistry* metrics)
      : backend(tasks, std::move(options), metrics),
        info(backend),
        embed(backend),
        predict(backend),
        rerank(backend),
        tokenize(backend) {}
  Backend backend;
  InfoService info;
  EmbedService embed;
  PredictService predict;
  RerankService rerank;
  TokenizeService tokenize;
  std::unique_ptr<::grpc::Server> server;
  std::unique_ptr<Http2Gate> gate;  // the port: connections are accepted there and handed to the server
  bool stopped = false;
};

GrpcServer::GrpcServer(serving::tasks::Tasks& tasks, GrpcOptions options, serving::MetricsRegistry* metrics) {
  const int max_message = static_cast<int>(std::min<std::size_t>(options.max_message_bytes, INT32_MAX));
  impl_ = std::make_unique<Impl>(tasks, std::move(options), metrics);
  const GrpcOptions& o = impl_->backend.options();
  std::function<void()> on_refused;
  if (metrics != nullptr) {
    serving::Counter& refused = metrics->counter(
        "warden_grpc_connections_refused_total",
        "gRPC connections closed (GOAWAY ENHANCE_YOUR_CALM) for resetting calls faster than allowed");
    on_refused = [&refused] { refused.inc(); };
  }
  impl_->gate = std::make_unique<Http2Gate>(
      o.hostname, o.port, ResetLimit{o.max_reset_burst, o.resets_per_second}, std::move(on_refused));
  // gRPC's health service (grpc.health.v1) and reflection: registered before the builder.
  ::grpc::EnableDefaultHealthCheckService(true);
  ::grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  ::grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(max_message);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             impl_->backend.options().max_streams_per_connection);
  ::grpc::ResourceQuota quota("warden-grpc");
  quota.Resize(impl_->backend.options().memory_limit_bytes);
  builder.SetResourceQuota(quota);
  builder.RegisterService(&impl_->info);
  builder.RegisterService(&impl_->embed);
  builder.RegisterService(&impl_->predict);
  builder.RegisterService(&impl_->rerank);
  builder.RegisterService(&impl_->tokenize);
  impl_->server = builder.BuildAndStart();
  if (impl_->server == nullptr) throw Error(ErrorKind::Io, "gRPC: the server did not start");
  impl_->gate->open(*impl_->server);
}

GrpcServer::~GrpcServer() {
  shutdown(std::chrono::milliseconds(0));
}

int GrpcServer::port() const noexcept {
  return impl_->gate->port();
}

void GrpcServer::set_serving(bool serving) {
  if (::grpc::HealthCheckServiceInterface* health = impl_->server->GetHealthCheckService()) {
    health->SetServingStatus(serving);
  }
}

void GrpcServer::shutdown(std::chrono::milliseconds grace) {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->gate->stop_accepting();
  // Calls in progress finish through the pipeline (its scheduler still runs); past the
  // grace they are cancelled, and Shutdown returns once every call is done.
  impl_->server->Shutdown(std::chrono::system_clock::now() + grace);
  impl_->server->Wait();
  impl_->gate->close();
}

}  // namespace warden::grpc
