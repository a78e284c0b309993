// The warden-fixture executable: its command line, exit codes and output folder.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "core/file.hpp"
#include "model/families/registry.hpp"
#include "model/formats/weights.hpp"
#include "model/temp_dir.hpp"

namespace warden {
namespace {

// Runs warden-fixture with `args`; returns its exit code and (in `err`) its stderr.
int run_fixture_tool(const testing::TempDir& tmp, const std::string& args, std::string& err) {
  const auto err_path = tmp / "stderr";
  const std::string cmd =
      std::string(WARDEN_BINARY_DIR) + "/bin/warden-fixture " + args + " >/dev/null 2>" + err_path.string();
  const int status = std::system(cmd.c_str());
  err = read_file(err_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(FixtureTool, WritesAFolderTheReadersLoad) {
  const testing::TempDir tmp;
  std::string err;
  const auto out = tmp / "m";
  ASSERT_EQ(run_fixture_tool(
                tmp, "--arch distilbert --head classifier --preset tiny --seed 4 --out " + out.string(), err),
            0)
      << err;
  const model::metadata::ModelConfig config = model::families::read_model_config(out / "config.json");
  EXPECT_EQ(config.architectures.front(), "DistilBertForSequenceClassification");
  EXPECT_EQ(config.num_labels(), 3U);
  EXPECT_NO_THROW((void)model::formats::ModelWeights::open_dir(out).require("classifier.weight", {3, 64}));
}

TEST(FixtureTool, BadOptionsAreUsageErrors) {
  const testing::TempDir tmp;
  std::string err;
  EXPECT_EQ(run_fixture_tool(tmp, "--arch gpt --out " + (tmp / "x").string(), err), 2);
  EXPECT_NE(err.find("unknown architecture 'gpt'"), std::string::npos) << err;
  EXPECT_EQ(run_fixture_tool(tmp, "--preset tiny", err), 2);  // --out is required
  EXPECT_EQ(run_fixture_tool(tmp, "--pooling median --out " + (tmp / "x").string(), err), 2);
  EXPECT_EQ(run_fixture_tool(tmp, "--arch bert --preset xlmr-base --out " + (tmp / "x").string(), err), 2);
  EXPECT_NE(err.find("xlmr-base"), std::string::npos) << err;
}

}  // namespace
}  // namespace warden
