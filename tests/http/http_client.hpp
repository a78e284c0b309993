#pragma once
// A minimal blocking HTTP/1.1 client for the server tests: raw POSIX sockets, so the test
// checks the bytes on the wire rather than a second copy of Beast. Every read has a
// timeout, so a server bug fails a test instead of hanging the suite.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

namespace warden::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
};

class HttpConnection {
 public:
  explicit HttpConnection(std::uint16_t port, int timeout_seconds = 5) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    timeval tv{timeout_seconds, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      throw std::runtime_error("connect");
    }
  }
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  ~HttpConnection() { ::close(fd_); }

  // False when the server closed first (it may, after a 413): the response still reads.
  bool send_raw(const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // True when the server ends the connection (end of stream or a reset) within `timeout`;
  // anything it sends before is discarded.
  bool closed_within(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) == 0) return false;
      char chunk[4096];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n == 0) return true;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
    }
  }

  [[nodiscard]] int fd() const noexcept { return fd_; }

  HttpResponse request(const std::string& method, const std::string& target, const std::string& body = {},
                       const std::string& content_type = "application/json",
                       const std::string& extra_headers = {}) {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers;
    if (!body.empty() || method == "POST") {
      req += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    }
    req += "\r\n" + body;
    send_raw(req);
    return read_response();
  }

  // Reads one response (headers, then Content-Length bytes of body; no body for a HEAD).
  HttpResponse read_response(bool head_request = false) {
    std::size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) fill();
    HttpResponse r;
    const std::string head = buffer_.substr(0, header_end);
    r.status = std::atoi(head.substr(9, 3).c_str());
    std::size_t pos = head.find("\r\n");
    while (pos != std::string::npos && pos < head.size()) {
      const std::size_t next = head.find("\r\n", pos + 2);
      const std::string line =
          head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        r.headers[name] = value;
      }
      pos = next;
    }
    const std::size_t length = head_request ? 0 : std::stoul(r.headers.at("content-length"));
    while (buffer_.size() < header_end + 4 + length) fill();
    r.body = buffer_.substr(header_end + 4, length);
    buffer_.erase(0, header_end + 4 + length);
    return r;
  }

 private:
  void fill() {
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) throw std::runtime_error("connection closed or timed out before a full response");
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }

  int fd_ = -1;
  std::string buffer_;

 public:
  // Bytes received and not yet read as a response (an interim 100 Continue, stray body bytes).
  std::string take_buffered(std::size_t at_least, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (buffer_.size() < at_least && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char chunk[4096];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) break;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    std::string out = buffer_.substr(0, std::min(at_least, buffer_.size()));
    buffer_.erase(0, out.size());
    return out;
  }
};

}  // namespace warden::testing
