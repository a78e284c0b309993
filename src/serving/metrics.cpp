#include "serving/metrics.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "core/file.hpp"

namespace warden::serving {

namespace {

// Lock-free on every platform we build for; a lock here would put a mutex on the hot path.
static_assert(std::atomic<double>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

// atomic<double> has no fetch_add before C++20 and libc++ still lacks it: a CAS loop is the
// portable form (and what libstdc++ does inside fetch_add anyway).
void atomic_add(std::atomic<double>& target, double amount) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + amount, std::memory_order_relaxed,
                                       std::memory_order_relaxed)) {
  }
}

[[noreturn]] void invalid(const std::string& message) {
  throw Error(ErrorKind::InvalidArgument, message);
}

bool is_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool is_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;  // "__" is reserved for Prometheus
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

void check_bounds(std::string_view what, const std::vector<double>& bounds) {
  if (bounds.empty()) invalid(fmt::format("{}: a histogram needs at least one bucket bound", what));
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) invalid(fmt::format("{}: bucket bound {} is not finite", what, i));
    if (i > 0 && !(bounds[i] > bounds[i - 1])) {
      invalid(fmt::format("{}: bucket bounds must increase strictly (bound {})", what, i));
    }
  }
}

// The n-th whitespace-separated field (0-based) of text, parsed as an unsigned number.
std::optional<double> numeric_field(std::string_view text, std::size_t n) {
  std::size_t pos = 0;
  for (std::size_t field = 0;; ++field) {
    pos = text.find_first_not_of(" \t\n", pos);
    if (pos == std::string_view::npos) return std::nullopt;
    const std::size_t end = std::min(text.find_first_of(" \t\n", pos), text.size());
    if (field == n) {
      unsigned long long value = 0;
      const auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + end, value);
      if (ec != std::errc() || ptr != text.data() + end) return std::nullopt;
      return static_cast<double>(value);
    }
    pos = end;
  }
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double statm_bytes(std::size_t field) {
  const auto statm = try_read_file("/proc/self/statm");
  if (!statm) return kNaN;
  const auto pages = numeric_field(*statm, field);
  return pages ? *pages * static_cast<double>(::sysconf(_SC_PAGESIZE)) : kNaN;
}

double cpu_seconds() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return kNaN;
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double open_fds() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/fd", ec);
  if (ec) return kNaN;
  // Counts the iterator's own descriptor too, as the reference clients do.
  double count = 0.0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return kNaN;
    count += 1.0;
  }
  return count;
}

double max_fds() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return kNaN;
  if (limit.rlim_cur == RLIM_INFINITY) return std::numeric_limits<double>::infinity();
  return static_cast<double>(limit.rlim_cur);
}

// Seconds since the epoch at which this process started: its start in clock ticks after
// boot (/proc/self/stat field 22) plus the boot time (/proc/stat "btime").
double process_start_time() {
  const auto stat = try_read_file("/proc/self/stat");
  const auto system = try_read_file("/proc/stat");
  if (!stat || !system) return kNaN;
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const std::size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return kNaN;
  // After ")" come field 3 (state) onwards, so field 22 is the 20th (0-based 19).
  const std::string_view rest = std::string_view(*stat).substr(paren + 1);
  std::size_t pos = 0;
  for (int field = 3; field < 22; ++field) {
    pos = rest.find_first_not_of(' ', pos);
    if (pos == std::string_view::npos) return kNaN;
    pos = rest.find(' ', pos);
    if (pos == std::string_view::npos) return kNaN;
  }
  const auto ticks = numeric_field(rest.substr(pos), 0);
  const std::size_t btime_at = system->find("\nbtime ");
  if (!ticks || btime_at == std::string::npos) return kNaN;
  const auto boot = numeric_field(std::string_view(*system).substr(btime_at + 7), 0);
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  if (!boot || ticks_per_second <= 0) return kNaN;
  return *boot + *ticks / static_cast<double>(ticks_per_second);
}

void append_labels(std::string& out, const Labels& labels, std::string_view le = {}) {
  if (labels.empty() && le.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    out += escape_label_value(value);
    out += '"';
  }
  if (!le.empty()) {
    if (!first) out += ',';
    out += "le=\"";
    out += le;
    out += '"';
  }
  out += '}';
}

void append_sample(std::string& out, std::string_view name, std::string_view suffix, const Labels& labels,
                   double value, std::string_view le = {}) {
  out += name;
  out += suffix;
  append_labels(out, labels, le);
  out += ' ';
  out += format_value(value);
  out += '\n';
}

}  // namespace

// ---- metric types ----

void Counter::inc(double amount) noexcept {
  assert(amount >= 0.0 && "a counter only goes up");
  atomic_add(value_, amount);
}

void Gauge::add(double amount) noexcept {
  atomic_add(value_, amount);
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {
  check_bounds("histogram", bounds_);
}

void Histogram::observe(double value) noexcept {
  // First bound >= value, i.e. the first bucket with value <= le; NaN goes to +Inf only
  // (lower_bound would put it first, every comparison with NaN being false).
  const std::size_t bucket =
      std::isnan(value) ? bounds_.size()
                        : static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                                                   bounds_.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  atomic_add(sum_, value);
}

std::vector<std::uint64_t> Histogram::cumulative_counts() const {
  std::vector<std::uint64_t> counts(bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    counts[i] = running;
  }
  return counts;
}

std::uint64_t Histogram::count() const noexcept {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) total += buckets_[i].load(std::memory_order_relaxed);
  return total;
}

// ---- buckets ----

std::vector<double> linear_buckets(double start, double width, std::size_t count) {
  if (count == 0 || !(width > 0.0) || !std::isfinite(start) || !std::isfinite(width)) {
    invalid(
        fmt::format("linear_buckets: need count > 0 and a finite width > 0 (start {}, width {}, count {})",
                    start, width, count));
  }
  std::vector<double> bounds(count);
  for (std::size_t i = 0; i < count; ++i) bounds[i] = start + static_cast<double>(i) * width;
  return bounds;
}

std::vector<double> exponential_buckets(double start, double factor, std::size_t count) {
  if (count == 0 || !(start > 0.0) || !(factor > 1.0) || !std::isfinite(start) || !std::isfinite(factor)) {
    invalid(
        fmt::format("exponential_buckets: need count > 0, start > 0 and factor > 1 (start {}, factor {}, "
                    "count {})",
                    start, factor, count));
  }
  std::vector<double> bounds(count);
  double bound = start;
  for (std::size_t i = 0; i < count; ++i, bound *= factor) bounds[i] = bound;
  return bounds;
}

std::vector<double> default_latency_buckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};
}

// ---- text format ----

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Go's strconv.FormatFloat(v, 'g', -1, 64), as the reference client writes samples and
  // "le" labels: the shortest round-trip digits, in exponent form when the decimal exponent
  // is below -4 or at least 6. Matching it keeps "le" values identical across exporters.
  char buffer[64];
  const auto scientific =
      std::to_chars(std::begin(buffer), std::end(buffer), value, std::chars_format::scientific);
  const std::string_view text(std::begin(buffer), scientific.ptr);
  int exponent = 0;
  const std::string_view digits = text.substr(text.find('e') + 1);
  std::from_chars(digits.data() + (digits.front() == '+' ? 1 : 0), digits.data() + digits.size(), exponent);
  if (exponent < -4 || exponent >= 6) return std::string(text);
  const auto fixed = std::to_chars(std::begin(buffer), std::end(buffer), value, std::chars_format::fixed);
  return std::string(std::begin(buffer), fixed.ptr);
}

// ---- registry ----

struct MetricsRegistry::Series {
  Labels labels;  // sorted by name
  std::unique_ptr<Counter> counter;
  std::unique_ptr<Gauge> gauge;
  std::unique_ptr<Histogram> histogram;
  std::function<double()> callback;  // set for callback series (counter or gauge family)
};

struct MetricsRegistry::Family {
  std::string name;
  std::string help;
  Type type = Type::Counter;
  std::vector<double> bounds;                   // histograms: every series has these
  std::vector<std::unique_ptr<Series>> series;  // registration order
  std::map<Labels, Series*> by_labels;
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Series& MetricsRegistry::find_or_add(std::string_view name, std::string_view help, Type type,
                                                      Labels labels, const std::vector<double>* bounds) {
  static constexpr const char* kTypeNames[] = {"counter", "gauge", "histogram"};
  if (!is_metric_name(name)) invalid(fmt::format("invalid metric name '{}'", name));
  std::sort(labels.begin(), labels.end());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& label = labels[i].first;
    if (!is_label_name(label)) invalid(fmt::format("metric '{}': invalid label name '{}'", name, label));
    if (i > 0 && labels[i - 1].first == label) {
      invalid(fmt::format("metric '{}': label '{}' given twice", name, label));
    }
    if (type == Type::Histogram && label == "le") {
      invalid(fmt::format("histogram '{}': the label 'le' is reserved for buckets", name));
    }
  }

  Family* family = nullptr;
  if (const auto it = by_name_.find(std::string(name)); it != by_name_.end()) {
    family = it->second;
    if (family->type != type) {
      invalid(fmt::format("metric '{}' is already registered as a {}, not a {}", name,
                          kTypeNames[static_cast<int>(family->type)], kTypeNames[static_cast<int>(type)]));
    }
    if (bounds != nullptr && *bounds != family->bounds) {
      invalid(fmt::format("histogram '{}' is already registered with other bucket bounds", name));
    }
  } else {
    auto fresh = std::make_unique<Family>();
    fresh->name = std::string(name);
    fresh->help = std::string(help);
    fresh->type = type;
    if (bounds != nullptr) fresh->bounds = *bounds;
    family = fresh.get();
    // Both insertions may throw (allocation); the map is updated last so a failure leaves
    // no dangling pointer behind.
    families_.push_back(std::move(fresh));
    try {
      by_name_.emplace(family->name, family);
    } catch (...) {
      families_.pop_back();
      throw;
    }
  }

  if (const auto it = family->by_labels.find(labels); it != family->by_labels.end()) return *it->second;
  auto series = std::make_unique<Series>();
  series->labels = labels;
  family->series.reserve(family->series.size() + 1);  // no throw after the map insertion below
  Series& ref = *series;
  family->by_labels.emplace(std::move(labels), &ref);
  family->series.push_back(std::move(series));
  return ref;
}

Counter& MetricsRegistry::counter(std::string_view name, std::string_view help, Labels labels) {
  const std::lock_guard lock(mutex_);
  Series& series = find_or_add(name, help, Type::Counter, std::move(labels), nullptr);
  if (series.callback) invalid(fmt::format("counter '{}': this series is a callback", name));
  // Filled here rather than in find_or_add: a series left empty by a failed allocation is
  // filled on the next call (render() skips it meanwhile).
  if (!series.counter) series.counter = std::make_unique<Counter>();
  return *series.counter;
}

Gauge& MetricsRegistry::gauge(std::string_view name, std::string_view help, Labels labels) {
  const std::lock_guard lock(mutex_);
  Series& series = find_or_add(name, help, Type::Gauge, std::move(labels), nullptr);
  if (series.callback) invalid(fmt::format("gauge '{}': this series is a callback", name));
  if (!series.gauge) series.gauge = std::make_unique<Gauge>();
  return *series.gauge;
}

Histogram& MetricsRegistry::histogram(std::string_view name, std::string_view help,
                                      std::vector<double> upper_bounds, Labels labels) {
  check_bounds(fmt::format("histogram '{}'", name), upper_bounds);
  const std::lock_guard lock(mutex_);
  Series& series = find_or_add(name, help, Type::Histogram, std::move(labels), &upper_bounds);
  if (!series.histogram) series.histogram = std::make_unique<Histogram>(std::move(upper_bounds));
  return *series.histogram;
}

void MetricsRegistry::add_callback(std::string_view name, std::string_view help, Type type,
                                   std::function<double()> value, Labels labels) {
  if (!value) invalid(fmt::format("metric '{}': empty callback", name));
  const std::lock_guard lock(mutex_);
  Series& series = find_or_add(name, help, type, std::move(labels), nullptr);
  if (series.callback || series.counter || series.gauge)
    invalid(fmt::format("metric '{}': this series is already registered", name));
  series.callback = std::move(value);
}

void MetricsRegistry::gauge_callback(std::string_view name, std::string_view help,
                                     std::function<double()> value, Labels labels) {
  add_callback(name, help, Type::Gauge, std::move(value), std::move(labels));
}

void MetricsRegistry::counter_callback(std::string_view name, std::string_view help,
                                       std::function<double()> value, Labels labels) {
  add_callback(name, help, Type::Counter, std::move(value), std::move(labels));
}

void MetricsRegistry::enable_process_metrics() {
  {
    const std::lock_guard lock(mutex_);
    if (process_metrics_) return;
    process_metrics_ = true;
  }
  counter_callback("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                   cpu_seconds);
  gauge_callback("process_open_fds", "Number of open file descriptors.", open_fds);
  gauge_callback("process_max_fds", "Maximum number of open file descriptors.", max_fds);
  gauge_callback("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                 [] { return statm_bytes(0); });
  gauge_callback("process_resident_memory_bytes", "Resident memory size in bytes.",
                 [] { return statm_bytes(1); });
  // Constant for the life of the process: read once.
  const double start = process_start_time();
  gauge_callback("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                 [start] { return start; });
}

std::string MetricsRegistry::render() const {
  // Snapshot the structure under the lock, then read values without it: callbacks may be
  // slow (they read /proc) or take locks of their own, and must not block registration.
  // The metric objects themselves are copied out (not the Series), so nothing read below
  // is written by a registration running meanwhile.
  struct SeriesView {
    const Labels* labels;
    const Counter* counter;
    const Gauge* gauge;
    const Histogram* histogram;
    const std::function<double()>* callback;
  };
  struct View {
    const Family* family;
    std::vector<SeriesView> series;
  };
  std::vector<View> views;
  {
    const std::lock_guard lock(mutex_);
    views.reserve(families_.size());
    for (const auto& family : families_) {
      View& view = views.emplace_back(View{family.get(), {}});
      view.series.reserve(family->series.size());
      for (const auto& s : family->series) {
        if (!s->counter && !s->gauge && !s->histogram && !s->callback) continue;  // failed to fill
        view.series.push_back(SeriesView{&s->labels, s->counter.get(), s->gauge.get(), s->histogram.get(),
                                         s->callback ? &s->callback : nullptr});
      }
    }
  }

  std::string out;
  for (const View& view : views) {
    const Family& family = *view.family;
    out += "# HELP ";
    out += family.name;
    out += ' ';
    out += escape_help(family.help);
    out += "\n# TYPE ";
    out += family.name;
    out += family.type == Type::Counter ? " counter\n"
           : family.type == Type::Gauge ? " gauge\n"
                                        : " histogram\n";
    for (const SeriesView& series : view.series) {
      if (series.histogram != nullptr) {
        const Histogram& h = *series.histogram;
        const std::vector<std::uint64_t> counts = h.cumulative_counts();
        for (std::size_t i = 0; i < h.upper_bounds().size(); ++i) {
          append_sample(out, family.name, "_bucket", *series.labels, static_cast<double>(counts[i]),
                        format_value(h.upper_bounds()[i]));
        }
        append_sample(out, family.name, "_bucket", *series.labels, static_cast<double>(counts.back()),
                      "+Inf");
        append_sample(out, family.name, "_sum", *series.labels, h.sum());
        append_sample(out, family.name, "_count", *series.labels, static_cast<double>(counts.back()));
      } else {
        const double value = series.callback != nullptr  ? (*series.callback)()
                             : series.counter != nullptr ? series.counter->value()
                                                         : series.gauge->value();
        append_sample(out, family.name, "", *series.labels, value);
      }
    }
  }
  return out;
}

}  // namespace warden::serving
