// `warden quantize` from the command line: the saved folder embeds exactly like the original
// run in the same precision, and bad arguments exit 2 with one line.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli/run_warden.hpp"

namespace warden {
namespace {

TEST(QuantizeCommand, SavedFolderEmbedsLikeConvertingAtLoad) {
  const std::string base = "/tmp/warden-cli-quantize-" + std::to_string(::getpid());
  const std::string dir = base + "/original";
  std::filesystem::remove_all(base);
  ASSERT_EQ(
      std::system((std::string(WARDEN_BINARY_DIR) +
                   "/bin/warden-fixture --arch bert --preset tiny --seed 4 --out " + dir + " >/dev/null")
                      .c_str()),
      0);
  const auto q = testing::run_warden("quantize " + dir + " " + base + "/int8");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out, base + "/int8\n");
  EXPECT_NE(q.err.find("in int8"), std::string::npos) << q.err;

  const auto a =
      testing::run_warden("embed --model-dir " + dir + " --dtype int8 --threads 2 'hello world' 'a b'");
  const auto b =
      testing::run_warden("embed --model-dir " + base + "/int8 --dtype int8 --threads 2 'hello world' 'a b'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);

  const auto again = testing::run_warden("quantize " + dir + " " + base + "/int8");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("not an empty folder"), std::string::npos) << again.err;
  const auto f32 = testing::run_warden("quantize " + dir + " " + base + "/f32 --dtype float32");
  EXPECT_EQ(f32.exit_code, 2);
  EXPECT_NE(f32.err.find("int8 or bfloat16"), std::string::npos) << f32.err;
  const auto missing = testing::run_warden("quantize /nonexistent/folder " + base + "/x");
  EXPECT_EQ(missing.exit_code, 2);
  const auto bad_dtype = testing::run_warden("embed --model-dir " + dir + " --dtype fp64 hi");
  EXPECT_EQ(bad_dtype.exit_code, 2);
  EXPECT_NE(bad_dtype.err.find("--dtype"), std::string::npos) << bad_dtype.err;
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace warden
