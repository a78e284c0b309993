#pragma once
// A fake HuggingFace hub on 127.0.0.1 for the hub tests: the API's revision endpoint,
// resolve/{rev}/{file} (LFS files redirect to /cdn/{sha256} as the real hub does), Range
// requests, and faults a test can switch on. One Beast connection at a time, each answered
// and closed, on its own thread.

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

namespace warden::testing {

struct FakeRepo {
  std::string repo = "acme/tiny-bert";
  std::string commit = "0123456789abcdef0123456789abcdef01234567";
  std::map<std::string, std::string> files;  // name -> bytes
  std::set<std::string> lfs;                 // names served as LFS (sha256 etag, CDN redirect)
};

struct SeenRequest {
  std::string method;
  std::string target;
  std::string range;  // the Range header, if any
};

class FakeHub {
 public:
  explicit FakeHub(FakeRepo repo);
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  [[nodiscard]] std::string endpoint() const;  // http://127.0.0.1:PORT

  // Faults, set before the fetch.
  void cut_after(const std::string& file, std::size_t bytes);  // first GET of its content only
  void corrupt(const std::string& file);                       // flips a byte of what is served
  void not_found(const std::string& file);
  void ignore_range(const std::string& file);  // answers 200 with the whole file
  void require_token(const std::string& token);
  void api_body(const std::string& json);  // replaces the API's answer

  [[nodiscard]] std::vector<SeenRequest> requests() const;
  // GETs of file content (resolve or CDN), the transfers a cached fetch must not make.
  [[nodiscard]] int content_gets() const;
  void clear_requests();

  static std::string sha256_of(const std::string& bytes);

 private:
  void serve();
  void answer(boost::asio::ip::tcp::socket& socket);

  FakeRepo repo_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;  // guards what follows
  std::map<std::string, std::size_t> cut_;
  std::set<std::string> corrupt_, missing_, ignore_range_;
  std::string token_, api_body_;
  std::vector<SeenRequest> seen_;
  std::thread thread_;
};

}  // namespace warden::testing
