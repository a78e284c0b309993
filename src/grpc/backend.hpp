#pragma once
// Internal to src/grpc/: what every service shares — the runtime's tasks (serving/tasks,
// shared with HTTP), the options, the key check, the model a call pins, the one map from an
// error to a gRPC status, a task's end as an answer (`replying`), the per-call metrics — and
// the two reactors every method runs in: one for a unary call, one for a stream of requests
// answered in order. A method is written once, as a function that states its task and
// answers one request through `reply`; the reactors run it for unary and streaming calls.
//
// Every method is registered raw (bytes in, bytes out) and the reactors parse the request
// themselves: gRPC's own parsing answers a message that does not parse (malformed protobuf, a
// string that is not UTF-8) with UNIMPLEMENTED, which tells the client the method does not
// exist, and ends a stream on such a message as if the client had finished it.

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "core/cancellation.hpp"
#include "core/model_kind.hpp"
#include "grpc/grpc_server.hpp"
#include "serving/model_manager.hpp"
#include "serving/pipeline.hpp"
#include "serving/tasks/tasks.hpp"
#include "tei.grpc.pb.h"

namespace warden::grpc {

using Clock = std::chrono::steady_clock;

// The one map from an error to its status: a request the pipeline did not compute by its
// outcome (overloaded RESOURCE_EXHAUSTED, queue timeout DEADLINE_EXCEEDED, cancelled,
// stopping UNAVAILABLE), a model load that outlasted its wait UNAVAILABLE, a task's refusal
// (serving/tasks/task_error.hpp: no model UNAVAILABLE, an answer too large RESOURCE_EXHAUSTED,
// the rest by kind), a warden::Error by
// its kind (invalid input or argument INVALID_ARGUMENT, unknown NOT_FOUND, a model of the
// wrong kind FAILED_PRECONDITION, as TEI answers), anything else INTERNAL.
::grpc::Status to_status(const std::exception_ptr& error);

// One call, or one message of a stream, on its way through the pipeline.
struct Work {
  std::string model;  // the served model it runs on
  std::shared_ptr<Cancellation> cancelled = std::make_shared<Cancellation>();
  Clock::time_point received = Clock::now();
};

template <class Res>
using Reply = std::function<void(const ::grpc::Status&, Res&)>;

// The raw form every method is registered in.
using Bytes = ::grpc::ByteBuffer;
using BidiReactor = ::grpc::ServerBidiReactor<Bytes, Bytes>;

// Parses one request message (a copy of `bytes`: gRPC's parser consumes its buffer); false
// for bytes that are not a valid `out` (malformed, or a proto3 string that is not UTF-8).
[[nodiscard]] bool parse_request(const Bytes& bytes, google::protobuf::Message& out);
// INVALID_ARGUMENT naming the message type that did not parse.
[[nodiscard]] ::grpc::Status unparsable(const google::protobuf::Message& type);
// One answer message as bytes; Error(Internal) if protobuf cannot (past its 2 GiB limit).
[[nodiscard]] Bytes serialize_answer(const google::protobuf::Message& answer);

class Backend {
 public:
  Backend(serving::tasks::Tasks& tasks, GrpcOptions options, serving::MetricsRegistry* metrics)
      : tasks_(tasks), options_(std::move(options)), metrics_(metrics) {}

  [[nodiscard]] serving::Pipeline& pipeline() noexcept { return tasks_.pipeline(); }
  // What the services ask of the models: the runtime's, shared with HTTP (serving/tasks/tasks.hpp).
  [[nodiscard]] serving::tasks::Tasks& tasks() noexcept { return tasks_; }
  [[nodiscard]] const GrpcOptions& options() const noexcept { return options_; }

  // UNAUTHENTICATED unless no key is set or the call sends `authorization: Bearer <key>`.
  [[nodiscard]] ::grpc::Status authorize(const ::grpc::CallbackServerContext& context) const;
  // The model a call runs on: the one its `x-warden-model` metadata names, else the first
  // served model of one of `kinds` (TEI serves one model), else the first model.
  [[nodiscard]] std::string model_for(const ::grpc::CallbackServerContext& context,
                                      std::initializer_list<ModelKind> kinds) const;
  // warden_grpc_requests_total{method,code} and warden_grpc_request_duration_seconds{method}.
  void record(std::string_view method, const ::grpc::Status& status, Clock::duration total) const;

 private:
  serving::tasks::Tasks& tasks_;
  GrpcOptions options_;
  serving::MetricsRegistry* metrics_;
};

// The task context of a call or stream message: the model it pinned, `method` for errors.
[[nodiscard]] serving::tasks::Context task_context(const Work& work, std::string_view method);

// The request's truncation side.
[[nodiscard]] embed::TruncationSide side_of(tei::v1::TruncationDirection direction) noexcept;
// TEI's per-answer metadata: characters, tokens and where the time went.
void fill_metadata(tei::v1::Metadata& m, const serving::Inference& inference, std::size_t characters,
                   Clock::time_point received);
// ... also sent as TEI's x-compute-* initial metadata of a unary call.
void add_timing_headers(::grpc::CallbackServerContext& context, const tei::v1::Metadata& m);

// A task's end as one answer: its error's status, or `fill`'s answer with TEI's metadata
// (`characters`: the request's code points).
template <class R, class Res>
serving::tasks::Then<R> replying(const Work& work, std::size_t characters, Reply<Res> reply,
                                 std::function<void(R&, Res&)> fill) {
  return [received = work.received, characters, reply = std::move(reply),
          fill = std::move(fill)](serving::tasks::Finished<R>& f) {
    Res out;
    if (!f.error) {
      try {
        fill(*f.value, out);
        fill_metadata(*out.mutable_metadata(), *f.run, characters, received);
        return reply(::grpc::Status::OK, out);
      } catch (...) {
        f.error = std::current_exception();
      }
    }
    Res none;
    reply(to_status(f.error), none);
  };
}

// A method: answers one request, once, through `reply` (on any thread). What it throws
// before replying is mapped by to_status.
template <class Req, class Res>
using Method = std::function<void(Backend&, const Work&, std::shared_ptr<const Req>, Reply<Res>)>;

// How a call that answers once ends, shared with the answer on its way, which may outlive
// the reactor: a call ends as soon as its client cancels (a client that opens and resets
// calls must not keep a reactor per call alive until the pipeline gets to it), and an answer
// that comes after that is dropped.
template <class Call>
class CallEnd {
 public:
  explicit CallEnd(Call* call) : call_(call) {}
  // Ends the call with `status` unless it ended already; when the status is ok, `fill(call)`
  // first writes the answer (what it throws ends the call with that error instead).
  template <class Fill>
  void finish(::grpc::Status status, Fill&& fill) {
    std::unique_lock lock(mutex_);
    Call* call = std::exchange(call_, nullptr);
    if (call == nullptr) return;
    if (status.ok()) {
      try {
        fill(*call);
      } catch (...) {
        status = to_status(std::current_exception());
      }
    }
    lock.unlock();
    call->finished(status);
  }
  void finish(const ::grpc::Status& status) {
    finish(status, [](Call&) {});
  }

 private:
  std::mutex mutex_;
  Call* call_;  // null once ended
};

// A unary call. It deletes itself when gRPC is done with it.
class UnaryCall final : public ::grpc::ServerUnaryReactor {
 public:
  UnaryCall(Backend& backend, ::grpc::CallbackServerContext* context, std::string_view method)
      : backend_(backend), context_(context), method_(method) {}
  void OnCancel() override {
    work.cancelled->cancel();
    end_->finish({::grpc::StatusCode::CANCELLED, "the client cancelled the call"});
  }
  void OnDone() override { delete this; }
  [[nodiscard]] const std::shared_ptr<CallEnd<UnaryCall>>& end() const noexcept { return end_; }
  [[nodiscard]] ::grpc::CallbackServerContext& context() noexcept { return *context_; }
  Work work;

 private:
  friend class CallEnd<UnaryCall>;
  void finished(const ::grpc::Status& status) {
    backend_.record(method_, status, Clock::now() - work.received);
    Finish(status);
  }
  Backend& backend_;
  ::grpc::CallbackServerContext* context_;
  std::string method_;
  std::shared_ptr<CallEnd<UnaryCall>> end_ = std::make_shared<CallEnd<UnaryCall>>(this);
};

template <class Req, class Res>
::grpc::ServerUnaryReactor* serve_unary(Backend& backend, ::grpc::CallbackServerContext* context,
                                        const Bytes* request, Bytes* response, std::string_view method,
                                        std::initializer_list<ModelKind> kinds, const Method<Req, Res>& run) {
  auto* call = new UnaryCall(backend, context, method);
  const auto& end = call->end();
  const ::grpc::Status auth = backend.authorize(*context);
  if (!auth.ok()) {
    end->finish(auth);
    return call;
  }
  auto parsed = std::make_shared<Req>();
  if (!parse_request(*request, *parsed)) {
    end->finish(unparsable(*parsed));
    return call;
  }
  call->work.model = backend.model_for(*context, kinds);
  try {
    run(backend, call->work, std::move(parsed), [end, response](const ::grpc::Status& status, Res& out) {
      end->finish(status, [&](UnaryCall& c) {
        if constexpr (requires { out.metadata(); }) add_timing_headers(c.context(), out.metadata());
        *response = serialize_answer(out);
      });
    });
  } catch (...) {
    end->finish(to_status(std::current_exception()));
  }
  return call;
}

// A stream of requests, each answered in order by one response: up to max_stream_in_flight
// messages are held at once — read and not yet written back, whether they are still being
// computed or their answers wait for the client to read (their inputs batch with everyone's)
// — so a client that stops reading stops being read from (back-pressure, as HTTP's), and
// the first error ends the stream with its status once the messages in flight are back. A
// cancel ends it at once, the answers still on their way dropped when they come. It deletes
// itself when gRPC is done with it.
template <class Req, class Res>
class StreamCall final : public BidiReactor {
 public:
  StreamCall(Backend& backend, ::grpc::CallbackServerContext* context, std::string_view method,
             std::initializer_list<ModelKind> kinds, Method<Req, Res> run)
      : backend_(backend), method_(method), run_(std::move(run)) {
    const ::grpc::Status auth = backend.authorize(*context);
    if (!auth.ok()) {
      backend_.record(method_, auth, {});
      this->Finish(auth);
      return;
    }
    work_.model = backend.model_for(*context, kinds);
    reading_ = true;
    this->StartRead(&incoming_);
  }

  void OnReadDone(bool ok) override {
    std::unique_lock lock(shared_->mutex);
    reading_ = false;
    if (finished_) return;
    if (!ok || error_) {
      reads_done_ = true;
      return pump(lock);
    }
    auto request = std::make_shared<Req>();
    if (!parse_request(incoming_, *request)) {
      // The answers before it are still written; the stream then ends with the error.
      reads_done_ = true;
      done_[next_read_++] = {unparsable(*request), Res()};
      return pump(lock);
    }
    const std::size_t index = next_read_++;
    ++in_flight_;
    if (may_read()) {
      reading_ = true;
      this->StartRead(&incoming_);
    }
    lock.unlock();
    Work w = work_;
    w.received = Clock::now();
    auto reply = [shared = shared_, index](const ::grpc::Status& status, Res& out) {
      std::unique_lock l(shared->mutex);
      StreamCall* call = shared->call;
      if (call == nullptr) return;  // cancelled and finished without it
      --call->in_flight_;
      call->done_[index] = {status, std::move(out)};
      call->pump(l);
    };
    try {
      run_(backend_, w, std::move(request), reply);
    } catch (...) {
      Res none;
      reply(to_status(std::current_exception()), none);
    }
  }

  void OnWriteDone(bool ok) override {
    std::unique_lock lock(shared_->mutex);
    writing_ = false;
    if (!ok && !error_) error_ = ::grpc::Status(::grpc::StatusCode::CANCELLED, "the client stopped reading");
    pump(lock);
  }

  void OnCancel() override {
    work_.cancelled->cancel();
    std::unique_lock lock(shared_->mutex);
    cancelled_ = true;
    if (!error_) error_ = ::grpc::Status(::grpc::StatusCode::CANCELLED, "the client cancelled the stream");
    pump(lock);
  }
  void OnDone() override { delete this; }

 private:
  // The stream as the answers on their way see it: `call` is null once it finished.
  struct Shared {
    explicit Shared(StreamCall* c) : call(c) {}
    std::mutex mutex;  // guards the reactor's state below as well
    StreamCall* call;
  };

  // Under the lock: whether another message may be read — fewer than max_stream_in_flight
  // are held, counting those computing, those answered and waiting for their turn, and the
  // one being written (a client that never reads keeps that write pending forever).
  [[nodiscard]] bool may_read() const noexcept {
    const std::size_t held = next_read_ - next_write_ + (writing_ ? 1 : 0);
    return held < backend_.options().max_stream_in_flight;
  }

  // Under the lock: writes the next answer in order, resumes reading, or finishes.
  void pump(std::unique_lock<std::mutex>& lock) {
    if (finished_) return;
    if (!writing_ && !error_) {
      const auto next = done_.find(next_write_);
      if (next != done_.end()) {
        if (!next->second.first.ok()) {
          error_ = next->second.first;
        } else {
          try {
            current_ = serialize_answer(next->second.second);
            done_.erase(next);
            ++next_write_;
            writing_ = true;
            this->StartWrite(&current_);
          } catch (...) {
            error_ = to_status(std::current_exception());
          }
        }
      }
    }
    if (!reading_ && !reads_done_ && !error_ && may_read()) {
      reading_ = true;
      this->StartRead(&incoming_);
    }
    // Done, once no write is pending, when the client cancelled, or when nothing is in flight
    // and either an error ended it or every answer is written (a read may still be pending:
    // it completes, not ok, once the stream is finished).
    const bool all_written = reads_done_ && next_write_ == next_read_;
    if (!writing_ && (cancelled_ || (in_flight_ == 0 && (error_ || all_written)))) {
      finished_ = true;
      shared_->call = nullptr;
      const ::grpc::Status status = error_.value_or(::grpc::Status::OK);
      lock.unlock();
      backend_.record(method_, status, Clock::now() - work_.received);
      this->Finish(status);
    }
  }

  Backend& backend_;
  std::string method_;
  Method<Req, Res> run_;
  Work work_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>(this);
  Bytes incoming_;
  Bytes current_;
  std::map<std::size_t, std::pair<::grpc::Status, Res>> done_;  // answered, not yet written
  std::size_t next_read_ = 0;
  std::size_t next_write_ = 0;
  std::size_t in_flight_ = 0;
  bool reading_ = false;
  bool reads_done_ = false;
  bool writing_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
  std::optional<::grpc::Status> error_;
};

}  // namespace warden::grpc
