// What faults leave behind: a cut connection keeps the .incomplete blob and the next
// fetch resumes it; a checksum mismatch keeps nothing; 404 and 401 say what is wrong; a
// hostile API answer is refused before anything is written.

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/file.hpp"
#include "hub/fake_hub.hpp"
#include "hub/hub.hpp"
#include "hub/hub_fixture.hpp"

namespace warden::testing {
namespace {

namespace fs = std::filesystem;

Error fetch_error(const hub::ModelId& id, const hub::HubOptions& options) {
  try {
    hub::fetch_model(id, options);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "fetch_model did not throw";
  return Error(ErrorKind::Internal, "");
}

bool contains(const Error& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

TEST_F(HubTest, ACutConnectionKeepsThePartAndTheNextFetchResumes) {
  const FakeRepo repo = tiny_repo();
  const std::string sha = FakeHub::sha256_of(repo.files.at("model.safetensors"));
  FakeHub hub(repo);
  hub.cut_after("model.safetensors", 100000);
  const Error e = fetch_error(id(), options(hub));
  EXPECT_EQ(e.kind(), ErrorKind::Io) << e.what();
  EXPECT_TRUE(contains(e, "download of model.safetensors interrupted after 100000 of 614400 bytes"))
      << e.what();
  EXPECT_TRUE(contains(e, "run again to resume")) << e.what();
  const fs::path snapshot = repo_dir() / "snapshots" / repo.commit;
  EXPECT_FALSE(fs::exists(fs::symlink_status(snapshot / "model.safetensors")));
  EXPECT_FALSE(fs::exists(repo_dir() / "blobs" / sha));
  ASSERT_TRUE(fs::exists(repo_dir() / "blobs" / (sha + ".incomplete")));
  EXPECT_EQ(fs::file_size(repo_dir() / "blobs" / (sha + ".incomplete")), 100000U);

  hub.clear_requests();
  const auto snap = hub::fetch_model(id(), options(hub));
  bool resumed = false;
  for (const auto& r : hub.requests()) resumed = resumed || r.range == "bytes=100000-";
  EXPECT_TRUE(resumed);
  EXPECT_EQ(read_file(snap.dir / "model.safetensors"), repo.files.at("model.safetensors"));
  EXPECT_FALSE(fs::exists(repo_dir() / "blobs" / (sha + ".incomplete")));
}

TEST_F(HubTest, AServerIgnoringTheRangeMakesItStartOver) {
  const FakeRepo repo = tiny_repo();
  FakeHub hub(repo);
  hub.cut_after("config.json", 10);  // a non-LFS file: its etag is git's, its size is checked
  hub.ignore_range("config.json");
  EXPECT_EQ(fetch_error(id(), options(hub)).kind(), ErrorKind::Io);
  const auto snap = hub::fetch_model(id(), options(hub));
  EXPECT_EQ(read_file(snap.dir / "config.json"), repo.files.at("config.json"));
}

TEST_F(HubTest, APartLongerThanTheFileIsDiscarded) {
  const FakeRepo repo = tiny_repo();
  const std::string sha = FakeHub::sha256_of(repo.files.at("model.safetensors"));
  fs::create_directories(repo_dir() / "blobs");
  write_file_atomic(repo_dir() / "blobs" / (sha + ".incomplete"), std::string(700 * 1024, 'x'));
  FakeHub hub(repo);
  const auto snap = hub::fetch_model(id(), options(hub));
  EXPECT_EQ(read_file(snap.dir / "model.safetensors"), repo.files.at("model.safetensors"));
  for (const auto& r : hub.requests()) EXPECT_TRUE(r.range.empty()) << r.target;
}

TEST_F(HubTest, AChecksumMismatchKeepsNothingOfThatFile) {
  const FakeRepo repo = tiny_repo();
  const std::string sha = FakeHub::sha256_of(repo.files.at("model.safetensors"));
  FakeHub hub(repo);
  hub.corrupt("model.safetensors");
  const Error e = fetch_error(id(), options(hub));
  EXPECT_EQ(e.kind(), ErrorKind::CorruptFile) << e.what();
  EXPECT_TRUE(contains(e, "model.safetensors: sha256 mismatch (expected " + sha + ", got ")) << e.what();
  const fs::path snapshot = repo_dir() / "snapshots" / repo.commit;
  EXPECT_FALSE(fs::exists(fs::symlink_status(snapshot / "model.safetensors")));
  EXPECT_FALSE(fs::exists(repo_dir() / "blobs" / sha));
  EXPECT_FALSE(fs::exists(repo_dir() / "blobs" / (sha + ".incomplete")));
  // What was fetched before it is whole and usable.
  EXPECT_EQ(read_file(snapshot / "config.json"), repo.files.at("config.json"));
}

TEST_F(HubTest, MissingFilesAndModelsAreNotFound) {
  FakeHub hub(tiny_repo());
  hub.not_found("tokenizer.json");
  const Error file = fetch_error(id(), options(hub));
  EXPECT_EQ(file.kind(), ErrorKind::NotFound);
  EXPECT_TRUE(contains(file, "tokenizer.json of model acme/tiny-bert")) << file.what();
  const Error model = fetch_error(id("acme/nothing-here"), options(hub));
  EXPECT_EQ(model.kind(), ErrorKind::NotFound);
  EXPECT_TRUE(contains(model, "model acme/nothing-here (revision main) not found on " + hub.endpoint()))
      << model.what();
  const Error revision = fetch_error(id("acme/tiny-bert@v9"), options(hub));
  EXPECT_EQ(revision.kind(), ErrorKind::NotFound);
}

TEST_F(HubTest, AGatedRepoNeedsTheToken) {
  FakeHub hub(tiny_repo());
  hub.require_token("s3cret");
  auto o = options(hub);
  const Error none = fetch_error(id(), o);
  EXPECT_EQ(none.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(none, "HF_TOKEN")) << none.what();
  o.token = "wrong";
  const Error wrong = fetch_error(id(), o);
  EXPECT_TRUE(contains(wrong, "refused the token")) << wrong.what();
  o.token = "s3cret";
  const auto snap = hub::fetch_model(id(), o);
  EXPECT_EQ(snap.files.size(), 4U);
}

TEST_F(HubTest, AHostileApiAnswerIsRefused) {
  const std::string good_sha = "0123456789abcdef0123456789abcdef01234567";
  for (const std::string& body : std::vector<std::string>{
           R"({"sha":"not-a-commit","siblings":[{"rfilename":"config.json"}]})",
           R"({"sha":"../../../../tmp/x0123456789abcdef0123456789","siblings":[]})",
           R"({"sha":")" + good_sha + R"(","siblings":[{"rfilename":"../../etc/passwd"}]})",
           R"({"sha":")" + good_sha + R"(","siblings":[{"rfilename":"/etc/passwd"}]})",
           R"({"sha":")" + good_sha + R"(","siblings":[{"rfilename":"a\\b.safetensors"}]})",
           R"({"sha":")" + good_sha + R"(","siblings":[{"rfilename":"x\u0000.safetensors"}]})",
           R"({"sha":")" + good_sha + R"(","siblings":[{"rfilename":42}]})", std::string("[1,2"),
           std::string(R"({"siblings":[]})")}) {
    FakeHub hub(tiny_repo());
    hub.api_body(body);
    const Error e = fetch_error(id(), options(hub));
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile) << body << ": " << e.what();
    EXPECT_EQ(hub.content_gets(), 0) << body;
  }
  EXPECT_FALSE(fs::exists(repo_dir() / "snapshots"));
}

}  // namespace
}  // namespace warden::testing
