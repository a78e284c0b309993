#include "core/json_writer.hpp"

#include <gtest/gtest.h>

namespace warden {
namespace {

TEST(JsonWriter, CompactNesting) {
  JsonWriter w;
  w.begin_object()
      .key("a")
      .value(1)
      .key("b")
      .begin_array()
      .value(true)
      .value(nullptr)
      .value("x")
      .end_array()
      .key("c")
      .begin_object()
      .end_object()
      .end_object();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[true,null,"x"],"c":{}})");
}

TEST(JsonWriter, IndentedLikePythonJsonDumps) {
  JsonWriter w({.indent = 2});
  w.begin_object()
      .key("a")
      .value(1)
      .key("b")
      .begin_array()
      .value(1)
      .value(2)
      .end_array()
      .key("e")
      .begin_array()
      .end_array()
      .end_object();
  EXPECT_EQ(w.str(), "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"e\": []\n}");
}

TEST(JsonWriter, NumbersMatchPythonRepr) {
  auto one = [](double v) {
    JsonWriter w;
    w.value(v);
    return w.take();
  };
  EXPECT_EQ(one(0.02), "0.02");
  EXPECT_EQ(one(1e-12), "1e-12");
  EXPECT_EQ(one(1e-05), "1e-05");
  EXPECT_EQ(one(0.1), "0.1");
  EXPECT_EQ(one(1.0), "1.0");
  EXPECT_EQ(one(-0.5), "-0.5");
  JsonWriter f;
  f.value(0.1F);
  EXPECT_EQ(f.str(), "0.1");
}

TEST(JsonWriter, EscapesStrings) {
  std::string out;
  append_json_string(out, "q\"b\\\n\x01\xC3\xA9");
  EXPECT_EQ(out, "\"q\\\"b\\\\\\n\\u0001\xC3\xA9\"");
  out.clear();
  append_json_string(out, "\xC3\xA9\xF0\x9F\x99\x82", /*ensure_ascii=*/true);
  EXPECT_EQ(out, "\"\\u00e9\\ud83d\\ude42\"");
}

// Line breaks that are not ASCII would cut a JSON line in two for line-based readers.
TEST(JsonWriter, EscapesUnicodeLineBreaks) {
  std::string out;
  append_json_string(out,
                     "a\xE2\x80\xA8"
                     "b\xE2\x80\xA9"
                     "c\xC2\x85"
                     "d\xE2\x80\xA6\xC2\xA0");
  EXPECT_EQ(out, "\"a\\u2028b\\u2029c\\u0085d\xE2\x80\xA6\xC2\xA0\"");
  out.clear();
  append_json_string(out, "\xE2\x80\xA8", /*ensure_ascii=*/true);
  EXPECT_EQ(out, "\"\\u2028\"");
}

}  // namespace
}  // namespace warden
