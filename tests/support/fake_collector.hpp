#pragma once
// A stand-in OpenTelemetry collector for the trace tests: an HTTP/1.1 server on a loopback
// port that keeps each POST's path and body and answers `status` (200 by default), one
// request per connection. Header-only, POSIX sockets, one thread.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace warden::testing {

class FakeCollector {
 public:
  struct Post {
    std::string target;
    std::string content_type;
    std::string body;
  };

  explicit FakeCollector(int status = 200) : status_(status) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ::close(fd_);
      throw std::runtime_error("bind");
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeCollector() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  FakeCollector(const FakeCollector&) = delete;
  FakeCollector& operator=(const FakeCollector&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Waits (at most `timeout`) until `done` holds for the posts received so far; returns them.
  std::vector<Post> wait_for(const std::function<bool(const std::vector<Post>&)>& done,
                             std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return done(posts_); });
    return posts_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      handle(c);
      ::close(c);
    }
  }

  void handle(int c) {
    std::string in;
    char buf[8192];
    std::size_t head_end = std::string::npos;
    std::size_t length = 0;
    while (true) {
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return;
      const ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) return;
      in.append(buf, static_cast<std::size_t>(n));
      if (head_end == std::string::npos && (head_end = in.find("\r\n\r\n")) != std::string::npos) {
        length = static_cast<std::size_t>(std::stoul(header(in.substr(0, head_end), "content-length", "0")));
      }
      if (head_end != std::string::npos && in.size() >= head_end + 4 + length) break;
    }
    const std::string head = in.substr(0, head_end);
    Post post;
    const std::size_t sp = head.find(' ');
    post.target = head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1);
    post.content_type = header(head, "content-type", "");
    post.body = in.substr(head_end + 4, length);
    const std::string answer =
        "HTTP/1.1 " + std::to_string(status_) +
        " X\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    (void)!::write(c, answer.data(), answer.size());
    {
      const std::lock_guard lock(mutex_);
      posts_.push_back(std::move(post));
    }
    changed_.notify_all();
  }

  // A header's value in `head` (case-insensitive name), or `otherwise`.
  static std::string header(const std::string& head, const std::string& name, const std::string& otherwise) {
    std::string lower = head;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const std::size_t at = lower.find("\r\n" + name + ":");
    if (at == std::string::npos) return otherwise;
    std::size_t begin = at + 3 + name.size();
    while (begin < head.size() && head[begin] == ' ') ++begin;
    return head.substr(begin, head.find("\r\n", begin) - begin);
  }

  int status_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Post> posts_;
  std::thread thread_;
};

}  // namespace warden::testing
