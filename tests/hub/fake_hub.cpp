// GCC 12 reports "potential null pointer dereference" inside Asio's scheduler once it is
// inlined here (a middle-end warning: the system-header exemption does not apply), as in
// src/http/server.cpp. Boost's code, not ours.
#pragma GCC diagnostic ignored "-Wnull-dereference"
// ... and, under ASan at -O2, "may be used uninitialized" on a boost::optional inside
// Beast's parser (boost::none in basic_parser.hpp): Boost's code again.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <utility>

#include "hub/fake_hub.hpp"

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "hub/sha256.hpp"

namespace warden::testing {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

namespace {

struct Reply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::size_t cut = std::string::npos;  // send only this many body bytes, then close
};

std::string reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 206:
      return "Partial Content";
    case 302:
      return "Found";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 416:
      return "Range Not Satisfiable";
    default:
      return "Status";
  }
}

// A fixed, git-like 40-hex etag per file name.
std::string git_etag(const std::string& name) {
  return FakeHub::sha256_of("blob " + name).substr(0, 40);
}

}  // namespace

std::string FakeHub::sha256_of(const std::string& bytes) {
  hub::Sha256 h;
  h.update(bytes);
  return h.hex_digest();
}

FakeHub::FakeHub(FakeRepo repo)
    : repo_(std::move(repo)), acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
  port_ = acceptor_.local_endpoint().port();
  thread_ = std::thread([this] { serve(); });
}

FakeHub::~FakeHub() {
  stopping_ = true;
  // Wake the blocking accept with a connection of our own.
  try {
    asio::io_context io;
    tcp::socket s(io);
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
  } catch (...) {
  }
  thread_.join();
}

std::string FakeHub::endpoint() const {
  return fmt::format("http://127.0.0.1:{}", port_);
}

void FakeHub::cut_after(const std::string& file, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  cut_[file] = bytes;
}
void FakeHub::corrupt(const std::string& file) {
  std::lock_guard lock(mutex_);
  corrupt_.insert(file);
}
void FakeHub::not_found(const std::string& file) {
  std::lock_guard lock(mutex_);
  missing_.insert(file);
}
void FakeHub::ignore_range(const std::string& file) {
  std::lock_guard lock(mutex_);
  ignore_range_.insert(file);
}
void FakeHub::require_token(const std::string& token) {
  std::lock_guard lock(mutex_);
  token_ = token;
}
void FakeHub::api_body(const std::string& json) {
  std::lock_guard lock(mutex_);
  api_body_ = json;
}
std::vector<SeenRequest> FakeHub::requests() const {
  std::lock_guard lock(mutex_);
  return seen_;
}
int FakeHub::content_gets() const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& r : seen_) {
    if (r.method == "GET" &&
        (r.target.find("/resolve/") != std::string::npos || r.target.starts_with("/cdn/")))
      ++n;
  }
  return n;
}
void FakeHub::clear_requests() {
  std::lock_guard lock(mutex_);
  seen_.clear();
}

void FakeHub::serve() {
  while (!stopping_) {
    tcp::socket socket(io_);
    boost::system::error_code ec;
    acceptor_.accept(socket, ec);
    if (ec || stopping_) continue;
    try {
      answer(socket);
    } catch (const std::exception&) {
      // The client went away mid-request: nothing to do.
    }
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }
}

void FakeHub::answer(tcp::socket& socket) {
  boost::beast::flat_buffer buffer;
  http::request<http::string_body> req;
  http::read(socket, buffer, req);
  const std::string method(req.method_string());
  const std::string target(req.target());
  const std::string range(req[http::field::range]);
  const std::string auth(req[http::field::authorization]);
  const bool head = req.method() == http::verb::head;

  Reply reply;
  std::string file;  // the file whose content is served, if any
  {
    std::lock_guard lock(mutex_);
    seen_.push_back({method, target, range});
    const std::string api_prefix = "/api/models/" + repo_.repo + "/revision/";
    const std::string resolve_prefix = "/" + repo_.repo + "/resolve/";
    const bool authorised = token_.empty() || auth == "Bearer " + token_;
    if (target.starts_with(api_prefix)) {
      const std::string rev = target.substr(api_prefix.size());
      if (!authorised) {
        reply.status = 401;
      } else if (rev != "main" && rev != repo_.commit) {
        reply.status = 404;
      } else if (!api_body_.empty()) {
        reply.body = api_body_;
      } else {
        std::string siblings;
        for (const auto& [name, bytes] : repo_.files) {
          siblings += fmt::format("{}{{\"rfilename\":\"{}\"}}", siblings.empty() ? "" : ",", name);
        }
        reply.body =
            fmt::format(R"({{"id":"{}","sha":"{}","siblings":[{}]}})", repo_.repo, repo_.commit, siblings);
      }
      reply.headers.emplace_back("Content-Type", "application/json");
    } else if (target.starts_with(resolve_prefix)) {
      const std::string rest = target.substr(resolve_prefix.size());
      const auto slash = rest.find('/');
      const std::string rev = rest.substr(0, slash);
      const std::string name = slash == std::string::npos ? "" : rest.substr(slash + 1);
      if (!authorised) {
        reply.status = 401;
      } else if ((rev != "main" && rev != repo_.commit) || !repo_.files.contains(name) ||
                 missing_.contains(name)) {
        reply.status = 404;
      } else if (repo_.lfs.contains(name)) {
        const std::string sha = sha256_of(repo_.files.at(name));
        reply.status = 302;
        reply.headers.emplace_back("Location", "/cdn/" + sha);
        reply.headers.emplace_back("X-Linked-Etag", "\"" + sha + "\"");
        reply.headers.emplace_back("X-Linked-Size", std::to_string(repo_.files.at(name).size()));
        reply.headers.emplace_back("X-Repo-Commit", repo_.commit);
      } else {
        file = name;
        reply.headers.emplace_back("ETag", "\"" + git_etag(name) + "\"");
        reply.headers.emplace_back("X-Repo-Commit", repo_.commit);
      }
    } else if (target.starts_with("/cdn/")) {
      const std::string sha = target.substr(5);
      for (const auto& name : repo_.lfs) {
        if (sha256_of(repo_.files.at(name)) == sha) file = name;
      }
      if (file.empty()) reply.status = 404;
    } else {
      reply.status = 404;
    }

    if (!file.empty()) {
      std::string bytes = repo_.files.at(file);
      if (corrupt_.contains(file) && !bytes.empty()) bytes[bytes.size() / 2] ^= 0x5a;
      std::size_t from = 0;
      if (range.starts_with("bytes=") && range.ends_with("-") && !ignore_range_.contains(file)) {
        from = std::stoull(range.substr(6, range.size() - 7));
      }
      if (from > 0 && from >= bytes.size()) {
        reply.status = 416;
      } else if (from > 0) {
        reply.status = 206;
        reply.headers.emplace_back("Content-Range",
                                   fmt::format("bytes {}-{}/{}", from, bytes.size() - 1, bytes.size()));
        reply.body = bytes.substr(from);
      } else {
        reply.body = bytes;
      }
      if (!head) {
        if (const auto it = cut_.find(file); it != cut_.end()) {
          reply.cut = it->second;
          cut_.erase(it);  // first attempt only
        }
      }
    }
  }

  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
  for (const auto& [name, value] : reply.headers) out += fmt::format("{}: {}\r\n", name, value);
  out += fmt::format("Content-Length: {}\r\nConnection: close\r\n\r\n", reply.body.size());
  if (!head) out += reply.body.substr(0, reply.cut);
  asio::write(socket, asio::buffer(out));
  // Let the client read everything before the close (a reset could discard the bytes).
  if (reply.cut != std::string::npos) socket.shutdown(tcp::socket::shutdown_send);
}

}  // namespace warden::testing
