#include "core/utf8.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace warden {
namespace {

TEST(Utf8, AcceptsValidText) {
  EXPECT_FALSE(utf8::find_invalid("").has_value());
  EXPECT_FALSE(utf8::find_invalid("plain ascii that is longer than eight bytes").has_value());
  EXPECT_FALSE(utf8::find_invalid("caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x99\x82").has_value());
  EXPECT_FALSE(utf8::find_invalid("\xF4\x8F\xBF\xBF").has_value());  // U+10FFFF
}

TEST(Utf8, RejectsInvalidSequencesWithTheirOffset) {
  EXPECT_EQ(utf8::find_invalid("ab\x80"), 2U);            // stray continuation
  EXPECT_EQ(utf8::find_invalid("\xC0\xAF"), 0U);          // overlong '/'
  EXPECT_EQ(utf8::find_invalid("x\xE0\x80\xAF"), 1U);     // overlong 3-byte
  EXPECT_EQ(utf8::find_invalid("\xED\xA0\x80"), 0U);      // lone high surrogate
  EXPECT_EQ(utf8::find_invalid("\xED\xBF\xBF"), 0U);      // lone low surrogate
  EXPECT_EQ(utf8::find_invalid("\xF4\x90\x80\x80"), 0U);  // above U+10FFFF
  EXPECT_EQ(utf8::find_invalid("\xF5\x80\x80\x80"), 0U);
  EXPECT_EQ(utf8::find_invalid("abcdefgh\xE4\xB8"), 8U);  // truncated at the end
  EXPECT_EQ(utf8::find_invalid(std::string_view("\xFF", 1)), 0U);
}

TEST(Utf8, RequireValidThrowsInvalidInput) {
  try {
    utf8::require_valid("ok\xFF", "input 3");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("input 3"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("offset 2"), std::string::npos);
  }
}

TEST(Utf8, DecodeAndAppendRoundTrip) {
  const std::string text = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x99\x82";
  const std::u32string cps = utf8::decode(text);
  ASSERT_EQ(cps, (std::u32string{U'a', U'\u00E9', U'\u4E2D', U'\U0001F642'}));
  std::string back;
  for (const char32_t cp : cps) utf8::append(back, cp);
  EXPECT_EQ(back, text);
}

}  // namespace
}  // namespace warden
