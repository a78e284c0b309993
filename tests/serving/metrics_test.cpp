#include "serving/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "support/metrics_text.hpp"

namespace warden::serving {
namespace {

using warden::testing::sample_value;

TEST(Metrics, ExpositionFormatOfASmallRegistry) {
  MetricsRegistry registry;
  registry.counter("requests_total", "Requests answered.", {{"route", "/embed"}, {"status", "200"}}).inc(3);
  // Labels given in another order name the same series, rendered sorted by label name.
  registry
      .counter("requests_total", "ignored: the first help stays", {{"status", "200"}, {"route", "/embed"}})
      .inc();
  registry.counter("requests_total", "", {{"route", "/embed"}, {"status", "422"}}).inc();
  registry.gauge("inflight_inputs", "Inputs admitted and not yet answered.").set(2.5);
  auto& latency = registry.histogram("request_duration_seconds", "Latency.", {0.25, 0.5, 1});
  latency.observe(0.125);
  latency.observe(0.5);  // le is inclusive
  latency.observe(7);
  registry.gauge_callback("queue_depth", "Inputs waiting.", [] { return 4.0; });

  EXPECT_EQ(registry.render(),
            "# HELP requests_total Requests answered.\n"
            "# TYPE requests_total counter\n"
            "requests_total{route=\"/embed\",status=\"200\"} 4\n"
            "requests_total{route=\"/embed\",status=\"422\"} 1\n"
            "# HELP inflight_inputs Inputs admitted and not yet answered.\n"
            "# TYPE inflight_inputs gauge\n"
            "inflight_inputs 2.5\n"
            "# HELP request_duration_seconds Latency.\n"
            "# TYPE request_duration_seconds histogram\n"
            "request_duration_seconds_bucket{le=\"0.25\"} 1\n"
            "request_duration_seconds_bucket{le=\"0.5\"} 2\n"
            "request_duration_seconds_bucket{le=\"1\"} 2\n"
            "request_duration_seconds_bucket{le=\"+Inf\"} 3\n"
            "request_duration_seconds_sum 7.625\n"
            "request_duration_seconds_count 3\n"
            "# HELP queue_depth Inputs waiting.\n"
            "# TYPE queue_depth gauge\n"
            "queue_depth 4\n");
}

TEST(Metrics, SameNameAndLabelsIsTheSameObject) {
  MetricsRegistry registry;
  Counter& a = registry.counter("hits_total", "Hits.", {{"route", "/a"}});
  Counter& b = registry.counter("hits_total", "Hits.", {{"route", "/b"}});
  // Many more series: node storage keeps the first references valid.
  for (int i = 0; i < 1000; ++i) registry.counter("hits_total", "Hits.", {{"route", std::to_string(i)}});
  EXPECT_EQ(&a, &registry.counter("hits_total", "Hits.", {{"route", "/a"}}));
  EXPECT_NE(&a, &b);
  a.inc();
  EXPECT_EQ(registry.counter("hits_total", "Hits.", {{"route", "/a"}}).value(), 1.0);
  Histogram& h = registry.histogram("lat", "L.", {1, 2});
  EXPECT_EQ(&h, &registry.histogram("lat", "L.", {1, 2}));
}

TEST(Metrics, LabelValuesAndHelpAreEscaped) {
  MetricsRegistry registry;
  registry.counter("odd_total", "Line one\nback\\slash \"quoted\"", {{"path", "a\\b\"c\nd"}}).inc();
  EXPECT_EQ(registry.render(),
            "# HELP odd_total Line one\\nback\\\\slash \"quoted\"\n"
            "# TYPE odd_total counter\n"
            "odd_total{path=\"a\\\\b\\\"c\\nd\"} 1\n");
  EXPECT_EQ(escape_label_value("plain/é"), "plain/é");
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  Histogram h({1, 2, 4});
  for (const double v : {0.5, 1.0, 1.5, 3.0, 4.0, 100.0, -1.0}) h.observe(v);
  h.observe(std::nan(""));  // counted in +Inf only
  EXPECT_EQ(h.cumulative_counts(), (std::vector<std::uint64_t>{3, 4, 6, 8}));
  EXPECT_EQ(h.count(), 8U);
  EXPECT_TRUE(std::isnan(h.sum()));

  MetricsRegistry registry;
  auto& labelled = registry.histogram("size_tokens", "Tokens.", {10, 100}, {{"model", "m"}});
  labelled.observe(10);
  labelled.observe(50);
  labelled.observe(1000);
  const std::string text = registry.render();
  EXPECT_EQ(sample_value(text, "size_tokens_bucket{model=\"m\",le=\"10\"}"), 1);
  EXPECT_EQ(sample_value(text, "size_tokens_bucket{model=\"m\",le=\"100\"}"), 2);
  EXPECT_EQ(sample_value(text, "size_tokens_bucket{model=\"m\",le=\"+Inf\"}"), 3);
  EXPECT_EQ(sample_value(text, "size_tokens_sum{model=\"m\"}"), 1060);
  EXPECT_EQ(sample_value(text, "size_tokens_count{model=\"m\"}"), 3);
}

TEST(Metrics, ConcurrentUpdatesAreExact) {
  MetricsRegistry registry;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&registry, t] {
      // Each thread looks the series up itself, racing registration too.
      Counter& counter = registry.counter("work_total", "Work.", {{"kind", "x"}});
      Gauge& gauge = registry.gauge("level", "Level.");
      Histogram& h = registry.histogram("obs", "Obs.", {0.5});
      for (int i = 0; i < kPerThread; ++i) {
        counter.inc();
        gauge.add(t % 2 == 0 ? 2.0 : -1.0);
        h.observe(i % 2 == 0 ? 0.25 : 1.0);
        if (i % 10000 == 0) (void)registry.render();  // scrapes meanwhile
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(registry.counter("work_total", "", {{"kind", "x"}}).value(), kThreads * kPerThread);
  EXPECT_EQ(registry.gauge("level", "").value(), kPerThread * (2.0 + 2.0 - 1.0 - 1.0));
  const Histogram& h = registry.histogram("obs", "", {0.5});
  EXPECT_EQ(h.count(), std::uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(h.cumulative_counts()[0], std::uint64_t{kThreads} * kPerThread / 2);
  EXPECT_EQ(h.sum(), kThreads * kPerThread / 2 * 1.25);
}

TEST(Metrics, RegistrationErrors) {
  MetricsRegistry registry;
  registry.counter("things", "Things.");
  const auto expect_invalid = [](auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    }
  };
  expect_invalid([&] { registry.gauge("things", "Things."); });
  expect_invalid([&] { registry.histogram("things", "Things.", {1}); });
  expect_invalid([&] { registry.gauge_callback("things", "Things.", [] { return 1.0; }); });
  expect_invalid([&] { registry.counter("things", "Things.", {{"a", "1"}, {"a", "2"}}); });
  expect_invalid([&] { registry.counter("2bad", "Bad."); });
  expect_invalid([&] { registry.counter("bad-name", "Bad."); });
  expect_invalid([&] { registry.counter("ok", "Ok.", {{"__reserved", "x"}}); });
  expect_invalid([&] { registry.histogram("h", "H.", {1}, {{"le", "x"}}); });
  expect_invalid([&] { registry.histogram("h2", "H.", {}); });
  expect_invalid([&] { registry.histogram("h3", "H.", {2, 1}); });
  registry.histogram("h4", "H.", {1, 2});
  expect_invalid([&] { registry.histogram("h4", "H.", {1, 3}, {{"other", "series"}}); });
  registry.gauge_callback("cb", "Cb.", [] { return 1.0; });
  expect_invalid([&] { registry.gauge_callback("cb", "Cb.", [] { return 2.0; }); });
  expect_invalid([&] { registry.gauge("cb", "Cb."); });
  // A metric name may hold colons (recording-rule style); the registry still renders.
  registry.counter("ns:things", "Colons.").inc();
  EXPECT_NE(registry.render().find("ns:things 1\n"), std::string::npos);
}

TEST(Metrics, BucketHelpers) {
  EXPECT_EQ(linear_buckets(1, 2, 3), (std::vector<double>{1, 3, 5}));
  EXPECT_EQ(exponential_buckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
  const auto latency = default_latency_buckets();
  EXPECT_EQ(latency.front(), 0.0005);
  EXPECT_EQ(latency.back(), 10.0);
  EXPECT_TRUE(std::is_sorted(latency.begin(), latency.end()));
  EXPECT_THROW(exponential_buckets(0, 2, 3), Error);
  EXPECT_THROW(exponential_buckets(1, 1, 3), Error);
  EXPECT_THROW(linear_buckets(0, 0, 3), Error);
  EXPECT_THROW(linear_buckets(0, 1, 0), Error);
  MetricsRegistry registry;
  EXPECT_NO_THROW(registry.histogram("lat_seconds", "L.", default_latency_buckets()));
}

TEST(Metrics, FormatValue) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(16384), "16384");
  EXPECT_EQ(format_value(0.0005), "0.0005");
  EXPECT_EQ(format_value(-2.5), "-2.5");
  EXPECT_EQ(format_value(0.00005), "5e-05");
  EXPECT_EQ(format_value(999999), "999999");
  EXPECT_EQ(format_value(1e6), "1e+06");
  EXPECT_EQ(format_value(123456789), "1.23456789e+08");
  EXPECT_EQ(format_value(0.1 + 0.2), "0.30000000000000004");  // round-trips
  EXPECT_EQ(format_value(1e300), "1e+300");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
}

TEST(Metrics, ProcessMetricsArePresentAndPositive) {
  MetricsRegistry registry;
  EXPECT_EQ(registry.render(), "");
  registry.enable_process_metrics();
  registry.enable_process_metrics();  // idempotent
  // Burn a little CPU so the CPU time is above zero at any clock resolution.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1.0;
  const std::string text = registry.render();
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE process_resident_memory_bytes gauge\n"), std::string::npos) << text;
  for (const char* name :
       {"process_cpu_seconds_total", "process_open_fds", "process_max_fds", "process_virtual_memory_bytes",
        "process_resident_memory_bytes", "process_start_time_seconds"}) {
    EXPECT_GT(sample_value(text, name), 0.0) << name;
  }
  EXPECT_GE(sample_value(text, "process_virtual_memory_bytes"),
            sample_value(text, "process_resident_memory_bytes"));
  // Started within the last day, not in the future.
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double start = sample_value(text, "process_start_time_seconds");
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 86400);
  EXPECT_NE(std::string(MetricsRegistry::kContentType).find("version=0.0.4"), std::string::npos);
}

}  // namespace
}  // namespace warden::serving
