// warden-load: an HTTP/1.1 load generator for `warden serve` (the "server under load"
// table, docs/benchmarks.md). Keep-alive connections on Boost.Beast/Asio, one event loop per
// --threads.
//
//   warden-load --url http://127.0.0.1:8080/embed [--connections 50] [--duration 20] [--warmup 3]
//               [--body FILE | --bodies FILE.jsonl] [--header 'K: V']... [--rate R] [--timeout 30]
//               [--threads 1] [--json] [--repeat P [--unique-template JSON]]
//
// --repeat P (the result cache's workload): each request's body is, with
// probability P, one of the --bodies drawn at random (the hot set), else a body no request
// has sent before: --unique-template with {n} replaced by a number unique to this run.
//
// Closed loop (default): each of --connections clients sends its next request when the answer
// to the previous one has arrived, so the offered load is whatever the server sustains.
// Open loop (--rate R): R requests/s are scheduled at fixed times whatever the answers, so
// more than the capacity can be offered (the overload run); a request due while every
// connection is busy waits in a client-side queue, and its latency is counted from the time
// it was due, not from when it was written (otherwise a slow server would hide its own
// queueing: "coordinated omission").
//
// Latency: per request, from writing it (closed loop) or from its due time (open loop) to the
// last byte of the response, in microseconds; percentiles are exact (nearest rank over every
// sample). Only responses that arrive inside the measured window (after --warmup, before the
// end) count towards requests/s, latency and status counts; errors and timeouts are counted
// over the warm-up too, so none can hide there.

// GCC 12 reports "potential null pointer dereference" inside Asio's scheduler and libstdc++'s
// streambuf once they are inlined here (a middle-end warning, so the system-header exemption
// does not apply); as in src/http/server.cpp, this file alone turns it off.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// The TEI timing headers; the server reports them in milliseconds once its scheduler lands.
constexpr const char* kTimingHeaders[] = {"x-total-time", "x-tokenization-time", "x-queue-time",
                                          "x-inference-time"};
constexpr std::size_t kTimingHeaderCount = std::size(kTimingHeaders);

struct Options {
  std::string url = "http://127.0.0.1:8080/embed";
  std::size_t connections = 10;
  double duration_s = 10;
  double warmup_s = 2;
  std::string body_file;
  std::string bodies_file;
  std::vector<std::string> headers;
  double rate = 0;  // 0: closed loop
  double timeout_s = 30;
  std::size_t threads = 1;
  bool json = false;
  double repeat = -1;  // < 0: rotate the bodies; else the hot-set probability
  std::string unique_template = R"({"inputs": "a text seen once, number {n}"})";
};

struct Target {
  std::string host;
  std::string port;
  std::string path;
};

Target parse_url(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) throw std::runtime_error("--url must start with http:// (no TLS here)");
  const std::string rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  Target t;
  t.path = slash == std::string::npos ? "/" : rest.substr(slash);
  // [v6]:port or host:port; the port defaults to 80 as in any URL.
  std::size_t colon = authority.rfind(':');
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    t.host = authority.substr(1, close - 1);
    colon = authority.find(':', close);
  } else {
    t.host = authority.substr(0, colon);
  }
  t.port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  if (t.host.empty()) throw std::runtime_error("--url has no host");
  return t;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> load_bodies(const Options& o) {
  std::vector<std::string> bodies;
  if (!o.body_file.empty()) bodies.push_back(read_file(o.body_file));
  if (!o.bodies_file.empty()) {
    std::ifstream in(o.bodies_file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + o.bodies_file);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) bodies.push_back(std::move(line));
    }
    if (bodies.empty()) throw std::runtime_error(o.bodies_file + " has no bodies");
  }
  return bodies;
}

// What one event loop measured; merged across loops at the end.
struct Stats {
  std::vector<std::uint32_t> latency_us;
  std::map<unsigned, std::uint64_t> status;
  std::uint64_t connect_errors = 0;
  std::uint64_t io_errors = 0;         // a connection failed or closed with a request in flight
  std::uint64_t timeouts = 0;          // no full answer within --timeout
  std::uint64_t backlog_timeouts = 0;  // open loop: waited --timeout for a free connection
  std::uint64_t reconnects = 0;
  std::uint64_t in_flight_at_end = 0;
  std::uint64_t backlog_max = 0;
  std::uint64_t bytes_received = 0;
  std::vector<double> timing[kTimingHeaderCount];

  void merge(Stats&& o) {
    latency_us.insert(latency_us.end(), o.latency_us.begin(), o.latency_us.end());
    for (const auto& [code, n] : o.status) status[code] += n;
    connect_errors += o.connect_errors;
    io_errors += o.io_errors;
    timeouts += o.timeouts;
    backlog_timeouts += o.backlog_timeouts;
    reconnects += o.reconnects;
    in_flight_at_end += o.in_flight_at_end;
    backlog_max = std::max(backlog_max, o.backlog_max);
    bytes_received += o.bytes_received;
    for (std::size_t i = 0; i < kTimingHeaderCount; ++i) {
      timing[i].insert(timing[i].end(), o.timing[i].begin(), o.timing[i].end());
    }
  }
};

struct Shared {
  Options options;
  Target target;
  tcp::resolver::results_type endpoints;
  std::vector<std::string> bodies;
  std::vector<std::pair<std::string, std::string>> headers;
  mutable std::atomic<std::uint64_t> unique{0};  // --repeat: the next unique body's number
  std::uint64_t run_id = 0;                      // --repeat: makes unique bodies unique across runs too
  Clock::time_point start;                       // connections open
  Clock::time_point measure_start;               // warm-up over
  Clock::time_point end;
};

class Worker;

class Connection {
 public:
  Connection(Worker& worker, asio::io_context& io, std::size_t index)
      : worker_(worker),
        socket_(io),
        timer_(io),
        retry_timer_(io),
        next_body_(index),
        rng_(index * 7919 + 17) {}

  void start() { connect(); }
  void stop() {
    if (in_flight_) ++stopped_in_flight_;
    beast::error_code ignored;
    socket_.close(ignored);
    timer_.cancel();
    retry_timer_.cancel();
  }
  [[nodiscard]] std::uint64_t stopped_in_flight() const { return stopped_in_flight_; }
  // Sends one request; its latency is counted from `origin`.
  void send(Clock::time_point origin);

 private:
  void connect();
  void reconnect_later();
  void on_response(const beast::error_code& ec, std::uint64_t generation);
  void fail(bool was_timeout);

  Worker& worker_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  asio::steady_timer retry_timer_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  std::optional<http::response_parser<http::string_body>> parser_;
  std::size_t next_body_;
  std::mt19937_64 rng_;  // --repeat's draws
  Clock::time_point origin_;
  bool in_flight_ = false;
  // Bumped per request and per connection attempt, so that a late timer or a late completion
  // of an abandoned request is recognised and ignored.
  std::uint64_t generation_ = 0;
  std::uint64_t stopped_in_flight_ = 0;
};

class Worker {
 public:
  Worker(const Shared& shared, std::size_t connections, double rate, std::size_t first_index)
      : shared_(shared), rate_(rate), tick_(io_), end_timer_(io_) {
    for (std::size_t i = 0; i < connections; ++i) {
      connections_.push_back(std::make_unique<Connection>(*this, io_, first_index + i));
    }
  }

  void run() {
    for (auto& c : connections_) c->start();
    end_timer_.expires_at(shared_.end);
    end_timer_.async_wait([this](const beast::error_code&) {
      stopping_ = true;
      tick_.cancel();
      for (auto& c : connections_) c->stop();
    });
    if (open_loop()) schedule_tick();
    io_.run();
    for (auto& c : connections_) stats_.in_flight_at_end += c->stopped_in_flight();
  }

  [[nodiscard]] bool open_loop() const { return rate_ > 0; }
  [[nodiscard]] bool stopping() const { return stopping_; }
  [[nodiscard]] const Shared& shared() const { return shared_; }
  Stats& stats() { return stats_; }
  [[nodiscard]] bool in_window(Clock::time_point t) const {
    return t >= shared_.measure_start && t <= shared_.end;
  }

  // A connection is ready for its next request (connected, or its answer arrived).
  void on_idle(Connection* c) {
    if (stopping_) return;
    if (!open_loop()) {
      c->send(Clock::now());
      return;
    }
    const auto now = Clock::now();
    const auto timeout =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(shared_.options.timeout_s));
    while (!backlog_.empty()) {
      const auto due = backlog_.front();
      backlog_.pop_front();
      if (now - due > timeout) {
        ++stats_.backlog_timeouts;
        continue;
      }
      c->send(due);
      return;
    }
    idle_.push_back(c);
  }

 private:
  // Open loop: request k of this worker is due at start + k / rate, whatever has been answered.
  void schedule_tick() {
    const auto due = shared_.start + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(static_cast<double>(issued_) / rate_));
    tick_.expires_at(due);
    tick_.async_wait([this, due](const beast::error_code& ec) {
      if (ec || stopping_) return;
      ++issued_;
      if (!idle_.empty()) {
        Connection* c = idle_.back();
        idle_.pop_back();
        c->send(due);
      } else {
        backlog_.push_back(due);
        stats_.backlog_max = std::max<std::uint64_t>(stats_.backlog_max, backlog_.size());
      }
      schedule_tick();
    });
  }

  const Shared& shared_;
  double rate_;
  asio::io_context io_{1};
  asio::steady_timer tick_;
  asio::steady_timer end_timer_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> idle_;
  std::deque<Clock::time_point> backlog_;
  std::uint64_t issued_ = 0;
  bool stopping_ = false;
  Stats stats_;
};

void Connection::connect() {
  const std::uint64_t generation = ++generation_;
  asio::async_connect(socket_, worker_.shared().endpoints,
                      [this, generation](const beast::error_code& ec, const tcp::endpoint&) {
                        if (worker_.stopping() || generation != generation_) return;
                        if (ec) {
                          ++worker_.stats().connect_errors;
                          reconnect_later();
                          return;
                        }
                        beast::error_code nodelay_ec;  // a failure here only costs latency
                        socket_.set_option(tcp::no_delay(true), nodelay_ec);
                        buffer_.clear();
                        worker_.on_idle(this);
                      });
}

// A refused or reset connection is retried after a pause, so that a server that is down
// costs a few attempts a second rather than a busy loop.
void Connection::reconnect_later() {
  beast::error_code ignored;
  socket_.close(ignored);
  retry_timer_.expires_after(std::chrono::milliseconds(20));
  retry_timer_.async_wait([this](const beast::error_code& ec) {
    if (ec || worker_.stopping()) return;
    ++worker_.stats().reconnects;
    connect();
  });
}

void Connection::send(Clock::time_point origin) {
  const Shared& s = worker_.shared();
  const std::uint64_t generation = ++generation_;
  in_flight_ = true;
  request_ = {};
  request_.version(11);
  request_.target(s.target.path);
  request_.set(http::field::host, s.target.host);
  for (const auto& [k, v] : s.headers) request_.set(k, v);
  if (s.bodies.empty()) {
    request_.method(http::verb::get);
  } else {
    request_.method(http::verb::post);
    if (s.options.repeat >= 0) {
      std::uniform_real_distribution<double> coin(0.0, 1.0);
      if (coin(rng_) < s.options.repeat) {
        request_.body() = s.bodies[std::uniform_int_distribution<std::size_t>(0, s.bodies.size() - 1)(rng_)];
      } else {
        std::string body = s.options.unique_template;
        const std::size_t at = body.find("{n}");
        const std::string n = fmt::format("{}-{}", s.run_id, s.unique.fetch_add(1));
        if (at != std::string::npos) body.replace(at, 3, n);
        request_.body() = std::move(body);
      }
    } else {
      // Rotated per connection, starting at its index, so concurrent requests differ.
      request_.body() = s.bodies[next_body_++ % s.bodies.size()];
    }
  }
  request_.keep_alive(true);
  request_.prepare_payload();
  parser_.emplace();
  parser_->body_limit(std::uint64_t{1} << 32);  // big batches answer megabytes of floats
  parser_->header_limit(64 * 1024);
  // Closed loop: the latency starts now, just before the write.
  origin_ = worker_.open_loop() ? origin : Clock::now();

  timer_.expires_after(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s.options.timeout_s)));
  timer_.async_wait([this, generation](const beast::error_code& ec) {
    if (ec || worker_.stopping() || generation != generation_ || !in_flight_) return;
    fail(/*was_timeout=*/true);
  });
  http::async_write(socket_, request_, [this, generation](const beast::error_code& ec, std::size_t) {
    if (worker_.stopping() || generation != generation_) return;
    if (ec) {
      fail(false);
      return;
    }
    http::async_read(socket_, buffer_, *parser_,
                     [this, generation](const beast::error_code& read_ec, std::size_t) {
                       on_response(read_ec, generation);
                     });
  });
}

void Connection::on_response(const beast::error_code& ec, std::uint64_t generation) {
  if (worker_.stopping() || generation != generation_) return;
  if (ec) {
    fail(false);
    return;
  }
  const auto now = Clock::now();
  in_flight_ = false;
  timer_.cancel();
  Stats& st = worker_.stats();
  const auto& response = parser_->get();
  st.bytes_received += response.body().size();
  if (worker_.in_window(now)) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - origin_).count();
    st.latency_us.push_back(static_cast<std::uint32_t>(std::min<long long>(us, UINT32_MAX)));
    ++st.status[response.result_int()];
    for (std::size_t i = 0; i < kTimingHeaderCount; ++i) {
      const auto it = response.find(kTimingHeaders[i]);
      if (it == response.end()) continue;
      try {
        st.timing[i].push_back(std::stod(std::string(it->value())));
      } catch (const std::exception&) {
        // Not a number: not a timing we can summarise; the status count still has the answer.
      }
    }
  }
  if (!response.keep_alive()) {
    // The server chose to close (e.g. after a 413): reconnect, and count it.
    ++st.reconnects;
    beast::error_code ignored;
    socket_.close(ignored);
    connect();
    return;
  }
  worker_.on_idle(this);
}

// The request in flight is lost: count it once, drop the connection (an HTTP/1.1 connection
// with an unanswered request cannot be reused) and open a fresh one.
void Connection::fail(bool was_timeout) {
  ++generation_;
  in_flight_ = false;
  timer_.cancel();
  Stats& st = worker_.stats();
  if (was_timeout) {
    ++st.timeouts;
  } else {
    ++st.io_errors;
  }
  reconnect_later();
}

std::uint32_t percentile(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank: the smallest sample with at least p% of the samples at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

int run(const Options& o) {
  Shared s;
  s.options = o;
  s.target = parse_url(o.url);
  s.bodies = load_bodies(o);
  if (o.repeat >= 0 && s.bodies.empty()) throw std::runtime_error("--repeat needs --bodies (the hot set)");
  s.run_id = std::random_device{}();
  bool has_content_type = false;
  for (const auto& h : o.headers) {
    const std::size_t colon = h.find(':');
    if (colon == std::string::npos) throw std::runtime_error("--header must be 'Name: value': " + h);
    std::string name = h.substr(0, colon);
    std::string value = h.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    has_content_type |= lower == "content-type";
    s.headers.emplace_back(std::move(name), std::move(value));
  }
  // The embedding routes answer 415 without it, and a benchmark of 415s measures nothing.
  if (!s.bodies.empty() && !has_content_type) s.headers.emplace_back("Content-Type", "application/json");
  {
    asio::io_context io;
    tcp::resolver resolver(io);
    s.endpoints = resolver.resolve(s.target.host, s.target.port);
  }
  const std::size_t threads = std::clamp<std::size_t>(o.threads, 1, std::max<std::size_t>(o.connections, 1));
  s.start = Clock::now();
  s.measure_start =
      s.start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup_s));
  s.end = s.measure_start +
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));

  std::vector<std::unique_ptr<Worker>> workers;
  std::size_t first = 0;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t n = o.connections / threads + (t < o.connections % threads ? 1 : 0);
    workers.push_back(std::make_unique<Worker>(s, n, o.rate / static_cast<double>(threads), first));
    first += n;
  }
  {
    std::vector<std::jthread> loops;
    for (auto& w : workers) loops.emplace_back([&w] { w->run(); });
  }
  Stats total;
  for (auto& w : workers) total.merge(std::move(w->stats()));

  std::sort(total.latency_us.begin(), total.latency_us.end());
  const std::uint64_t completed = total.latency_us.size();
  const double rps = static_cast<double>(completed) / o.duration_s;
  double mean_us = 0;
  for (const auto v : total.latency_us) mean_us += v;
  if (completed) mean_us /= static_cast<double>(completed);
  auto count = [&](unsigned code) { return total.status.contains(code) ? total.status.at(code) : 0; };
  const std::uint64_t other = completed - count(200) - count(429) - count(504);
  const std::uint32_t p50 = percentile(total.latency_us, 50), p95 = percentile(total.latency_us, 95),
                      p99 = percentile(total.latency_us, 99),
                      max = total.latency_us.empty() ? 0 : total.latency_us.back();

  if (o.json) {
    std::string status_all;
    for (const auto& [code, n] : total.status) {
      status_all += fmt::format("{}\"{}\":{}", status_all.empty() ? "" : ",", code, n);
    }
    std::string timing;
    for (std::size_t i = 0; i < kTimingHeaderCount; ++i) {
      if (total.timing[i].empty()) continue;
      timing +=
          fmt::format("{}\"{}\":{}", timing.empty() ? "" : ",", kTimingHeaders[i], median(total.timing[i]));
    }
    fmt::print(
        "{{\"url\":\"{}\",\"mode\":\"{}\",\"connections\":{},\"threads\":{},\"rate_offered\":{},\"duration_"
        "s\":{},"
        "\"warmup_s\":{},\"requests\":{},\"rps\":{:.2f},\"latency_us\":{{\"p50\":{},\"p95\":{},\"p99\":{},"
        "\"max\":{},\"mean\":{:.0f}}},\"latency_from\":\"{}\",\"status\":{{\"200\":{},\"429\":{},\"504\":{},"
        "\"other\":{}}},\"status_all\":{{{}}},\"errors\":{{\"connect\":{},\"io\":{},\"timeout\":{},"
        "\"backlog_timeout\":{}}},\"reconnects\":{},\"in_flight_at_end\":{},\"backlog_max\":{},"
        "\"bytes_received\":{},\"server_timing_ms_median\":{{{}}}}}\n",
        o.url, o.rate > 0 ? "open" : "closed", o.connections, threads, o.rate, o.duration_s, o.warmup_s,
        completed, rps, p50, p95, p99, max, mean_us, o.rate > 0 ? "due_time" : "write", count(200),
        count(429), count(504), other, status_all, total.connect_errors, total.io_errors, total.timeouts,
        total.backlog_timeouts, total.reconnects, total.in_flight_at_end, total.backlog_max,
        total.bytes_received, timing);
    return 0;
  }
  fmt::print("{} {} loop, {} connections, {} thread(s), {:.1f} s after {:.1f} s warm-up{}\n", o.url,
             o.rate > 0 ? "open" : "closed", o.connections, threads, o.duration_s, o.warmup_s,
             o.rate > 0 ? fmt::format(", offered {:.1f} req/s", o.rate) : "");
  fmt::print("  requests {}  ({:.2f} req/s)\n", completed, rps);
  fmt::print("  latency us ({}): p50 {}  p95 {}  p99 {}  max {}  mean {:.0f}\n",
             o.rate > 0 ? "from due time" : "from write", p50, p95, p99, max, mean_us);
  fmt::print("  status: 200 {}  429 {}  504 {}  other {}", count(200), count(429), count(504), other);
  for (const auto& [code, n] : total.status) {
    if (code != 200 && code != 429 && code != 504) fmt::print("  [{}: {}]", code, n);
  }
  fmt::print(
      "\n  errors (incl. warm-up): connect {}  io {}  timeout {}  backlog-timeout {};  reconnects {}  "
      "in flight at end {}{}\n",
      total.connect_errors, total.io_errors, total.timeouts, total.backlog_timeouts, total.reconnects,
      total.in_flight_at_end, o.rate > 0 ? fmt::format("  client backlog max {}", total.backlog_max) : "");
  for (std::size_t i = 0; i < kTimingHeaderCount; ++i) {
    if (!total.timing[i].empty())
      fmt::print("  {} median {} ms\n", kTimingHeaders[i], median(total.timing[i]));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"HTTP/1.1 keep-alive load generator for warden serve"};
  app.add_option("--url", o.url, "http://HOST:PORT/PATH")->capture_default_str();
  app.add_option("--connections,-c", o.connections, "Concurrent connections (clients)")
      ->capture_default_str();
  app.add_option("--duration,-d", o.duration_s, "Measured seconds")->capture_default_str();
  app.add_option("--warmup", o.warmup_s, "Seconds of load before measuring")->capture_default_str();
  auto* body = app.add_option("--body", o.body_file, "File whose whole content is every request's body");
  app.add_option("--bodies", o.bodies_file, "File of request bodies, one per line, rotated")->excludes(body);
  app.add_option("--header,-H", o.headers, "Extra request header 'Name: value' (repeatable)");
  app.add_option("--rate", o.rate, "Open loop: requests/s offered whatever the answers (0: closed loop)")
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_s,
                 "Seconds without a full answer before a request counts as an error")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Event-loop threads")->capture_default_str();
  app.add_flag("--json", o.json, "One JSON object instead of text");
  app.add_option("--repeat", o.repeat,
                 "Probability that a request repeats a --bodies body drawn at random (else a unique body)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--unique-template", o.unique_template,
                 "--repeat's unique body; {n} becomes a unique number")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (o.connections == 0 || o.duration_s <= 0 || o.warmup_s < 0 || o.timeout_s <= 0 || o.rate < 0) {
    std::fprintf(stderr, "warden-load: --connections, --duration and --timeout must be positive\n");
    return 2;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warden-load: %s\n", e.what());
    return 1;
  }
}
