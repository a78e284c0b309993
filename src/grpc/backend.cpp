#include "grpc/backend.hpp"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "serving/api_key.hpp"
#include "serving/metrics.hpp"
#include "serving/tasks/task_error.hpp"

namespace warden::grpc {

namespace {

std::uint64_t nanos(Clock::duration d) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

std::string millis(std::uint64_t ns) {
  return fmt::format("{}", ns / 1'000'000);
}

}  // namespace

bool parse_request(const Bytes& bytes, google::protobuf::Message& out) {
  Bytes copy(bytes);  // a new reference to the same slices
  return ::grpc::GenericDeserialize<::grpc::ProtoBufferReader, google::protobuf::Message>(&copy, &out).ok();
}

::grpc::Status unparsable(const google::protobuf::Message& type) {
  return {::grpc::StatusCode::INVALID_ARGUMENT,
          fmt::format("the request is not a valid {} message (malformed protobuf, or a string field that is "
                      "not UTF-8)",
                      type.GetTypeName())};
}

Bytes serialize_answer(const google::protobuf::Message& answer) {
  Bytes bytes;
  bool own = false;
  const ::grpc::Status s =
      ::grpc::GenericSerialize<::grpc::ProtoBufferWriter, google::protobuf::Message>(answer, &bytes, &own);
  if (!s.ok()) throw Error(ErrorKind::Internal, "cannot serialise a gRPC answer: " + s.error_message());
  return bytes;
}

namespace {

// A warden::Error by its kind: invalid input or argument INVALID_ARGUMENT, unknown NOT_FOUND,
// a model of the wrong kind FAILED_PRECONDITION (as TEI answers), anything else INTERNAL.
::grpc::Status by_kind(const Error& e) {
  using ::grpc::StatusCode;
  switch (e.kind()) {
    case ErrorKind::InvalidInput:
    case ErrorKind::InvalidArgument:
      return {StatusCode::INVALID_ARGUMENT, e.what()};
    case ErrorKind::NotFound:
      return {StatusCode::NOT_FOUND, e.what()};
    case ErrorKind::Unsupported:
      return {StatusCode::FAILED_PRECONDITION, e.what()};
    default:
      return {StatusCode::INTERNAL, e.what()};
  }
}

}  // namespace

::grpc::Status to_status(const std::exception_ptr& error) {
  using ::grpc::StatusCode;
  try {
    std::rethrow_exception(error);
  } catch (const serving::NotComputed& e) {
    switch (e.outcome()) {
      case serving::Outcome::Rejected:
        return {StatusCode::RESOURCE_EXHAUSTED, e.what()};
      case serving::Outcome::TimedOut:
        return {StatusCode::DEADLINE_EXCEEDED, e.what()};
      case serving::Outcome::Cancelled:
        return {StatusCode::CANCELLED, e.what()};
      default:
        return {StatusCode::UNAVAILABLE, e.what()};
    }
  } catch (const serving::ModelLoadTimeout& e) {
    return {StatusCode::UNAVAILABLE, e.what()};
  } catch (const serving::tasks::TaskError& e) {
    switch (e.fault()) {
      case serving::tasks::Fault::NoModel:
        return {StatusCode::UNAVAILABLE, e.what()};
      case serving::tasks::Fault::TooLarge:
        return {StatusCode::RESOURCE_EXHAUSTED, e.what()};
      default:
        return by_kind(e);
    }
  } catch (const Error& e) {
    return by_kind(e);
  } catch (const std::exception& e) {
    return {StatusCode::INTERNAL, e.what()};
  } catch (...) {
    return {StatusCode::INTERNAL, "unknown error"};
  }
}

::grpc::Status Backend::authorize(const ::grpc::CallbackServerContext& context) const {
  if (options_.api_key.empty()) return ::grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  if (it != metadata.end() &&
      serving::bearer_authorized(std::string_view(it->second.data(), it->second.size()), options_.api_key)) {
    return ::grpc::Status::OK;
  }
  return {::grpc::StatusCode::UNAUTHENTICATED, "missing or wrong API key (send authorization: Bearer <key>)"};
}

std::string Backend::model_for(const ::grpc::CallbackServerContext& context,
                               std::initializer_list<ModelKind> kinds) const {
  serving::tasks::ModelChoice choice;
  const auto& metadata = context.client_metadata();
  if (const auto it = metadata.find("x-warden-model"); it != metadata.end())
    choice.exact.assign(it->second.data(), it->second.size());
  return tasks_.choose(choice, kinds).name;
}

serving::tasks::Context task_context(const Work& work, std::string_view method) {
  serving::tasks::Context c;
  c.model.exact = work.model;
  c.asker = std::string(method);
  c.cancelled = work.cancelled;
  return c;
}

void Backend::record(std::string_view method, const ::grpc::Status& status, Clock::duration total) const {
  if (metrics_ == nullptr) return;
  static constexpr const char* kCodes[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  const auto code = static_cast<std::size_t>(status.error_code());
  const std::string code_name = code < std::size(kCodes) ? kCodes[code] : std::to_string(code);
  metrics_
      ->counter("warden_grpc_requests_total", "gRPC calls answered, by method and status code",
                {{"method", std::string(method)}, {"code", code_name}})
      .inc();
  metrics_
      ->histogram("warden_grpc_request_duration_seconds",
                  "Time from a gRPC call's start to its answer, by method",
                  serving::default_latency_buckets(), {{"method", std::string(method)}})
      .observe(std::chrono::duration<double>(total).count());
}

embed::TruncationSide side_of(tei::v1::TruncationDirection direction) noexcept {
  return direction == tei::v1::TRUNCATION_DIRECTION_LEFT ? embed::TruncationSide::Left
                                                         : embed::TruncationSide::Right;
}

void fill_metadata(tei::v1::Metadata& m, const serving::Inference& inference, std::size_t characters,
                   Clock::time_point received) {
  m.set_compute_chars(static_cast<std::uint32_t>(characters));
  m.set_compute_tokens(static_cast<std::uint32_t>(inference.total_tokens));
  m.set_total_time_ns(nanos(Clock::now() - received));
  m.set_tokenization_time_ns(nanos(inference.tokenization));
  m.set_queue_time_ns(nanos(inference.job.queue));
  m.set_inference_time_ns(nanos(inference.job.inference));
}

void add_timing_headers(::grpc::CallbackServerContext& context, const tei::v1::Metadata& m) {
  const std::uint64_t compute = m.tokenization_time_ns() + m.queue_time_ns() + m.inference_time_ns();
  context.AddInitialMetadata("x-compute-time", millis(compute));
  context.AddInitialMetadata("x-compute-characters", std::to_string(m.compute_chars()));
  context.AddInitialMetadata("x-compute-tokens", std::to_string(m.compute_tokens()));
  context.AddInitialMetadata("x-total-time", millis(m.total_time_ns()));
  context.AddInitialMetadata("x-tokenization-time", millis(m.tokenization_time_ns()));
  context.AddInitialMetadata("x-queue-time", millis(m.queue_time_ns()));
  context.AddInitialMetadata("x-inference-time", millis(m.inference_time_ns()));
}

}  // namespace warden::grpc
