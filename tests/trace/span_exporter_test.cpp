// The OTLP/HTTP exporter against a stand-in collector: what it sends (OTLP's JSON encoding),
// that a full queue drops and counts, and that a collector that is down or refusing costs
// only counters.

#include "trace/span_exporter.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/fake_collector.hpp"

namespace warden::trace {
namespace {

using namespace std::chrono_literals;

Span make_span(const std::string& name, const TraceId& trace, const SpanId& parent) {
  Span s;
  s.trace_id = trace;
  s.span_id = new_span_id();
  s.parent_span_id = parent;
  s.name = name;
  s.kind = SpanKind::Server;
  s.start_unix_ns = 1'700'000'000'000'000'000ULL;
  s.end_unix_ns = 1'700'000'000'002'500'000ULL;
  s.attributes = {{"http.route", std::string("/embed")}, {"http.response.status_code", std::int64_t{200}}};
  return s;
}

// A loopback port nobody listens on (bound, then closed).
std::string closed_port_url() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}

TEST(SpanExporter, PostsOtlpJsonToTheTracesPath) {
  testing::FakeCollector collector;
  const TraceId trace = new_trace_id();
  const SpanId parent = new_span_id();
  {
    ExporterOptions o;
    o.endpoint = collector.url();
    o.service_name = "warden-test";
    o.interval = 50ms;
    SpanExporter exporter(o);
    exporter.submit({make_span("POST /embed", trace, parent), make_span("tokenize", trace, {})});
    const auto posts = collector.wait_for([](const auto& p) { return !p.empty(); });
    ASSERT_EQ(posts.size(), 1U);
    EXPECT_EQ(posts[0].target, "/v1/traces");
    EXPECT_EQ(posts[0].content_type, "application/json");
    simdjson::dom::parser parser;
    const simdjson::dom::element doc = parser.parse(posts[0].body);
    const simdjson::dom::element rs = doc["resourceSpans"].at(0);
    EXPECT_EQ(std::string_view(rs["resource"]["attributes"].at(0)["key"]), "service.name");
    EXPECT_EQ(std::string_view(rs["resource"]["attributes"].at(0)["value"]["stringValue"]), "warden-test");
    const simdjson::dom::array spans = rs["scopeSpans"].at(0)["spans"];
    ASSERT_EQ(spans.size(), 2U);
    const simdjson::dom::element first = spans.at(0);
    EXPECT_EQ(std::string_view(first["name"]), "POST /embed");
    EXPECT_EQ(std::string_view(first["traceId"]), to_hex(trace));
    EXPECT_EQ(std::string_view(first["parentSpanId"]), to_hex(parent));
    EXPECT_EQ(std::int64_t(first["kind"]), 2);
    EXPECT_EQ(std::string_view(first["startTimeUnixNano"]), "1700000000000000000");
    EXPECT_EQ(std::string_view(first["endTimeUnixNano"]), "1700000000002500000");
    EXPECT_EQ(std::string_view(first["attributes"].at(1)["value"]["intValue"]), "200");
    // A root span has no parentSpanId at all.
    EXPECT_EQ(spans.at(1)["parentSpanId"].error(), simdjson::NO_SUCH_FIELD);
    // Wait until the counter says so (it is bumped after the answer is read).
    for (int i = 0; i < 200 && exporter.counts().exported < 2; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(exporter.counts().exported, 2U);
    EXPECT_EQ(exporter.counts().failed_exports, 0U);
  }
}

TEST(SpanExporter, AFullQueueDropsAndCountsInsteadOfGrowing) {
  ExporterOptions o;
  o.endpoint = closed_port_url();
  o.max_queue = 4;
  o.max_batch = 100;  // never reached: nothing is sent before the interval
  o.interval = 60s;
  o.timeout = 200ms;
  SpanExporter exporter(o);
  std::vector<Span> spans;
  for (int i = 0; i < 10; ++i) spans.push_back(make_span("s", new_trace_id(), {}));
  exporter.submit(spans);
  EXPECT_EQ(exporter.counts().dropped, 6U);
  exporter.submit({make_span("t", new_trace_id(), {})});
  EXPECT_EQ(exporter.counts().dropped, 7U);
}

TEST(SpanExporter, AnUnreachableOrRefusingCollectorCostsOnlyCounters) {
  for (const bool refusing : {false, true}) {
    testing::FakeCollector refuser(503);
    ExporterOptions o;
    o.endpoint = refusing ? refuser.url() : closed_port_url();
    o.interval = 20ms;
    o.timeout = 500ms;
    auto exporter = std::make_unique<SpanExporter>(o);
    exporter->submit({make_span("a", new_trace_id(), {}), make_span("b", new_trace_id(), {})});
    for (int i = 0; i < 300 && exporter->counts().failed_exports == 0; ++i) std::this_thread::sleep_for(10ms);
    const ExporterCounts c = exporter->counts();
    EXPECT_EQ(c.failed_exports, 1U) << refusing;
    EXPECT_EQ(c.failed_spans, 2U) << refusing;
    EXPECT_EQ(c.exported, 0U) << refusing;
    // Stopping with spans queued and the collector failing does not hang.
    exporter->submit({make_span("c", new_trace_id(), {})});
    exporter.reset();
  }
}

}  // namespace
}  // namespace warden::trace
