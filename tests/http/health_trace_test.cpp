// GET /health as readiness and GET /live as liveness, and request traces: the W3C
// traceparent continued and echoed, and the spans a stand-in collector receives.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <string>
#include <vector>

#include "embed/hashing_embedder.hpp"
#include "http/service.hpp"
#include "serving/metrics.hpp"
#include "serving/readiness.hpp"
#include "support/fake_collector.hpp"
#include "support/handler_client.hpp"
#include "trace/span_exporter.hpp"

namespace warden::http {
namespace {

using namespace std::chrono_literals;

testing::HandlerAnswer call(Handler& h, std::string method, std::string target, std::string body = {},
                            std::string traceparent = {}) {
  auto f = testing::send_to(h, std::move(method), std::move(target), std::move(body), {}, nullptr, {},
                            std::move(traceparent));
  EXPECT_EQ(f.wait_for(20s), std::future_status::ready);
  return f.get();
}

TEST(Health, AnswersNotReadyWithTheReasonUntilReadyWhileLiveAnswers) {
  embed::HashingEmbedder embedder;
  serving::MetricsRegistry metrics;
  serving::Readiness readiness("loading 2 model(s)");
  ServiceOptions o;
  o.router.readiness = &readiness;
  o.router.api_key = "secret";  // probes need no key
  Service service(embedder, o, &metrics);
  auto r = call(service.handler(), "GET", "/health");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find(R"x("error":"starting: loading 2 model(s)")x"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("error_type":"Unhealthy")"), std::string::npos) << r.body;
  EXPECT_EQ(r.header("Retry-After"), "1");
  EXPECT_EQ(call(service.handler(), "GET", "/live").status, 200);
  readiness.ready();
  EXPECT_EQ(call(service.handler(), "GET", "/health").status, 200);
  readiness.failed("self-check of model m failed: its vector is not finite");
  r = call(service.handler(), "GET", "/health");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("its vector is not finite"), std::string::npos) << r.body;
  EXPECT_EQ(call(service.handler(), "GET", "/live").status, 200);
}

struct ReceivedSpan {
  std::string trace_id, span_id, parent, name;
  std::uint64_t start = 0, end = 0;
};

std::vector<ReceivedSpan> spans_of(const std::vector<testing::FakeCollector::Post>& posts) {
  std::vector<ReceivedSpan> out;
  simdjson::dom::parser parser;
  for (const auto& post : posts) {
    const simdjson::dom::element doc = parser.parse(post.body);
    for (const simdjson::dom::element rs : doc["resourceSpans"].get_array()) {
      for (const simdjson::dom::element ss : rs["scopeSpans"].get_array()) {
        for (const simdjson::dom::element s : ss["spans"].get_array()) {
          ReceivedSpan r;
          r.trace_id = std::string(std::string_view(s["traceId"]));
          r.span_id = std::string(std::string_view(s["spanId"]));
          std::string_view parent;
          if (s["parentSpanId"].get(parent) == simdjson::SUCCESS) r.parent = std::string(parent);
          r.name = std::string(std::string_view(s["name"]));
          r.start = std::stoull(std::string(std::string_view(s["startTimeUnixNano"])));
          r.end = std::stoull(std::string(std::string_view(s["endTimeUnixNano"])));
          out.push_back(std::move(r));
        }
      }
    }
  }
  return out;
}

TEST(Traces, ContinueTheCallersTraceEchoItAndExportTheStages) {
  testing::FakeCollector collector;
  trace::ExporterOptions t;
  t.endpoint = collector.url();
  t.interval = 20ms;
  trace::SpanExporter exporter(t);
  embed::HashingEmbedder embedder;
  serving::MetricsRegistry metrics;
  ServiceOptions o;
  o.router.tracer = &exporter;
  Service service(embedder, o, &metrics);

  const std::string caller_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const std::string caller_span = "00f067aa0ba902b7";
  auto r = call(service.handler(), "POST", "/embed", R"({"inputs": ["a b c", "d e"]})",
                "00-" + caller_trace + "-" + caller_span + "-01");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string echoed = r.header("traceparent");
  ASSERT_EQ(echoed.size(), 55U) << echoed;
  EXPECT_EQ(echoed.substr(0, 36), "00-" + caller_trace + "-");
  EXPECT_EQ(echoed.substr(52), "-01");
  const std::string server_span = echoed.substr(36, 16);
  EXPECT_NE(server_span, caller_span);

  // No traceparent: a new trace, whose server span is a root.
  r = call(service.handler(), "POST", "/embed", R"({"inputs": "fresh"})");
  const std::string fresh = r.header("traceparent");
  ASSERT_EQ(fresh.size(), 55U) << fresh;
  EXPECT_NE(fresh.substr(3, 32), caller_trace);
  // Not sampled by the caller: echoed, never exported. A malformed one starts a new trace.
  r = call(service.handler(), "POST", "/embed", R"({"inputs": "quiet"})",
           "00-11111111111111111111111111111111-2222222222222222-00");
  EXPECT_EQ(r.header("traceparent").substr(0, 36), "00-11111111111111111111111111111111-");
  r = call(service.handler(), "POST", "/embed", R"({"inputs": "x"})", "00-bad");
  EXPECT_EQ(r.header("traceparent").size(), 55U);
  // Probes are not traced.
  EXPECT_EQ(call(service.handler(), "GET", "/health").header("traceparent"), "<absent>");

  const auto posts = collector.wait_for([](const auto& p) { return spans_of(p).size() >= 15; });
  const std::vector<ReceivedSpan> spans = spans_of(posts);
  ASSERT_EQ(spans.size(), 15U);  // three sampled /embed requests, five spans each
  for (const auto& p : posts) EXPECT_EQ(p.target, "/v1/traces");
  std::map<std::string, ReceivedSpan> of_caller;  // the first request's, by name
  for (const ReceivedSpan& s : spans) {
    EXPECT_NE(s.trace_id, "11111111111111111111111111111111") << "an unsampled trace was exported";
    EXPECT_LE(s.start, s.end) << s.name;
    if (s.trace_id == caller_trace) of_caller[s.name] = s;
  }
  ASSERT_EQ(of_caller.size(), 5U);
  const ReceivedSpan& root = of_caller["POST /embed"];
  EXPECT_EQ(root.span_id, server_span);
  EXPECT_EQ(root.parent, caller_span);
  for (const char* stage : {"tokenize", "queue", "inference", "response"}) {
    const ReceivedSpan& s = of_caller[stage];
    EXPECT_EQ(s.parent, server_span) << stage;
    EXPECT_GE(s.start, root.start) << stage;
    EXPECT_LE(s.end, root.end) << stage;
  }
  // The stages in order: tokenize, queue, inference, response.
  EXPECT_LE(of_caller["tokenize"].end, of_caller["queue"].start + 1);
  EXPECT_LE(of_caller["queue"].end, of_caller["inference"].start + 1);
  EXPECT_LE(of_caller["inference"].end, of_caller["response"].start + 1);
  for (const ReceivedSpan& s : spans) {
    if (s.trace_id == fresh.substr(3, 32) && s.name == "POST /embed") {
      EXPECT_EQ(s.parent, "") << "a new trace's server span is a root";
    }
  }
}

}  // namespace
}  // namespace warden::http
