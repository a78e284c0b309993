#include "grpc/http2_gate.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::grpc {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint8_t kHeadersFrame = 0x1, kRstStreamFrame = 0x3, kGoawayFrame = 0x7;
constexpr std::uint32_t kEnhanceYourCalm = 0xb;
constexpr std::size_t kClientPreface = 24;  // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
// Bytes read from one side and not yet written to the other, per direction: past it the gate
// stops reading that side, so a peer that does not read holds the other back (back-pressure).
constexpr std::size_t kPendingLimit = std::size_t{256} << 10;

// Follows an HTTP/2 byte stream frame by frame without keeping it: reports each frame's
// header, and knows where the last whole frame ended.
class FrameScanner {
 public:
  explicit FrameScanner(std::size_t preface) : skip_(preface) {}

  template <class OnHeader>
  void scan(std::string_view bytes, OnHeader&& on_header) {
    std::size_t i = 0;
    while (i < bytes.size()) {
      if (skip_ > 0) {
        const std::size_t n = std::min<std::size_t>(skip_, bytes.size() - i);
        skip_ -= n;
        i += n;
        offset_ += n;
        if (skip_ == 0) boundary_ = offset_;
        continue;
      }
      header_[header_len_++] = static_cast<unsigned char>(bytes[i++]);
      ++offset_;
      if (header_len_ < header_.size()) continue;
      header_len_ = 0;
      skip_ = (std::size_t{header_[0]} << 16) | (std::size_t{header_[1]} << 8) | header_[2];
      const std::uint32_t stream = ((std::uint32_t{header_[5]} << 24) | (std::uint32_t{header_[6]} << 16) |
                                    (std::uint32_t{header_[7]} << 8) | header_[8]) &
                                   0x7fffffffU;
      on_header(header_[3], stream);
      if (skip_ == 0) boundary_ = offset_;
    }
  }
  // Bytes scanned so far, and the offset just past the last whole frame (or the preface).
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  [[nodiscard]] std::uint64_t boundary() const noexcept { return boundary_; }

 private:
  std::array<unsigned char, 9> header_{};
  std::size_t header_len_ = 0;
  std::uint64_t skip_;
  std::uint64_t offset_ = 0;
  std::uint64_t boundary_ = 0;
};

std::string goaway(std::uint32_t last_stream) {
  static constexpr std::string_view kWhy = "too many reset streams";
  std::string f;
  const auto n = static_cast<std::uint32_t>(8 + kWhy.size());
  const auto be32 = [&f](std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>((v >> shift) & 0xff);
  };
  f += static_cast<char>(n >> 16);
  f += static_cast<char>(n >> 8);
  f += static_cast<char>(n);
  f += static_cast<char>(kGoawayFrame);
  f += '\0';
  be32(0);
  be32(last_stream);
  be32(kEnhanceYourCalm);
  f += kWhy;
  return f;
}

// One client connection and its relay to gRPC.
struct Link {
  int client = -1;
  int inner = -1;  // our end of the socket pair; gRPC holds the other
  std::string up;  // client to gRPC: read, not yet written from up_sent on
  std::size_t up_sent = 0;
  std::string down;  // gRPC to client
  std::size_t down_sent = 0;
  FrameScanner up_scan{kClientPreface};
  FrameScanner down_scan{0};
  double tokens = 0;
  Clock::time_point refilled = Clock::now();
  std::uint32_t last_stream = 0;  // the highest stream the client opened
  bool client_eof = false;        // the client finished sending
  bool inner_eof = false;         // gRPC closed its end
  bool up_shut = false;           // the client's end of sending was passed on to gRPC
  std::uint32_t client_mask = 0;  // what epoll watches on each side
  std::uint32_t inner_mask = 0;
  [[nodiscard]] std::size_t up_pending() const noexcept { return up.size() - up_sent; }
  [[nodiscard]] std::size_t down_pending() const noexcept { return down.size() - down_sent; }
};

// Reads what `fd` has (at most up to `limit` pending in `buffer`); false at end of stream or
// on an error.
bool read_into(int fd, std::string& buffer, std::size_t& sent, std::size_t limit, std::string_view& fresh) {
  if (sent == buffer.size()) {
    buffer.clear();
    sent = 0;
  }
  const std::size_t before = buffer.size();
  bool open = true;
  while (buffer.size() - sent < limit) {
    char chunk[16384];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    open = false;
    break;
  }
  fresh = std::string_view(buffer).substr(before);
  return open;
}

// Writes what it can of `buffer` from `sent` on; false on an error.
bool write_from(int fd, const std::string& buffer, std::size_t& sent) {
  while (sent < buffer.size()) {
    const ssize_t n = ::send(fd, buffer.data() + sent, buffer.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
  return true;
}

int listen_on(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    throw Error(ErrorKind::Io,
                fmt::format("gRPC: cannot listen on {}:{}: {}", host, port, ::gai_strerror(rc)));
  }
  std::string why = "no address";
  int fd = -1;
  for (const addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw Error(ErrorKind::Io, fmt::format("gRPC: cannot listen on {}:{}: {}", host, port, why));
  return fd;
}

int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

// What an epoll event is about: a connection's fd, or one of these.
constexpr std::uint64_t kWakeTag = ~std::uint64_t{0};
constexpr std::uint64_t kListenerTag = kWakeTag - 1;

struct Http2Gate::Impl {
  Impl(const std::string& host, int port, ResetLimit l, std::function<void()> refused)
      : limit(l),
        on_refused(std::move(refused)),
        listener(listen_on(host, port)),
        bound(bound_port(listener)) {
    epoll = ::epoll_create1(EPOLL_CLOEXEC);
    wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll < 0 || wake < 0) {
      close_all();
      throw Error(ErrorKind::Io, "gRPC: cannot create the connection poller");
    }
    watch(wake, EPOLLIN, EPOLL_CTL_ADD, kWakeTag);
    watch(listener, EPOLLIN, EPOLL_CTL_ADD, kListenerTag);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() { close_all(); }
  void close_all() {
    for (const int fd : {listener, wake, epoll}) {
      if (fd >= 0) ::close(fd);
    }
  }

  void watch(int fd, std::uint32_t events, int op) const {
    watch(fd, events, op, static_cast<std::uint64_t>(fd));
  }
  void watch(int fd, std::uint32_t events, int op, std::uint64_t tag) const {
    epoll_event e{};
    e.events = events;
    e.data.u64 = tag;
    ::epoll_ctl(epoll, op, fd, &e);
  }

  void run() {
    std::array<epoll_event, 64> events{};
    while (!stopping.load()) {
      const int n = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), -1);
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        const std::uint64_t tag = events[static_cast<std::size_t>(i)].data.u64;
        if (tag == kWakeTag) {
          std::uint64_t ignored = 0;
          (void)::read(wake, &ignored, sizeof ignored);
        } else if (tag == kListenerTag) {
          accept_all();
        } else if (const auto it = by_fd.find(static_cast<int>(tag)); it != by_fd.end()) {
          service(it->second);
        }
      }
    }
    while (!links.empty()) drop(links.begin()->second.get());
  }

  void accept_all() {
    const std::lock_guard lock(accept_mutex);
    while (accepting) {
      const int client = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (client < 0) return;  // EAGAIN, or a connection that went away before it was taken
      int pair[2];
      // Both ends non-blocking: gRPC reads its end from its pollers and expects it so.
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
        ::close(client);
        continue;
      }
      const int one = 1;
      ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto link = std::make_unique<Link>();
      link->client = client;
      link->inner = pair[0];
      link->tokens = limit.burst;
      by_fd[client] = link.get();
      by_fd[pair[0]] = link.get();
      Link* l = link.get();
      links.emplace(client, std::move(link));
      ::grpc::AddInsecureChannelFromFd(server, pair[1]);  // gRPC owns pair[1] from here
      watch(l->client, 0, EPOLL_CTL_ADD);
      watch(l->inner, 0, EPOLL_CTL_ADD);
      service(l);
    }
  }

  // Moves what each side has to the other, as far as either can take, and watches for more.
  void service(Link* l) {
    std::string_view fresh;
    if (!l->client_eof && l->up_pending() < kPendingLimit) {
      if (!read_into(l->client, l->up, l->up_sent, kPendingLimit, fresh)) l->client_eof = true;
      bool calm = true;
      l->up_scan.scan(fresh, [&](std::uint8_t type, std::uint32_t stream) {
        if (type == kHeadersFrame) l->last_stream = std::max(l->last_stream, stream);
        if (type == kRstStreamFrame && !take_token(*l)) calm = false;
      });
      if (!calm) return refuse(l);
    }
    if (!write_from(l->inner, l->up, l->up_sent)) return drop(l);
    if (l->client_eof && l->up_pending() == 0 && !l->up_shut) {
      ::shutdown(l->inner, SHUT_WR);
      l->up_shut = true;
    }
    if (!l->inner_eof && l->down_pending() < kPendingLimit) {
      if (!read_into(l->inner, l->down, l->down_sent, kPendingLimit, fresh)) l->inner_eof = true;
      l->down_scan.scan(fresh, [](std::uint8_t, std::uint32_t) {});
    }
    if (!write_from(l->client, l->down, l->down_sent)) return drop(l);
    if (l->inner_eof && l->down_pending() == 0) return drop(l);
    const std::uint32_t client_mask = (!l->client_eof && l->up_pending() < kPendingLimit ? EPOLLIN : 0U) |
                                      (l->down_pending() > 0 ? EPOLLOUT : 0U);
    const std::uint32_t inner_mask = (!l->inner_eof && l->down_pending() < kPendingLimit ? EPOLLIN : 0U) |
                                     (l->up_pending() > 0 ? EPOLLOUT : 0U);
    if (client_mask != l->client_mask) watch(l->client, l->client_mask = client_mask, EPOLL_CTL_MOD);
    if (inner_mask != l->inner_mask) watch(l->inner, l->inner_mask = inner_mask, EPOLL_CTL_MOD);
  }

  // One reset from the client: false when its bucket is empty.
  [[nodiscard]] bool take_token(Link& l) const {
    const auto now = Clock::now();
    l.tokens = std::min(
        limit.burst, l.tokens + std::chrono::duration<double>(now - l.refilled).count() * limit.per_second);
    l.refilled = now;
    if (l.tokens < 1) return false;
    l.tokens -= 1;
    return true;
  }

  // A client past its limit: what gRPC has sent it up to the last whole frame, then GOAWAY
  // (when no frame is half written), then the connection is closed; gRPC sees its end
  // closed and ends the connection's calls.
  void refuse(Link* l) {
    const std::uint64_t start = l->down_scan.offset() - l->down.size();  // stream offset of down[0]
    const std::uint64_t boundary = l->down_scan.boundary();
    if (boundary >= start + l->down_sent) {
      l->down.resize(static_cast<std::size_t>(boundary - start));
      l->down += goaway(l->last_stream);
      (void)write_from(l->client, l->down, l->down_sent);  // once, without waiting for the client
    }
    if (on_refused) on_refused();
    drop(l);
  }

  void drop(Link* l) {
    for (const int fd : {l->client, l->inner}) {
      ::epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
      by_fd.erase(fd);
      ::close(fd);
    }
    links.erase(l->client);
  }

  ResetLimit limit;
  std::function<void()> on_refused;
  int listener;  // under accept_mutex once the relay runs; -1 once closed
  int bound;
  int epoll = -1;
  int wake = -1;
  ::grpc::Server* server = nullptr;
  std::mutex accept_mutex;
  bool accepting = false;  // under accept_mutex
  std::atomic<bool> stopping{false};
  // Owned by the relay thread.
  std::unordered_map<int, std::unique_ptr<Link>> links;  // by client fd
  std::unordered_map<int, Link*> by_fd;                  // both fds of each link
  std::thread relay;
};

Http2Gate::Http2Gate(const std::string& host, int port, ResetLimit limit, std::function<void()> on_refused)
    : impl_(std::make_unique<Impl>(host, port, limit, std::move(on_refused))) {}

Http2Gate::~Http2Gate() {
  close();
}

int Http2Gate::port() const noexcept {
  return impl_->bound;
}

void Http2Gate::open(::grpc::Server& server) {
  {
    const std::lock_guard lock(impl_->accept_mutex);
    impl_->server = &server;
    impl_->accepting = true;
  }
  impl_->relay = std::thread([impl = impl_.get()] { impl->run(); });
}

void Http2Gate::stop_accepting() {
  const std::lock_guard lock(impl_->accept_mutex);
  impl_->accepting = false;
  // Closed, not just ignored: a new client is refused at once instead of waiting in the backlog.
  if (impl_->listener >= 0) {
    ::epoll_ctl(impl_->epoll, EPOLL_CTL_DEL, impl_->listener, nullptr);
    ::close(impl_->listener);
    impl_->listener = -1;
  }
}

void Http2Gate::close() {
  stop_accepting();
  if (!impl_->relay.joinable()) return;
  impl_->stopping = true;
  const std::uint64_t one = 1;
  (void)::write(impl_->wake, &one, sizeof one);
  impl_->relay.join();
}

}  // namespace warden::grpc
