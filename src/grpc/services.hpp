#pragma once
// Internal to src/grpc/: TEI's five services, each a thin class whose methods hand their
// request to the reactors of backend.hpp with the function that answers it (one .cpp each).

#include "grpc/backend.hpp"

namespace warden::grpc {

class InfoService final : public tei::v1::Info::CallbackService {
 public:
  explicit InfoService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Info(::grpc::CallbackServerContext* context,
                                   const tei::v1::InfoRequest* request,
                                   tei::v1::InfoResponse* response) override;

 private:
  Backend& backend_;
};

class EmbedService final : public tei::v1::Embed::CallbackService {
 public:
  explicit EmbedService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Embed(::grpc::CallbackServerContext* context,
                                    const tei::v1::EmbedRequest* request,
                                    tei::v1::EmbedResponse* response) override;
  ::grpc::ServerBidiReactor<tei::v1::EmbedRequest, tei::v1::EmbedResponse>* EmbedStream(
      ::grpc::CallbackServerContext* context) override;
  ::grpc::ServerUnaryReactor* EmbedSparse(::grpc::CallbackServerContext* context,
                                          const tei::v1::EmbedSparseRequest* request,
                                          tei::v1::EmbedSparseResponse* response) override;
  ::grpc::ServerBidiReactor<tei::v1::EmbedSparseRequest, tei::v1::EmbedSparseResponse>* EmbedSparseStream(
      ::grpc::CallbackServerContext* context) override;
  ::grpc::ServerUnaryReactor* EmbedAll(::grpc::CallbackServerContext* context,
                                       const tei::v1::EmbedAllRequest* request,
                                       tei::v1::EmbedAllResponse* response) override;
  ::grpc::ServerBidiReactor<tei::v1::EmbedAllRequest, tei::v1::EmbedAllResponse>* EmbedAllStream(
      ::grpc::CallbackServerContext* context) override;

 private:
  Backend& backend_;
};

class PredictService final : public tei::v1::Predict::CallbackService {
 public:
  explicit PredictService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Predict(::grpc::CallbackServerContext* context,
                                      const tei::v1::PredictRequest* request,
                                      tei::v1::PredictResponse* response) override;
  ::grpc::ServerUnaryReactor* PredictPair(::grpc::CallbackServerContext* context,
                                          const tei::v1::PredictPairRequest* request,
                                          tei::v1::PredictResponse* response) override;
  ::grpc::ServerBidiReactor<tei::v1::PredictRequest, tei::v1::PredictResponse>* PredictStream(
      ::grpc::CallbackServerContext* context) override;
  ::grpc::ServerBidiReactor<tei::v1::PredictPairRequest, tei::v1::PredictResponse>* PredictPairStream(
      ::grpc::CallbackServerContext* context) override;

 private:
  Backend& backend_;
};

class RerankService final : public tei::v1::Rerank::CallbackService {
 public:
  explicit RerankService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Rerank(::grpc::CallbackServerContext* context,
                                     const tei::v1::RerankRequest* request,
                                     tei::v1::RerankResponse* response) override;
  ::grpc::ServerReadReactor<tei::v1::RerankStreamRequest>* RerankStream(
      ::grpc::CallbackServerContext* context, tei::v1::RerankResponse* response) override;

 private:
  Backend& backend_;
};

class TokenizeService final : public tei::v1::Tokenize::CallbackService {
 public:
  explicit TokenizeService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Tokenize(::grpc::CallbackServerContext* context,
                                       const tei::v1::EncodeRequest* request,
                                       tei::v1::EncodeResponse* response) override;
  ::grpc::ServerBidiReactor<tei::v1::EncodeRequest, tei::v1::EncodeResponse>* TokenizeStream(
      ::grpc::CallbackServerContext* context) override;
  ::grpc::ServerUnaryReactor* Decode(::grpc::CallbackServerContext* context,
                                     const tei::v1::DecodeRequest* request,
                                     tei::v1::DecodeResponse* response) override;
  ::grpc::ServerBidiReactor<tei::v1::DecodeRequest, tei::v1::DecodeResponse>* DecodeStream(
      ::grpc::CallbackServerContext* context) override;

 private:
  Backend& backend_;
};

}  // namespace warden::grpc
