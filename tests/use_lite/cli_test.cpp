// `warden embed` with use-lite as the default, and `warden convert-use`'s errors.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdlib>

#include "cli/run_warden.hpp"
#include "use_lite/use_lite_reference.hpp"

namespace warden {
namespace {

TEST(UseLiteCli, TheDefaultIsUseLiteWhenItsFolderExists) {
  const auto dir = test::use_lite_test_model();
  ::setenv("WARDEN_USE_LITE_DIR", dir.c_str(), 1);
  const auto r = testing::run_warden("embed --threads 2 'How old are you?'");
  ::unsetenv("WARDEN_USE_LITE_DIR");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no fallback warning
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(r.out);
  const simdjson::dom::array v = doc["embedding"].get_array();
  ASSERT_EQ(v.size(), 512U);
  const auto cases = test::load_use_lite_cases("use-lite-reference.jsonl");
  const auto it =
      std::find_if(cases.begin(), cases.end(), [](const auto& c) { return c.text == "How old are you?"; });
  ASSERT_NE(it, cases.end());
  std::size_t i = 0;
  for (const auto x : v) {
    EXPECT_NEAR(double(x), it->embedding[i], 1e-5) << i;
    ++i;
  }
}

TEST(UseLiteCli, ConvertUseWithoutThePackageSaysHowToGetIt) {
  const auto r = testing::run_warden("convert-use --package /nonexistent/dist --out /tmp/never-written");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("scripts/fetch-use-lite"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists("/tmp/never-written"));
}

}  // namespace
}  // namespace warden
