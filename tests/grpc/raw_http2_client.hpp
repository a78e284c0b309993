#pragma once
// A bare HTTP/2 client over one TCP connection, for what no well-behaved gRPC library
// sends: calls opened and reset at once (the "rapid reset" flood, CVE-2023-44487). It
// speaks just enough of the protocol to be served — the preface, its SETTINGS and their
// acknowledgements, PING answers — and records what the server does to it: GOAWAY, or the
// connection closed.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace warden::testing {

class RawHttp2Client {
 public:
  explicit RawHttp2Client(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      throw std::runtime_error("connect");
    }
    // A server that stops reading must not hang the test: a send gives up after 5 s.
    const timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string hello = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    frame(hello, kSettings, 0, 0, {});
    // A large connection window, so that answers never wait for this client.
    frame(hello, kWindowUpdate, 0, 0, be32(0x3fff0000U));
    send_all(hello);
    reader_ = std::thread([this] { read_loop(); });
  }
  RawHttp2Client(const RawHttp2Client&) = delete;
  RawHttp2Client& operator=(const RawHttp2Client&) = delete;
  ~RawHttp2Client() {
    ::shutdown(fd_, SHUT_RDWR);
    reader_.join();
    ::close(fd_);
  }

  // Opens `count` calls of `path` (a gRPC method, "/package.Service/Method") each carrying
  // `message` (the request's protobuf bytes) and resets each at once with CANCEL, all in one
  // write. False once the connection is closed or a write fails.
  bool open_and_reset(std::string_view path, std::string_view message, int count) {
    std::string bytes;
    for (int i = 0; i < count; ++i) {
      const std::uint32_t stream = next_stream_;
      next_stream_ += 2;
      std::string headers;
      for (const auto& [name, value] : {std::pair<std::string_view, std::string_view>{":method", "POST"},
                                        {":scheme", "http"},
                                        {":path", path},
                                        {":authority", "localhost"},
                                        {"content-type", "application/grpc"},
                                        {"te", "trailers"}}) {
        literal(headers, name, value);
      }
      frame(bytes, kHeaders, kEndHeaders, stream, headers);
      std::string data(1, '\0');  // not compressed
      data += be32(static_cast<std::uint32_t>(message.size()));
      data += message;
      frame(bytes, kData, kEndStream, stream, data);
      frame(bytes, kRstStream, 0, stream, be32(kCancel));
    }
    return !closed() && send_all(bytes);
  }

  [[nodiscard]] bool closed() const noexcept { return closed_.load(); }
  [[nodiscard]] bool goaway() const noexcept { return goaway_.load(); }
  [[nodiscard]] std::uint32_t streams_opened() const noexcept { return (next_stream_ - 1) / 2; }

 private:
  static constexpr std::uint8_t kData = 0x0, kHeaders = 0x1, kRstStream = 0x3, kSettings = 0x4, kPing = 0x6,
                                kGoaway = 0x7, kWindowUpdate = 0x8;
  static constexpr std::uint8_t kEndStream = 0x1, kAck = 0x1, kEndHeaders = 0x4;
  static constexpr std::uint32_t kCancel = 0x8;

  static std::string be32(std::uint32_t v) {
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
            static_cast<char>(v)};
  }
  static void frame(std::string& out, std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                    std::string_view payload) {
    const auto n = static_cast<std::uint32_t>(payload.size());
    out += static_cast<char>(n >> 16);
    out += static_cast<char>(n >> 8);
    out += static_cast<char>(n);
    out += static_cast<char>(type);
    out += static_cast<char>(flags);
    out += be32(stream & 0x7fffffffU);
    out += payload;
  }
  // HPACK: a literal header field without indexing, new name, no Huffman coding.
  static void literal(std::string& out, std::string_view name, std::string_view value) {
    out += '\0';
    for (const std::string_view s : {name, value}) {
      std::size_t n = s.size();
      if (n < 127) {
        out += static_cast<char>(n);
      } else {
        out += static_cast<char>(127);
        for (n -= 127; n >= 128; n >>= 7) out += static_cast<char>((n & 0x7f) | 0x80);
        out += static_cast<char>(n);
      }
      out += s;
    }
  }

  bool send_all(std::string_view bytes) {
    const std::lock_guard lock(write_mutex_);
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  bool read_exactly(char* out, std::size_t n) {
    while (n > 0) {
      const ssize_t got = ::recv(fd_, out, n, 0);
      if (got <= 0) return false;
      out += got;
      n -= static_cast<std::size_t>(got);
    }
    return true;
  }

  // Answers the server's SETTINGS and PINGs, notes GOAWAY, discards the rest, until the
  // connection ends.
  void read_loop() {
    char head[9];
    std::vector<char> payload;
    while (read_exactly(head, sizeof head)) {
      const std::size_t n = (static_cast<std::size_t>(static_cast<unsigned char>(head[0])) << 16) |
                            (static_cast<std::size_t>(static_cast<unsigned char>(head[1])) << 8) |
                            static_cast<unsigned char>(head[2]);
      const auto type = static_cast<std::uint8_t>(head[3]);
      const auto flags = static_cast<std::uint8_t>(head[4]);
      payload.resize(n);
      if (n > 0 && !read_exactly(payload.data(), n)) break;
      std::string answer;
      if (type == kSettings && (flags & kAck) == 0) frame(answer, kSettings, kAck, 0, {});
      if (type == kPing && (flags & kAck) == 0)
        frame(answer, kPing, kAck, 0, {payload.data(), payload.size()});
      if (type == kGoaway) goaway_ = true;
      if (!answer.empty()) send_all(answer);
    }
    closed_ = true;
  }

  int fd_ = -1;
  std::uint32_t next_stream_ = 1;
  std::mutex write_mutex_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> goaway_{false};
  std::thread reader_;
};

}  // namespace warden::testing
