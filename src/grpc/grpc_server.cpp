#include "grpc/grpc_server.hpp"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "grpc/services.hpp"

namespace warden::grpc {

struct GrpcServer::Impl {
  Impl(serving::Pipeline& pipeline, GrpcOptions options, serving::MetricsRegistry* metrics)
      : backend(pipeline, std::move(options), metrics),
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
  int port = 0;
  bool stopped = false;
};

GrpcServer::GrpcServer(serving::Pipeline& pipeline, GrpcOptions options, serving::MetricsRegistry* metrics) {
  const std::string address =
      fmt::format("{}:{}",
                  options.hostname.find(':') != std::string::npos ? fmt::format("[{}]", options.hostname)
                                                                  : options.hostname,
                  options.port);
  const int max_message = static_cast<int>(std::min<std::size_t>(options.max_message_bytes, INT32_MAX));
  impl_ = std::make_unique<Impl>(pipeline, std::move(options), metrics);
  // gRPC's health service (grpc.health.v1) and reflection: registered before the builder.
  ::grpc::EnableDefaultHealthCheckService(true);
  ::grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  ::grpc::ServerBuilder builder;
  builder.AddListeningPort(address, ::grpc::InsecureServerCredentials(), &impl_->port);
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
  if (impl_->server == nullptr || impl_->port == 0) {
    throw Error(ErrorKind::Io, fmt::format("gRPC: cannot listen on {}", address));
  }
}

GrpcServer::~GrpcServer() {
  shutdown(std::chrono::milliseconds(0));
}

int GrpcServer::port() const noexcept {
  return impl_->port;
}

void GrpcServer::shutdown(std::chrono::milliseconds grace) {
  if (impl_->stopped) return;
  impl_->stopped = true;
  // Calls in progress finish through the pipeline (its scheduler still runs); past the
  // grace they are cancelled, and Shutdown returns once every call is done.
  impl_->server->Shutdown(std::chrono::system_clock::now() + grace);
  impl_->server->Wait();
}

}  // namespace warden::grpc
