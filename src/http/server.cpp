#include "http/server.hpp"

// GCC 12 reports "potential null pointer dereference" inside Asio's scheduler once it is
// inlined into this file (a middle-end warning, so the system-header exemption does not
// apply). It is in Boost's code, not ours; this file alone turns it off.
#pragma GCC diagnostic ignored "-Wnull-dereference"

// Before Asio: Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "http/handler.hpp"
#include "http/request_parser.hpp"

namespace warden::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// After an error answer to a request that was not read to its end (400, 413, 431), the
// server shuts its sending side and reads what the client still sends for at most this
// long before closing. Closing with unread bytes would make the kernel send a reset, and a
// reset can destroy the answer before the client has read it (the "lingering close").
constexpr std::chrono::seconds kLingerTimeout{2};
// The most one read asks of the socket.
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// accept() failing (EMFILE, ENFILE, ENOBUFS) is retried after this.
constexpr std::chrono::milliseconds kAcceptRetry{50};
// File descriptors kept for everything that is not a connection (model files, logs, the
// event loop's own descriptors) when the connection limit is derived from the fd limit.
constexpr std::size_t kFdReserve = 128;
// Where the fd limit is unlimited, connections are still bounded by this.
constexpr std::size_t kUnlimitedFds = std::size_t{1} << 20;

// Raises RLIMIT_NOFILE's soft limit to the hard one (when `raise`); returns the soft limit
// then in effect.
std::size_t fd_limit(bool raise) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (raise && limit.rlim_cur != limit.rlim_max) {
    rlimit wanted = limit;
    // Linux refuses RLIM_INFINITY as a soft limit (it is above fs.nr_open).
    wanted.rlim_cur = limit.rlim_max == RLIM_INFINITY ? rlim_t{kUnlimitedFds} : limit.rlim_max;
    if (wanted.rlim_cur > limit.rlim_cur && ::setrlimit(RLIMIT_NOFILE, &wanted) == 0) limit = wanted;
  }
  if (limit.rlim_cur == RLIM_INFINITY) return kUnlimitedFds;
  return static_cast<std::size_t>(limit.rlim_cur);
}

std::string new_request_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

std::string_view sv(beast::string_view s) noexcept {
  return {s.data(), s.size()};
}

// Parser errors that mean the client sent something that is not HTTP/1.1 (answered 400),
// as opposed to the stream ending or a limit being crossed.
bool is_malformed(const beast::error_code& ec) {
  if (ec.category() != bhttp::make_error_code(bhttp::error::bad_method).category()) return false;
  switch (static_cast<bhttp::error>(ec.value())) {
    case bhttp::error::bad_line_ending:
    case bhttp::error::bad_method:
    case bhttp::error::bad_target:
    case bhttp::error::bad_version:
    case bhttp::error::bad_field:
    case bhttp::error::bad_value:
    case bhttp::error::bad_content_length:
    case bhttp::error::bad_transfer_encoding:
    case bhttp::error::bad_chunk:
    case bhttp::error::bad_chunk_extension:
    case bhttp::error::bad_obs_fold:
      return true;
    default:
      return false;
  }
}

// The target of a request line ("GET /v1/embeddings HTTP/1.1") from the raw bytes, for the
// errors the parser reports before it has a target (431, a bad version): it chooses which
// API's error body is sent. "/" when there is no plausible target.
std::string_view raw_target(std::string_view raw) {
  raw = raw.substr(0, raw.find_first_of("\r\n"));
  const std::size_t space = raw.find(' ');
  if (space == std::string_view::npos) return "/";
  raw.remove_prefix(space + 1);
  raw = raw.substr(0, raw.find(' '));
  if (raw.empty() || raw.front() != '/' || raw.size() > 4096) return "/";
  return raw;
}

// RFC 9112 §3.2.2: a server must accept a request target in absolute form
// ("http://host/path"); routes only look at the path, so the scheme and authority go.
std::string_view origin_form(std::string_view target) noexcept {
  std::size_t skip = 0;
  for (const std::string_view scheme : {std::string_view("http://"), std::string_view("https://")}) {
    if (target.size() >= scheme.size() &&
        std::equal(scheme.begin(), scheme.end(), target.begin(), [](char a, char b) {
          return a == (b >= 'A' && b <= 'Z' ? static_cast<char>(b - 'A' + 'a') : b);
        })) {
      skip = scheme.size();
    }
  }
  if (skip == 0) return target;
  const std::size_t slash = target.find('/', skip);
  return slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
}

// A chunk line (size, extensions) must end in CRLF; Beast waits for one forever when a
// client ends it with a bare LF. `pending` starts where the next chunk line is expected
// (after the CRLF that ends the previous chunk's data, which may still be there).
bool bare_lf_in_chunk_line(std::string_view pending) noexcept {
  if (pending.starts_with("\r\n")) pending.remove_prefix(2);
  const std::size_t lf = pending.find('\n');
  return lf != std::string_view::npos && (lf == 0 || pending[lf - 1] != '\r');
}

template <typename Header>
std::string request_id_of(const Header& header) {
  const auto it = header.find("X-Request-ID");
  // Echo the client's id (bounded, so a header cannot make every log line huge).
  if (it != header.end() && !it->value().empty() && it->value().size() <= 200)
    return std::string(it->value());
  return new_request_id();
}

// One request handed to the Handler. It is shared with the respond callback, so the
// request's bytes (which `Request` views) stay valid for as long as the handler may read
// them, even after the connection itself has gone.
struct Exchange {
  RequestParser::Message message;
  std::string request_id;
  std::shared_ptr<Cancellation> cancellation = std::make_shared<Cancellation>();
  std::atomic<bool> responded{false};  // respond is honoured once
};

// Lets a respond callback that runs after the server is gone do nothing instead of posting
// to a destroyed io_context: the Server closes it before destroying the I/O objects.
struct Gate {
  std::mutex mutex;
  bool open = true;
};

}  // namespace

class Session;

struct Server::Impl {
  Impl(const ServerOptions& opts, Handler& h)
      : options(opts),
        handler(h),
        strand(asio::make_strand(ioc)),
        acceptor(strand),
        retry(strand),
        drain_timer(strand) {}

  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  ServerOptions options;
  Handler& handler;
  std::size_t max_connections = 0;
  std::uint16_t port = 0;  // the bound port, kept: the acceptor is closed on stop()
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> open{0};
  // On the strand: one line on stderr per run of accept errors, or of connections refused
  // at the limit, rather than one per connection.
  bool accept_error_logged = false;
  bool limit_logged = false;

  asio::io_context ioc;
  // The acceptor, its timers and the signals live on one strand, so that stop() on one
  // I/O thread and accept() on another never touch them at once.
  asio::strand<asio::io_context::executor_type> strand;
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  asio::steady_timer drain_timer;  // polls for the last connection to end after stop()
  std::optional<asio::signal_set> signals;

  // Every open connection, owned here: a connection whose request is with the handler has
  // no I/O pending, and this is what keeps it alive. Declared after ioc, so destroyed
  // before it (a socket must not outlive its io_context).
  std::mutex sessions_mutex;
  std::list<std::shared_ptr<Session>> sessions;

  void accept();
  void on_accept(beast::error_code ec, tcp::socket socket);
  void stop_on_strand();
  void wait_for_drain(std::chrono::steady_clock::time_point deadline);
  void close_all();
};

// One connection: wait for a request, read it, hand it to the handler, write the answer,
// repeat while keep-alive holds. Every member function runs on the connection's strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  using Registration = std::list<std::shared_ptr<Session>>::iterator;

  Session(tcp::socket socket, Server::Impl& server)
      : stream_(std::move(socket)),
        server_(server),
        // What a read may leave unparsed: a whole head, or one chunk line or trailer section,
        // plus one read's worth. The parser counts the bytes exactly; this bounds the memory.
        buffer_(std::max<std::size_t>(server.options.header_limit, 8 * 1024) + kReadChunk),
        accepted_(std::chrono::steady_clock::now()) {}

  void start(Registration registration) {
    registration_ = registration;
    asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::wait, shared_from_this()));
  }

  // Called on any thread when shutdown begins: a connection waiting for its next request is
  // closed; one receiving a request reads it and answers 503; one whose request is with the
  // handler closes after that answer (written with Connection: close).
  void close_if_idle() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->phase_ == Phase::Idle) self->close();
    });
  }

  // Only once the I/O threads have ended (the shutdown grace ran out): nothing else runs.
  void abandon() { close(); }

 private:
  enum class Phase { Idle, Reading, Handling, Writing, Lingering, Closed };

  // Idle: no byte of the next request yet. A new connection must send its first request's
  // head within the header timeout (a connect() that never sends must not hold a slot for
  // the keep-alive timeout); between requests the idle timeout applies. A request already
  // in the buffer (pipelined) skips this.
  void wait() {
    if (server_.stopping) return close();
    phase_ = Phase::Idle;
    if (buffer_.size() > 0) return read_request();
    if (sequence_ == 0) {
      stream_.expires_at(accepted_ + server_.options.header_timeout);
    } else {
      stream_.expires_after(server_.options.idle_timeout);
    }
    stream_.async_read_some(buffer_.prepare(beast::read_size(buffer_, 4096)),
                            beast::bind_front_handler(&Session::on_first_bytes, shared_from_this()));
  }

  void on_first_bytes(beast::error_code ec, std::size_t bytes) {
    buffer_.commit(bytes);
    if (ec) return close();  // the client left, the idle timeout, or shutdown
    read_request();
  }

  // Reading: the head must be whole within the header timeout (from the connection's start
  // for its first request, else from the request's first byte), and the whole request within
  // request_timeout of its first byte. The parser is fed by hand rather than by
  // http::async_read, so that 100 Continue can be sent between head and body and a bare-LF
  // chunk line is refused at once.
  void read_request() {
    phase_ = Phase::Reading;
    const auto now = std::chrono::steady_clock::now();
    head_deadline_ = (sequence_ == 0 ? accepted_ : now) + server_.options.header_timeout;
    request_deadline_ = now + server_.options.request_timeout;
    parser_.emplace(server_.options.header_limit, server_.options.payload_limit);
    continue_sent_ = false;
    parse_buffered();
  }

  void parse_buffered() {
    beast::error_code ec = bhttp::error::need_more;
    if (buffer_.size() > 0) {
      const std::size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (!ec && !parser_->is_done()) ec = bhttp::error::need_more;  // it took every byte there was
    }
    if (ec == bhttp::error::need_more) return need_more();
    if (ec) return on_parse_error(ec);
    on_request_read();
  }

  void need_more() {
    if (parser_->awaiting_chunk_line() && bare_lf_in_chunk_line(buffered())) {
      return answer_error(error_target(), request_id_of(parser_->get()), 400,
                          "malformed HTTP request: a chunk line must end in CRLF, not a bare LF");
    }
    if (parser_->is_header_done() && parser_->expects_continue() && !continue_sent_) {
      // The client waits for this before it sends the body (RFC 9110 §10.1.1).
      continue_sent_ = true;
      stream_.expires_at(request_deadline_);
      asio::async_write(stream_, asio::buffer(kContinue),
                        [self = shared_from_this()](beast::error_code ec, std::size_t) {
                          if (ec) return self->close();
                          self->need_more();
                        });
      return;
    }
    if (buffer_.size() >= buffer_.max_size()) {
      // Only a head, a chunk line or a trailer section over the limits leaves this much unparsed.
      if (!parser_->is_header_done()) {
        return answer_error(error_target(), new_request_id(), 431,
                            fmt::format("request headers are larger than the limit of {} bytes",
                                        server_.options.header_limit));
      }
      return answer_error(error_target(), request_id_of(parser_->get()), 400,
                          "malformed HTTP request: a chunk line or the trailer fields are too long");
    }
    stream_.expires_at(parser_->is_header_done() ? request_deadline_
                                                 : std::min(head_deadline_, request_deadline_));
    const std::size_t room = std::min(kReadChunk, buffer_.max_size() - buffer_.size());
    stream_.async_read_some(buffer_.prepare(room),
                            [self = shared_from_this()](beast::error_code ec, std::size_t bytes) {
                              self->buffer_.commit(bytes);
                              // The client left mid-request, a timeout passed, or the socket failed: nobody
                              // to answer.
                              if (ec) return self->close();
                              self->parse_buffered();
                            });
  }

  void on_parse_error(const beast::error_code& ec) {
    if (const auto& refusal = parser_->refusal()) {
      const auto& header = parser_->get();
      const std::string request_id = parser_->is_header_done() ? request_id_of(header) : new_request_id();
      return answer_error(error_target(), request_id, refusal->status, refusal->message);
    }
    if (ec == bhttp::error::body_limit) {
      // The headers were read, so the target says which API's error body to send. The rest
      // of the body is unread: answer and close.
      return answer_error(
          error_target(), request_id_of(parser_->get()), 413,
          fmt::format("request body is larger than the limit of {} bytes", server_.options.payload_limit));
    }
    if (ec == bhttp::error::header_limit) {
      return answer_error(
          error_target(), new_request_id(), 431,
          fmt::format("request headers are larger than the limit of {} bytes", server_.options.header_limit));
    }
    if (is_malformed(ec)) {
      return answer_error(error_target(), new_request_id(), 400,
                          fmt::format("malformed HTTP request: {}", ec.message()));
    }
    close();
  }

  void on_request_read() {
    auto exchange = std::make_shared<Exchange>();
    exchange->message = parser_->release();
    parser_.reset();
    auto& m = exchange->message;
    const std::string_view target = sv(m.target());
    if (const std::string_view path = origin_form(target); path.size() != target.size()) {
      m.target(std::string(path));
    }
    exchange->request_id = request_id_of(m);
    version_ = m.version();
    keep_alive_ = m.keep_alive();
    head_ = m.method() == bhttp::verb::head;
    if (server_.stopping) {
      keep_alive_ = false;
      return send(server_.handler.error(sv(m.target()), 503, "Unhealthy", "server is shutting down"),
                  exchange->request_id);
    }
    handle(std::move(exchange));
  }

  // Handling: the handler has the request; the socket is watched for the client leaving.
  void handle(std::shared_ptr<Exchange> exchange) {
    phase_ = Phase::Handling;
    exchange_ = exchange;
    ++sequence_;
    const auto& m = exchange->message;
    const Request request{sv(m.method_string()),
                          sv(m.target()),
                          sv(m[bhttp::field::content_type]),
                          sv(m[bhttp::field::authorization]),
                          m.body(),
                          exchange->request_id,
                          std::chrono::steady_clock::now(),
                          sv(m[bhttp::field::cache_control]),
                          sv(m["traceparent"])};
    // The handler answers from whichever thread finishes the work; the answer is written on
    // this connection's strand. The callback holds the request, not the connection: a
    // connection the client has closed is not kept open for an answer nobody will read.
    Respond respond = [gate = server_.gate, weak = weak_from_this(), exchange](Response response) {
      if (exchange->responded.exchange(true)) return;
      const std::lock_guard lock(gate->mutex);
      if (!gate->open) return;
      const auto self = weak.lock();
      if (!self) return;
      asio::post(self->stream_.get_executor(), [self, exchange, response = std::move(response)]() mutable {
        self->on_response(exchange, std::move(response));
      });
    };
    try {
      server_.handler.handle(request, exchange->cancellation, respond);
    } catch (const std::exception& e) {
      // A handler should answer its own failures; if one escapes, this request gets a 500
      // rather than the exception ending the I/O thread (and the server with it).
      std::fprintf(stderr, "warden: request %s: handler failed: %s\n", exchange->request_id.c_str(),
                   e.what());
      respond(server_.handler.error(request.target, 500, "Backend", "internal error"));
    }
    if (!exchange->responded) watch(sequence_);
  }

  // Waits until the socket is readable while the handler works: either the client closed
  // (answered by end-of-stream or a reset) or it sent its next request early (pipelining).
  void watch(std::uint64_t sequence) {
    watching_ = true;
    stream_.socket().async_wait(
        tcp::socket::wait_read,
        [self = shared_from_this(), sequence](beast::error_code ec) { self->on_watch(sequence, ec); });
  }

  void on_watch(std::uint64_t sequence, beast::error_code ec) {
    if (sequence != sequence_) return;  // a watch of an earlier request, cancelled late
    watching_ = false;
    if (ec == asio::error::operation_aborted || phase_ != Phase::Handling) return;
    if (!ec) {
      char byte = 0;
      const ssize_t n = ::recv(stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      // Bytes of a pipelined request: stop watching, they are read after the answer.
      if (n > 0) return;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return watch(sequence);
    }
    // End of stream, a reset or a failed socket: the client has gone. A client that only
    // half-closes (shuts its sending side and still reads) is taken as gone too; HTTP
    // clients do not do that.
    exchange_->cancellation->cancel();
    close();
  }

  void on_response(const std::shared_ptr<Exchange>& exchange, Response response) {
    if (exchange != exchange_ || phase_ != Phase::Handling) return;  // closed meanwhile
    if (watching_) {
      beast::error_code ignored;
      stream_.socket().cancel(ignored);  // the watch: nothing else is pending now
      watching_ = false;
    }
    send(std::move(response), exchange->request_id);
  }

  // 400, 413, 431: the request was refused before a handler saw it, and the rest of it
  // cannot be trusted to be framed correctly, so the connection closes after the answer.
  void answer_error(std::string_view target, const std::string& request_id, int status,
                    const std::string& message) {
    version_ = 11;
    head_ = false;
    keep_alive_ = false;
    unread_input_ = true;
    send(server_.handler.error(target, status, "Validation", message), request_id);
  }

  // Writing: the whole answer within write_timeout.
  void send(Response response, const std::string& request_id) {
    phase_ = Phase::Writing;
    response_.emplace(static_cast<bhttp::status>(response.status), version_ == 10 ? 10 : 11);
    response_->set(bhttp::field::server, "warden");
    response_->set(bhttp::field::content_type, response.content_type);
    response_->set("X-Request-ID", request_id);
    for (const auto& [name, value] : response.headers) response_->set(name, value);
    response_->keep_alive(keep_alive_ && !server_.stopping);
    response_->body() = std::move(response.body);
    response_->prepare_payload();
    // HEAD: the GET answer's headers, Content-Length included, and no body.
    if (head_) response_->body().clear();
    stream_.expires_after(server_.options.write_timeout);
    bhttp::async_write(stream_, *response_,
                       beast::bind_front_handler(&Session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t /*bytes*/) {
    const bool keep_alive = response_->keep_alive();
    response_.reset();
    exchange_.reset();
    if (ec) return close();
    if (!keep_alive) return unread_input_ ? linger() : close();
    wait();
  }

  // Lingering: the answer is out; shut the sending side and discard what the client still
  // sends until it closes too, or kLingerTimeout passes.
  void linger() {
    phase_ = Phase::Lingering;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTimeout);
    drain();
  }

  void drain() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->drain();
                            });
  }

  // The target for an error the parser found: it chooses which API's error body is sent.
  // Beast parses the request line as soon as it is complete, so an oversized or bad header
  // or body comes with the target stored; a bad request line leaves only the raw bytes.
  std::string_view error_target() const {
    const auto target = parser_->get().target();
    return target.empty() ? raw_target(buffered()) : sv(target);
  }

  std::string_view buffered() const {
    const auto data = buffer_.data();
    return {static_cast<const char*>(data.data()), data.size()};
  }

  void close() {
    if (phase_ == Phase::Closed) return;
    if (phase_ == Phase::Handling && exchange_) exchange_->cancellation->cancel();
    phase_ = Phase::Closed;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    server_.open.fetch_sub(1, std::memory_order_relaxed);
    const auto self = shared_from_this();  // the registry may hold the last reference
    const std::lock_guard lock(server_.sessions_mutex);
    server_.sessions.erase(registration_);
  }

  beast::tcp_stream stream_;
  Server::Impl& server_;
  Registration registration_;
  beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  std::chrono::steady_clock::time_point accepted_;
  std::chrono::steady_clock::time_point head_deadline_;
  std::chrono::steady_clock::time_point request_deadline_;
  bool continue_sent_ = false;
  bool head_ = false;                   // the request being answered is a HEAD
  std::shared_ptr<Exchange> exchange_;  // the request with the handler, or being answered
  std::optional<bhttp::response<bhttp::string_body>> response_;
  Phase phase_ = Phase::Idle;
  std::uint64_t sequence_ = 0;  // requests handed to the handler on this connection
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool watching_ = false;
  bool unread_input_ = false;  // the client may still be sending a refused request
};

void Server::Impl::accept() {
  acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    on_accept(ec, std::move(socket));
  });
}

void Server::Impl::on_accept(beast::error_code ec, tcp::socket socket) {
  if (stopping || ec == asio::error::operation_aborted) return;  // the acceptor was closed
  if (ec) {
    // Out of file descriptors (EMFILE), kernel memory (ENOBUFS), a connection reset while
    // queued (ECONNABORTED): none is permanent, so accepting carries on after a pause
    // instead of ending for good. One line per run of failures, not one per retry.
    if (!accept_error_logged) {
      std::fprintf(stderr, "warden: accepting a connection failed (%s); retrying every %lld ms\n",
                   ec.message().c_str(), static_cast<long long>(kAcceptRetry.count()));
      accept_error_logged = true;
    }
    retry.expires_after(kAcceptRetry);
    retry.async_wait([this](beast::error_code timer_ec) {
      if (!timer_ec && !stopping) accept();
    });
    return;
  }
  accept_error_logged = false;
  if (open.load(std::memory_order_relaxed) >= max_connections) {
    // Over the limit: close at once (the client sees the connection end) rather than let
    // connections use up the descriptors that model files and accept() itself need.
    if (!limit_logged) {
      std::fprintf(stderr, "warden: %zu connections open, the limit: closing new ones until some end\n",
                   max_connections);
      limit_logged = true;
    }
    beast::error_code ignored;
    socket.close(ignored);
    accept();
    return;
  }
  limit_logged = false;
  auto session = std::make_shared<Session>(std::move(socket), *this);
  Session::Registration registration;
  {
    const std::lock_guard lock(sessions_mutex);
    registration = sessions.insert(sessions.end(), session);
  }
  open.fetch_add(1, std::memory_order_relaxed);
  session->start(registration);
  accept();
}

void Server::Impl::stop_on_strand() {
  if (stopping.exchange(true)) return;
  beast::error_code ignored;
  acceptor.close(ignored);
  retry.cancel();
  if (signals) signals->cancel(ignored);
  std::vector<std::shared_ptr<Session>> open_sessions;
  {
    const std::lock_guard lock(sessions_mutex);
    open_sessions.assign(sessions.begin(), sessions.end());
  }
  // Outside the lock: close_if_idle only posts, but the last reference to a session may be
  // dropped here, and a session's close() takes the lock.
  for (const auto& session : open_sessions) session->close_if_idle();
  open_sessions.clear();
  // In-flight requests finish on their own; wait for the last connection to end, but no
  // longer than the grace period.
  wait_for_drain(std::chrono::steady_clock::now() + options.shutdown_grace);
}

void Server::Impl::wait_for_drain(std::chrono::steady_clock::time_point deadline) {
  bool drained = false;
  {
    const std::lock_guard lock(sessions_mutex);
    drained = sessions.empty();
  }
  if (drained || std::chrono::steady_clock::now() >= deadline) {
    ioc.stop();
    return;
  }
  drain_timer.expires_after(std::chrono::milliseconds(20));
  drain_timer.async_wait([this, deadline](beast::error_code ec) {
    if (!ec) wait_for_drain(deadline);
  });
}

void Server::Impl::close_all() {
  std::vector<std::shared_ptr<Session>> left;
  {
    const std::lock_guard lock(sessions_mutex);
    left.assign(sessions.begin(), sessions.end());
  }
  // Their requests' Cancellations are set, so queued work for them is dropped.
  for (const auto& session : left) session->abandon();
}

Server::Server(const ServerOptions& options, Handler& handler)
    : impl_(std::make_unique<Impl>(options, handler)) {
  const std::size_t fds = fd_limit(options.raise_fd_limit);
  impl_->max_connections = options.max_connections != 0 ? options.max_connections
                           : fds > 2 * kFdReserve       ? fds - kFdReserve
                                                        : fds / 2;
  beast::error_code ec;
  const auto address = asio::ip::make_address(options.hostname, ec);
  if (ec)
    throw Error(ErrorKind::InvalidArgument, "--hostname must be an IP address, got " + options.hostname);
  const tcp::endpoint endpoint{address, options.port};
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) impl_->port = acceptor.local_endpoint(ec).port();
  if (ec) {
    throw Error(ErrorKind::Io,
                fmt::format("cannot listen on {}:{}: {}", options.hostname, options.port, ec.message()));
  }
}

Server::~Server() {
  stop();
  // A handler may still answer a request later (its compute outlived the grace): from now
  // on that answer is dropped instead of being posted to an io_context about to be destroyed.
  const std::lock_guard lock(impl_->gate->mutex);
  impl_->gate->open = false;
}

std::uint16_t Server::port() const noexcept {
  return impl_->port;
}

std::size_t Server::open_connections() const noexcept {
  return impl_->open.load(std::memory_order_relaxed);
}

std::size_t Server::max_connections() const noexcept {
  return impl_->max_connections;
}

void Server::run() {
  Impl& impl = *impl_;
  asio::dispatch(impl.strand, [&impl] {
    if (impl.stopping) return;
    if (impl.options.handle_signals) {
      // SIGHUP (the terminal or the supervisor's session went away) drains like SIGTERM:
      // there is no configuration to reload, and dropping requests in flight is never right.
      impl.signals.emplace(impl.strand, SIGINT, SIGTERM);
      impl.signals->add(SIGHUP);
      impl.signals->async_wait([&impl](beast::error_code ec, int /*signal*/) {
        if (!ec) impl.stop_on_strand();
      });
    }
    impl.accept();
  });
  std::vector<std::thread> extra;
  for (std::size_t i = 1; i < impl.options.io_threads; ++i) extra.emplace_back([&impl] { impl.ioc.run(); });
  impl.ioc.run();
  for (auto& t : extra) t.join();
  // The grace ran out with connections still open: close them now that no thread runs.
  impl.close_all();
}

void Server::stop() {
  asio::post(impl_->strand, [impl = impl_.get()] { impl->stop_on_strand(); });
}

}  // namespace warden::http
