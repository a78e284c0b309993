// fetch_model against the fake hub: the cache layout huggingface_hub uses, reuse of what
// is cached (ours or Python's), offline mode, and what is and is not downloaded.

#include <gtest/gtest.h>

#include <chrono>

#include <atomic>
#include <filesystem>
#include <thread>

#include "core/error.hpp"
#include "core/file.hpp"
#include "hub/fake_hub.hpp"
#include "hub/hub.hpp"
#include "hub/hub_fixture.hpp"

namespace warden::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(HubTest, FreshDownloadCreatesTheHuggingfaceHubLayout) {
  const FakeRepo repo = tiny_repo();
  FakeHub hub(repo);
  std::vector<hub::Progress> seen;
  const auto snap = hub::fetch_model(id(), options(hub), [&](const hub::Progress& p) { seen.push_back(p); });

  const fs::path snapshot = repo_dir() / "snapshots" / repo.commit;
  EXPECT_EQ(snap.dir, snapshot);
  EXPECT_EQ(snap.commit, repo.commit);
  EXPECT_EQ(snap.files, (std::vector<std::string>{"1_Pooling/config.json", "config.json", "model.safetensors",
                                                  "tokenizer.json"}));
  EXPECT_EQ(read_file(repo_dir() / "refs" / "main"), repo.commit);

  const std::string sha = FakeHub::sha256_of(repo.files.at("model.safetensors"));
  ASSERT_TRUE(fs::is_symlink(snapshot / "model.safetensors"));
  EXPECT_EQ(fs::read_symlink(snapshot / "model.safetensors"), fs::path("../../blobs/" + sha));
  EXPECT_TRUE(fs::is_regular_file(repo_dir() / "blobs" / sha));
  ASSERT_TRUE(fs::is_symlink(snapshot / "1_Pooling/config.json"));
  EXPECT_TRUE(fs::read_symlink(snapshot / "1_Pooling/config.json").string().starts_with("../../../blobs/"));
  ASSERT_TRUE(fs::is_symlink(snapshot / "config.json"));
  const auto config_blob = fs::read_symlink(snapshot / "config.json").filename().string();
  EXPECT_EQ(config_blob.size(), 40U);  // the git etag of a non-LFS file
  for (const auto& f : snap.files) EXPECT_EQ(read_file(snapshot / f), repo.files.at(f)) << f;

  // Nothing Warden does not read, and nothing half-written left behind.
  EXPECT_FALSE(fs::exists(snapshot / "pytorch_model.bin"));
  EXPECT_FALSE(fs::exists(snapshot / "onnx"));
  for (const auto& r : hub.requests()) {
    EXPECT_EQ(r.target.find("pytorch_model.bin"), std::string::npos);
    EXPECT_EQ(r.target.find("onnx"), std::string::npos);
  }
  for (const auto& e : fs::directory_iterator(repo_dir() / "blobs")) {
    EXPECT_FALSE(e.path().string().ends_with(".incomplete")) << e.path();
  }
  // The weights' progress ends at their full size.
  std::uint64_t last = 0;
  for (const auto& p : seen) {
    if (p.file == "model.safetensors") last = p.done;
  }
  EXPECT_EQ(last, repo.files.at("model.safetensors").size());
}

TEST_F(HubTest, SecondFetchDownloadsNothing) {
  FakeHub hub(tiny_repo());
  const auto first = hub::fetch_model(id(), options(hub));
  hub.clear_requests();
  std::vector<hub::Progress> seen;
  const auto second =
      hub::fetch_model(id(), options(hub), [&](const hub::Progress& p) { seen.push_back(p); });
  EXPECT_EQ(second.dir, first.dir);
  EXPECT_EQ(hub.content_gets(), 0);
  ASSERT_EQ(seen.size(), 4U);
  for (const auto& p : seen) EXPECT_TRUE(p.cached) << p.file;
}

TEST_F(HubTest, ReusesACacheWrittenByPython) {
  const FakeRepo repo = tiny_repo();
  // The layout huggingface_hub writes, made by hand (its etags differ from ours: any name will do).
  const fs::path snapshot = repo_dir() / "snapshots" / repo.commit;
  fs::create_directories(repo_dir() / "blobs");
  fs::create_directories(snapshot / "1_Pooling");
  fs::create_directories(repo_dir() / "refs");
  write_file_atomic(repo_dir() / "refs" / "main", repo.commit);
  int n = 0;
  for (const char* f : {"config.json", "tokenizer.json", "model.safetensors", "1_Pooling/config.json"}) {
    const std::string blob = "pythonblob" + std::to_string(n++);
    write_file_atomic(repo_dir() / "blobs" / blob, repo.files.at(f));
    const std::string up = std::string(f).find('/') != std::string::npos ? "../../../" : "../../";
    fs::create_symlink(up + "blobs/" + blob, snapshot / f);
  }
  FakeHub hub(repo);
  const auto snap = hub::fetch_model(id(), options(hub));
  EXPECT_EQ(snap.dir, snapshot);
  EXPECT_EQ(hub.content_gets(), 0);
  EXPECT_EQ(read_file(snap.dir / "model.safetensors"), repo.files.at("model.safetensors"));
}

TEST_F(HubTest, AnUnreachableHubFallsBackOnTheCache) {
  const FakeRepo repo = tiny_repo();
  hub::HubOptions gone;
  gone.endpoint = "http://127.0.0.1:9";  // nothing listens: the connection is refused
  gone.cache_dir = cache_;
  gone.connect_timeout = std::chrono::milliseconds(2000);
  // Not cached: the network error is what is reported.
  try {
    hub::fetch_model(id(), gone);
    FAIL() << "expected Io";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find("cannot reach"), std::string::npos) << e.what();
  }
  std::string first_dir;
  {
    FakeHub hub(repo);
    const auto s = hub::fetch_model(id(), options(hub));
    EXPECT_TRUE(s.offline_reason.empty());
    first_dir = s.dir.string();
  }
  // Cached: the cache answers, and says why.
  const auto s = hub::fetch_model(id(), gone);
  EXPECT_EQ(s.dir.string(), first_dir);
  EXPECT_EQ(s.commit, repo.commit);
  EXPECT_NE(s.offline_reason.find("cannot reach"), std::string::npos) << s.offline_reason;
}

TEST_F(HubTest, OfflineUsesTheCacheAndSaysSoWhenTheModelIsAbsent) {
  const FakeRepo repo = tiny_repo();
  hub::HubOptions offline;
  offline.endpoint = "http://127.0.0.1:9";  // never asked
  offline.cache_dir = cache_;
  offline.offline = true;
  try {
    hub::fetch_model(id(), offline);
    FAIL() << "expected NotFound";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
    EXPECT_NE(std::string(e.what()).find("HF_HUB_OFFLINE=1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(cache_.string()), std::string::npos) << e.what();
  }
  {
    FakeHub hub(repo);
    hub::fetch_model(id(), options(hub));
  }
  const auto by_branch = hub::fetch_model(id(), offline);
  EXPECT_EQ(by_branch.commit, repo.commit);
  EXPECT_EQ(by_branch.files.size(), 4U);
  const auto by_commit = hub::fetch_model(id("acme/tiny-bert@" + repo.commit), offline);
  EXPECT_EQ(by_commit.dir, by_branch.dir);
  EXPECT_THROW(hub::fetch_model(id("acme/tiny-bert@v2"), offline), Error);
}

TEST_F(HubTest, ConcurrentPullsDownloadEachBlobOnce) {
  const FakeRepo repo = tiny_repo();
  FakeHub hub(repo);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] {
      try {
        const auto snap = hub::fetch_model(id(), options(hub));
        if (read_file(snap.dir / "model.safetensors") == repo.files.at("model.safetensors")) ++ok;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 3);
  int weight_gets = 0;
  for (const auto& r : hub.requests()) weight_gets += r.method == "GET" && r.target.starts_with("/cdn/");
  EXPECT_EQ(weight_gets, 1);  // the flock made the others wait, then find the blob
}

TEST_F(HubTest, ShardedWeightsAreAllFetched) {
  FakeRepo repo = tiny_repo();
  repo.files.erase("model.safetensors");
  repo.files["model.safetensors.index.json"] = R"({"weight_map":{}})";
  repo.files["model-00001-of-00002.safetensors"] = pseudo_random_bytes(5000, 7);
  repo.files["model-00002-of-00002.safetensors"] = pseudo_random_bytes(3000, 8);
  repo.lfs = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "pytorch_model.bin"};
  FakeHub hub(repo);
  const auto snap = hub::fetch_model(id(), options(hub));
  for (const char* f : {"model.safetensors.index.json", "model-00001-of-00002.safetensors",
                        "model-00002-of-00002.safetensors"}) {
    EXPECT_EQ(read_file(snap.dir / f), repo.files.at(f)) << f;
  }
}

TEST_F(HubTest, ARepoWithoutSafetensorsGivesItsPytorchWeights) {
  FakeRepo repo = tiny_repo();
  repo.files.erase("model.safetensors");
  repo.lfs.erase("model.safetensors");
  repo.files["sparse_linear.pt"] = pseudo_random_bytes(900, 4);
  repo.lfs.insert("sparse_linear.pt");
  FakeHub hub(repo);
  const auto snap = hub::fetch_model(id(), options(hub));
  EXPECT_EQ(snap.files, (std::vector<std::string>{"1_Pooling/config.json", "config.json", "pytorch_model.bin",
                                                  "sparse_linear.pt", "tokenizer.json"}));
  EXPECT_EQ(read_file(snap.dir / "pytorch_model.bin"), repo.files.at("pytorch_model.bin"));
  EXPECT_FALSE(std::filesystem::exists(snap.dir / "onnx"));
}

TEST_F(HubTest, ARepoWithoutWeightsWardenReadsIsUnsupported) {
  FakeRepo repo = tiny_repo();
  repo.files.erase("model.safetensors");
  repo.files.erase("pytorch_model.bin");
  repo.files.erase("onnx/model.onnx");
  FakeHub hub(repo);
  try {
    hub::fetch_model(id(), options(hub));
    FAIL() << "expected Unsupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("no weights Warden reads"), std::string::npos) << e.what();
  }
  EXPECT_EQ(hub.content_gets(), 0);
}

// A repo whose weights are an ONNX graph (transformers.js's layout) is fetched with it; asked
// for safetensors, it has none.
TEST_F(HubTest, ARepoWithOnlyAnOnnxGraphIsFetchedWithIt) {
  FakeRepo repo = tiny_repo();
  for (const char* gone : {"model.safetensors", "pytorch_model.bin"}) {
    repo.files.erase(gone);
    repo.lfs.erase(gone);
  }
  FakeHub hub(repo);
  const hub::Snapshot s = hub::fetch_model(id(), options(hub));
  EXPECT_TRUE(std::filesystem::is_regular_file(s.dir / "onnx" / "model.onnx"));
  EXPECT_EQ(read_file(s.dir / "onnx" / "model.onnx"), repo.files.at("onnx/model.onnx"));
  hub::HubOptions safetensors = options(hub);
  safetensors.format = hub::WeightFormat::Safetensors;
  safetensors.cache_dir /= "other";
  try {
    hub::fetch_model(id(), safetensors);
    FAIL() << "expected Unsupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("has no safetensors or pytorch_model.bin weights"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace warden::testing
