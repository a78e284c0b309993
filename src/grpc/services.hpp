#pragma once
// Internal to src/grpc/: TEI's five services, each a thin class whose methods hand their
// request to the reactors of backend.hpp with the function that answers it (one .cpp each).
// Every method is raw (bytes): the reactors parse the requests (backend.hpp says why).

#include "grpc/backend.hpp"

namespace warden::grpc {

using RawInfoService = tei::v1::Info::WithRawCallbackMethod_Info<tei::v1::Info::Service>;

class InfoService final : public RawInfoService {
 public:
  explicit InfoService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Info(::grpc::CallbackServerContext* context, const Bytes* request,
                                   Bytes* response) override;

 private:
  Backend& backend_;
};

using RawEmbedService = tei::v1::Embed::WithRawCallbackMethod_Embed<
    tei::v1::Embed::WithRawCallbackMethod_EmbedStream<tei::v1::Embed::WithRawCallbackMethod_EmbedSparse<
        tei::v1::Embed::WithRawCallbackMethod_EmbedSparseStream<
            tei::v1::Embed::WithRawCallbackMethod_EmbedAll<
                tei::v1::Embed::WithRawCallbackMethod_EmbedAllStream<tei::v1::Embed::Service>>>>>>;

class EmbedService final : public RawEmbedService {
 public:
  explicit EmbedService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Embed(::grpc::CallbackServerContext* context, const Bytes* request,
                                    Bytes* response) override;
  BidiReactor* EmbedStream(::grpc::CallbackServerContext* context) override;
  ::grpc::ServerUnaryReactor* EmbedSparse(::grpc::CallbackServerContext* context, const Bytes* request,
                                          Bytes* response) override;
  BidiReactor* EmbedSparseStream(::grpc::CallbackServerContext* context) override;
  ::grpc::ServerUnaryReactor* EmbedAll(::grpc::CallbackServerContext* context, const Bytes* request,
                                       Bytes* response) override;
  BidiReactor* EmbedAllStream(::grpc::CallbackServerContext* context) override;

 private:
  Backend& backend_;
};

using RawPredictService = tei::v1::Predict::WithRawCallbackMethod_Predict<
    tei::v1::Predict::WithRawCallbackMethod_PredictPair<tei::v1::Predict::WithRawCallbackMethod_PredictStream<
        tei::v1::Predict::WithRawCallbackMethod_PredictPairStream<tei::v1::Predict::Service>>>>;

class PredictService final : public RawPredictService {
 public:
  explicit PredictService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Predict(::grpc::CallbackServerContext* context, const Bytes* request,
                                      Bytes* response) override;
  ::grpc::ServerUnaryReactor* PredictPair(::grpc::CallbackServerContext* context, const Bytes* request,
                                          Bytes* response) override;
  BidiReactor* PredictStream(::grpc::CallbackServerContext* context) override;
  BidiReactor* PredictPairStream(::grpc::CallbackServerContext* context) override;

 private:
  Backend& backend_;
};

using RawRerankService = tei::v1::Rerank::WithRawCallbackMethod_Rerank<
    tei::v1::Rerank::WithRawCallbackMethod_RerankStream<tei::v1::Rerank::Service>>;

class RerankService final : public RawRerankService {
 public:
  explicit RerankService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Rerank(::grpc::CallbackServerContext* context, const Bytes* request,
                                     Bytes* response) override;
  ::grpc::ServerReadReactor<Bytes>* RerankStream(::grpc::CallbackServerContext* context,
                                                 Bytes* response) override;

 private:
  Backend& backend_;
};

using RawTokenizeService = tei::v1::Tokenize::WithRawCallbackMethod_Tokenize<
    tei::v1::Tokenize::WithRawCallbackMethod_TokenizeStream<tei::v1::Tokenize::WithRawCallbackMethod_Decode<
        tei::v1::Tokenize::WithRawCallbackMethod_DecodeStream<tei::v1::Tokenize::Service>>>>;

class TokenizeService final : public RawTokenizeService {
 public:
  explicit TokenizeService(Backend& backend) : backend_(backend) {}
  ::grpc::ServerUnaryReactor* Tokenize(::grpc::CallbackServerContext* context, const Bytes* request,
                                       Bytes* response) override;
  BidiReactor* TokenizeStream(::grpc::CallbackServerContext* context) override;
  ::grpc::ServerUnaryReactor* Decode(::grpc::CallbackServerContext* context, const Bytes* request,
                                     Bytes* response) override;
  BidiReactor* DecodeStream(::grpc::CallbackServerContext* context) override;

 private:
  Backend& backend_;
};

}  // namespace warden::grpc
