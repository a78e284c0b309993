#pragma once
// A small Prometheus registry rendered in the text exposition format 0.0.4.
//
// Registration (counter(), gauge(), histogram()) takes a mutex and returns a reference that
// stays valid for the registry's lifetime; asking again for the same name and labels returns
// the same object, so a route may look its series up lazily (hot paths should keep the
// reference). Updates are lock-free atomics (relaxed: a metric orders nothing else) and
// safe from any thread. render() groups series by family (one HELP and TYPE per name) in
// registration order, so a scrape is stable from one call to the next.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace warden::serving {

// Label name/value pairs. Their order does not matter: a series is identified, and
// rendered, with its labels sorted by name.
using Labels = std::vector<std::pair<std::string, std::string>>;

// A value that only goes up (requests, errors, seconds spent).
// alignas: counters bumped by many threads each get their own cache line.
class alignas(64) Counter {
 public:
  // amount must be >= 0 (a counter that went down would break rate()); asserted in debug.
  void inc(double amount = 1.0) noexcept;
  [[nodiscard]] double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A value that goes up and down (requests in flight, queue depth).
class alignas(64) Gauge {
 public:
  void set(double value) noexcept { value_.store(value, std::memory_order_relaxed); }
  void add(double amount) noexcept;
  void inc() noexcept { add(1.0); }
  void dec() noexcept { add(-1.0); }
  [[nodiscard]] double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Observations counted into buckets by upper bound (Prometheus "le": v <= bound), plus
// their sum. Buckets are stored per interval and made cumulative at render time; the count
// is the sum of the buckets, so "+Inf" and _count always agree within one scrape.
class Histogram {
 public:
  // upper_bounds: finite, strictly increasing, not empty ("+Inf" is implicit); throws
  // warden::Error (InvalidArgument) otherwise.
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value) noexcept;

  [[nodiscard]] const std::vector<double>& upper_bounds() const noexcept { return bounds_; }
  // Cumulative counts, one per bound and a last one for +Inf (== count()).
  [[nodiscard]] std::vector<std::uint64_t> cumulative_counts() const;
  [[nodiscard]] std::uint64_t count() const noexcept;
  [[nodiscard]] double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_.size() + 1
  std::atomic<double> sum_{0.0};
};

// Bucket helpers. Both throw warden::Error (InvalidArgument) on parameters that cannot
// give increasing bounds.
// start, start + width, ... (count bounds); width > 0.
std::vector<double> linear_buckets(double start, double width, std::size_t count);
// start, start * factor, ... (count bounds); start > 0, factor > 1.
std::vector<double> exponential_buckets(double start, double factor, std::size_t count);
// Request latency in seconds, 0.5 ms to 10 s in 1-2.5-5 steps: a short input on a small
// model answers in about a millisecond, a full batch on a large model in seconds.
std::vector<double> default_latency_buckets();

class MetricsRegistry {
 public:
  MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;
  ~MetricsRegistry();

  // Each returns the series for name+labels, creating it on first use (the first help
  // given for a name is the one rendered). Throws warden::Error (InvalidArgument) on an
  // invalid metric or label name, a duplicated label name, a name already registered with
  // another type, a histogram asked for with other bounds than its family's, or a series
  // that is a callback.
  Counter& counter(std::string_view name, std::string_view help, Labels labels = {});
  Gauge& gauge(std::string_view name, std::string_view help, Labels labels = {});
  Histogram& histogram(std::string_view name, std::string_view help, std::vector<double> upper_bounds,
                       Labels labels = {});

  // Series whose value is computed at render time, for values owned elsewhere (a queue's
  // depth, a pool's size). The callback runs on the rendering thread without the
  // registry's lock held, must not throw, and must stay callable for the registry's
  // lifetime. Registering the same name+labels twice throws (InvalidArgument).
  void gauge_callback(std::string_view name, std::string_view help, std::function<double()> value,
                      Labels labels = {});
  void counter_callback(std::string_view name, std::string_view help, std::function<double()> value,
                        Labels labels = {});

  // Registers the standard process metrics as callback series: process_cpu_seconds_total,
  // process_open_fds, process_max_fds, process_virtual_memory_bytes,
  // process_resident_memory_bytes and process_start_time_seconds. A value that cannot be
  // read renders as NaN. Calling it again does nothing.
  void enable_process_metrics();

  // The whole registry in the text format 0.0.4 (Content-Type below).
  [[nodiscard]] std::string render() const;
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  enum class Type { Counter, Gauge, Histogram };
  struct Family;
  struct Series;
  // Under mutex_: the series for name+labels, created empty when new.
  Series& find_or_add(std::string_view name, std::string_view help, Type type, Labels labels,
                      const std::vector<double>* bounds);
  void add_callback(std::string_view name, std::string_view help, Type type, std::function<double()> value,
                    Labels labels);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Family>> families_;  // registration order
  std::unordered_map<std::string, Family*> by_name_;
  bool process_metrics_ = false;
};

// Text-format escaping, exposed for tests: label values escape backslash, double quote
// and newline; HELP text escapes backslash and newline.
std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view help);
// A sample value as Prometheus writes it: shortest round-trip form, "+Inf", "-Inf", "NaN".
std::string format_value(double value);

}  // namespace warden::serving
