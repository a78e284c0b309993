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

#include <atomic>
#include <chrono>
#include <list>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "http/handler.hpp"

namespace warden::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// A client gets this long to send a whole request, and to read a response: a slow-loris
// client is cut off instead of holding a connection for ever.
constexpr std::chrono::seconds kIoTimeout{30};
// Requests headers past this size are refused (431 in spirit; Beast closes the stream).
constexpr std::uint32_t kHeaderLimit = 16 * 1024;
// After stop(), in-flight requests get this long before the I/O loop is stopped anyway.
constexpr std::chrono::seconds kShutdownGrace{10};

std::string new_request_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

std::string_view sv(beast::string_view s) noexcept {
  return {s.data(), s.size()};
}

}  // namespace

class Session;

struct Server::Impl {
  Impl(const ServerOptions& opts, Handler& h) : options(opts), handler(h), acceptor(ioc) {}

  ServerOptions options;
  Handler& handler;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};
  std::mutex sessions_mutex;
  std::list<std::weak_ptr<Session>> sessions;
  std::optional<asio::signal_set> signals;
  std::optional<asio::steady_timer> grace;

  void accept();
  void stop_on_io_thread();
  void wait_for_drain(std::chrono::steady_clock::time_point deadline);
};

// One connection: read a request, answer it, repeat while keep-alive holds.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Server::Impl& server) : stream_(std::move(socket)), server_(server) {}

  void start() {
    asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::read, shared_from_this()));
  }

  // Called on any thread at shutdown: an idle connection is closed, a busy one closes
  // after its answer is written.
  void close_if_idle() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      if (!self->busy_) self->close();
    });
  }

 private:
  void read() {
    if (server_.stopping) return close();
    parser_.emplace();
    parser_->body_limit(server_.options.payload_limit);
    parser_->header_limit(kHeaderLimit);
    stream_.expires_after(kIoTimeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      beast::bind_front_handler(&Session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t /*bytes*/) {
    if (ec == bhttp::error::body_limit) {
      // The headers were read, so the target says which API's error body to send. The
      // rest of the body is unread: answer and close.
      const auto& header = parser_->get();
      busy_ = true;
      keep_alive_ = false;
      request_id_ = request_id_of(header);
      send(server_.handler.error(
          sv(header.target()), 413, "Validation",
          fmt::format("request body is larger than the limit of {} bytes", server_.options.payload_limit)));
      return;
    }
    if (ec) return close();  // end of stream, timeout, malformed HTTP: nothing to answer
    busy_ = true;
    request_ = parser_->release();
    keep_alive_ = request_.keep_alive();
    request_id_ = request_id_of(request_);
    const Request request{sv(request_.method_string()),
                          sv(request_.target()),
                          sv(request_[bhttp::field::content_type]),
                          sv(request_[bhttp::field::authorization]),
                          request_.body(),
                          request_id_,
                          std::chrono::steady_clock::now()};
    cancellation_ = std::make_shared<Cancellation>();
    // The handler answers from whichever thread finishes the work; the answer is written
    // on this connection's strand.
    server_.handler.handle(request, cancellation_, [self = shared_from_this()](Response response) {
      asio::post(self->stream_.get_executor(),
                 [self, response = std::move(response)]() mutable { self->send(std::move(response)); });
    });
  }

  template <typename Header>
  static std::string request_id_of(const Header& header) {
    const auto it = header.find("X-Request-ID");
    // Echo the client's id (bounded, so a header cannot make every log line huge).
    if (it != header.end() && !it->value().empty() && it->value().size() <= 200)
      return std::string(it->value());
    return new_request_id();
  }

  void send(Response response) {
    response_.emplace(static_cast<bhttp::status>(response.status),
                      request_.version() == 0 ? 11 : request_.version());
    response_->set(bhttp::field::server, "warden");
    response_->set(bhttp::field::content_type, response.content_type);
    response_->set("X-Request-ID", request_id_);
    for (const auto& [name, value] : response.headers) response_->set(name, value);
    response_->keep_alive(keep_alive_ && !server_.stopping);
    response_->body() = std::move(response.body);
    response_->prepare_payload();
    stream_.expires_after(kIoTimeout);
    bhttp::async_write(stream_, *response_,
                       beast::bind_front_handler(&Session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t /*bytes*/) {
    busy_ = false;
    if (ec || !response_->keep_alive()) return close();
    request_ = {};
    read();
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  Server::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::request<bhttp::string_body> request_;
  std::optional<bhttp::response<bhttp::string_body>> response_;
  std::string request_id_;
  std::shared_ptr<Cancellation> cancellation_;
  bool keep_alive_ = true;
  bool busy_ = false;  // a request was read and its answer is not yet written
};

void Server::Impl::accept() {
  acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec || stopping) return;  // the acceptor was closed: stop accepting
    auto session = std::make_shared<Session>(std::move(socket), *this);
    {
      const std::lock_guard lock(sessions_mutex);
      sessions.remove_if([](const std::weak_ptr<Session>& s) { return s.expired(); });
      sessions.push_back(session);
    }
    session->start();
    accept();
  });
}

void Server::Impl::stop_on_io_thread() {
  if (stopping.exchange(true)) return;
  beast::error_code ignored;
  acceptor.close(ignored);
  if (signals) signals->cancel(ignored);
  {
    const std::lock_guard lock(sessions_mutex);
    for (auto& weak : sessions) {
      if (auto session = weak.lock()) session->close_if_idle();
    }
  }
  // In-flight requests finish on their own; wait for the last connection to end, but
  // no longer than the grace period.
  wait_for_drain(std::chrono::steady_clock::now() + kShutdownGrace);
}

void Server::Impl::wait_for_drain(std::chrono::steady_clock::time_point deadline) {
  bool drained = false;
  {
    const std::lock_guard lock(sessions_mutex);
    sessions.remove_if([](const std::weak_ptr<Session>& s) { return s.expired(); });
    drained = sessions.empty();
  }
  if (drained || std::chrono::steady_clock::now() >= deadline) {
    ioc.stop();
    return;
  }
  grace.emplace(ioc, std::chrono::milliseconds(20));
  grace->async_wait([this, deadline](beast::error_code ec) {
    if (!ec) wait_for_drain(deadline);
  });
}

Server::Server(const ServerOptions& options, Handler& handler)
    : impl_(std::make_unique<Impl>(options, handler)) {
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
  if (ec) {
    throw Error(ErrorKind::Io,
                fmt::format("cannot listen on {}:{}: {}", options.hostname, options.port, ec.message()));
  }
}

Server::~Server() {
  stop();
}

std::uint16_t Server::port() const noexcept {
  beast::error_code ec;
  const auto endpoint = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void Server::run() {
  Impl& impl = *impl_;
  if (impl.options.handle_signals) {
    impl.signals.emplace(impl.ioc, SIGINT, SIGTERM);
    impl.signals->async_wait([&impl](beast::error_code ec, int /*signal*/) {
      if (!ec) impl.stop_on_io_thread();
    });
  }
  impl.accept();
  std::vector<std::thread> extra;
  for (std::size_t i = 1; i < impl.options.io_threads; ++i) extra.emplace_back([&impl] { impl.ioc.run(); });
  impl.ioc.run();
  for (auto& t : extra) t.join();
}

void Server::stop() {
  asio::post(impl_->ioc, [impl = impl_.get()] { impl->stop_on_io_thread(); });
}

}  // namespace warden::http
