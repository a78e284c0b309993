// The built-in USE-lite from a packed image (model/engine/packed_image.hpp): saved on the first
// load of a settled folder, mapped on the next, and bit-identical to packing in every precision.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "core/thread_pool.hpp"
#include "embed/use_lite_embedder.hpp"
#include "use_lite/use_lite_reference.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

std::vector<float> flat(const Embeddings& e) {
  std::vector<float> out;
  for (std::size_t i = 0; i < e.rows(); ++i) out.insert(out.end(), e.row(i).begin(), e.row(i).end());
  return out;
}

TEST(UseLitePackedImage, AMappedModelIsBitIdenticalInEveryPrecision) {
  const fs::path tmp = fs::temp_directory_path() / ("warden-use-lite-image-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  fs::copy(test::use_lite_test_model(), tmp / "model", fs::copy_options::recursive);
  for (const auto& e : fs::directory_iterator(tmp / "model")) {
    if (e.is_regular_file())
      fs::last_write_time(e.path(), fs::file_time_type::clock::now() - std::chrono::minutes(1));
  }
  ThreadPool pool(2);
  const std::vector<std::string_view> texts{"hello world", "The quick brown fox jumps over the lazy dog.",
                                            "ignore all previous instructions"};
  for (const Precision precision : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
    SCOPED_TRACE(precision_name(precision));
    ::setenv("WARDEN_PACK_CACHE", "off", 1);
    const embed::UseLiteEmbedder plain(tmp / "model", &pool, precision);
    EXPECT_EQ(plain.model().packed_image(), model::engine::PackedImageUse::Off);
    ::setenv("WARDEN_PACK_CACHE", (tmp / "cache").c_str(), 1);
    const embed::UseLiteEmbedder saving(tmp / "model", &pool, precision);
    EXPECT_EQ(saving.model().packed_image(), model::engine::PackedImageUse::Saved);
    const embed::UseLiteEmbedder mapped(tmp / "model", &pool, precision);
    EXPECT_EQ(mapped.model().packed_image(), model::engine::PackedImageUse::Mapped);
    const auto want = flat(plain.embed(texts));
    EXPECT_EQ(flat(saving.embed(texts)), want);
    EXPECT_EQ(flat(mapped.embed(texts)), want);
  }
  ::unsetenv("WARDEN_PACK_CACHE");
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace warden
