// `warden pull` end to end: the real executable against the fake hub.

#include <gtest/gtest.h>

#include "cli/run_warden.hpp"
#include "hub/fake_hub.hpp"
#include "hub/hub_fixture.hpp"

namespace warden::testing {
namespace {

TEST_F(HubTest, PullPrintsTheSnapshotFolder) {
  const FakeRepo repo = tiny_repo();
  FakeHub hub(repo);
  const auto r =
      run_warden("pull acme/tiny-bert --endpoint " + hub.endpoint() + " --cache-dir " + cache_.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, (repo_dir() / "snapshots" / repo.commit).string() + "\n");
  EXPECT_NE(r.err.find("model.safetensors"), std::string::npos) << r.err;

  const auto offline = run_warden("pull acme/tiny-bert --offline --cache-dir " + cache_.string());
  EXPECT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_EQ(offline.out, r.out);
}

TEST_F(HubTest, PullRefusesABadIdWithUsageExit) {
  const auto r = run_warden("pull ../x --cache-dir " + cache_.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ORG/NAME"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace warden::testing
