// W3C traceparent parsing and writing, and the OTLP endpoint's URL rules.

#include "trace/trace_context.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "trace/span_exporter.hpp"

namespace warden::trace {
namespace {

constexpr const char* kExample = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContext, ParsesTheSpecificationsExampleAndWritesItBack) {
  const auto c = parse_traceparent(kExample);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(to_hex(c->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(c->span_id), "00f067aa0ba902b7");
  EXPECT_TRUE(c->sampled());
  EXPECT_EQ(format_traceparent(*c), kExample);
  const auto unsampled = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled.has_value());
  EXPECT_FALSE(unsampled->sampled());
}

TEST(TraceContext, RefusesWhatTheSpecificationCallsInvalid) {
  for (const char* bad : {
           "",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",       // no flags
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // upper case
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero parent
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version ff
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // v00 with more
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // separator
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",    // not hex
           "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",   // later version, no dash
       }) {
    EXPECT_FALSE(parse_traceparent(bad).has_value()) << bad;
  }
  // A later version may append fields after a dash; the known ones are read.
  EXPECT_TRUE(
      parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future").has_value());
}

TEST(TraceContext, NewIdsAreNeverZeroAndDiffer) {
  const TraceId a = new_trace_id();
  const TraceId b = new_trace_id();
  EXPECT_FALSE(is_zero(a));
  EXPECT_NE(a, b);
  EXPECT_FALSE(is_zero(new_span_id()));
}

TEST(OtlpEndpoint, AppendsTheTracesPathToABaseAndKeepsAFullOne) {
  Endpoint e = parse_endpoint("http://collector:4318");
  EXPECT_EQ(e.host, "collector");
  EXPECT_EQ(e.port, "4318");
  EXPECT_EQ(e.target, "/v1/traces");
  e = parse_endpoint("http://127.0.0.1:4318/v1/traces");
  EXPECT_EQ(e.target, "/v1/traces");
  e = parse_endpoint("http://otel/base/");
  EXPECT_EQ(e.port, "80");
  EXPECT_EQ(e.target, "/base/v1/traces");
  e = parse_endpoint("http://[::1]:4318");
  EXPECT_EQ(e.host, "::1");
  EXPECT_EQ(e.port, "4318");
}

TEST(OtlpEndpoint, RefusesWhatItCannotUseSayingWhy) {
  const auto message = [](const char* url) {
    try {
      (void)parse_endpoint(url);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      return std::string(e.what());
    }
    return std::string("<accepted>");
  };
  EXPECT_NE(message("https://collector:4318").find("https is not supported"), std::string::npos);
  EXPECT_NE(message("grpc://collector:4317").find("expected http://"), std::string::npos);
  EXPECT_NE(message("http://:4318").find("no host"), std::string::npos);
  EXPECT_NE(message("http://collector:0").find("port"), std::string::npos);
  EXPECT_NE(message("http://collector:70000").find("port"), std::string::npos);
  EXPECT_NE(message("http://collector:43x8").find("port"), std::string::npos);
  EXPECT_NE(message("http://collector/v1/traces?x=1").find("path"), std::string::npos);
}

}  // namespace
}  // namespace warden::trace
