#pragma once
// What the fetch tests share: a small repo (an LFS weights file large enough to be cut
// mid-way, plus files Warden must not take), a fresh cache folder per test, and options
// pointing at the fake hub.

#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "hub/fake_hub.hpp"
#include "hub/hub.hpp"

namespace warden::testing {

inline std::string pseudo_random_bytes(std::size_t n, unsigned seed) {
  std::string s(n, '\0');
  unsigned x = seed;
  for (auto& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

inline FakeRepo tiny_repo() {
  FakeRepo r;
  r.files["config.json"] = R"({"architectures":["BertModel"],"hidden_size":8})";
  r.files["tokenizer.json"] = R"({"version":"1.0"})";
  r.files["1_Pooling/config.json"] = R"({"pooling_mode_mean_tokens":true})";
  r.files["model.safetensors"] = pseudo_random_bytes(600 * 1024, 1);
  r.files["pytorch_model.bin"] = pseudo_random_bytes(1000, 2);
  r.files["onnx/model.onnx"] = pseudo_random_bytes(1000, 3);
  r.files["README.md"] = "# tiny\n";
  r.lfs = {"model.safetensors", "pytorch_model.bin", "onnx/model.onnx"};
  return r;
}

class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The fake hub is on 127.0.0.1: no proxy, and none of the caller's hub settings (the
    // CLI tests' warden inherits this environment).
    ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
    for (const char* v :
         {"HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_CACHE"}) {
      ::unsetenv(v);
    }
    static std::atomic<int> counter{0};
    cache_ = std::filesystem::temp_directory_path() /
             ("warden-hub-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(cache_);
    std::filesystem::create_directories(cache_);
  }
  void TearDown() override { std::filesystem::remove_all(cache_); }

  [[nodiscard]] hub::HubOptions options(const FakeHub& hub) const {
    hub::HubOptions o;
    o.endpoint = hub.endpoint();
    o.cache_dir = cache_;
    o.connect_timeout = std::chrono::milliseconds(2000);
    o.stall_timeout = std::chrono::milliseconds(3000);
    return o;
  }
  [[nodiscard]] std::filesystem::path repo_dir() const { return cache_ / "models--acme--tiny-bert"; }

  static hub::ModelId id(const std::string& text = "acme/tiny-bert") { return *hub::ModelId::parse(text); }

  std::filesystem::path cache_;
};

}  // namespace warden::testing
