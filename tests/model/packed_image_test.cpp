// Packed weight images (model/engine/packed_image.hpp): a model loaded from its image is
// bit-identical to one packed from its weights, in every precision and ISA; an image is
// never used for weights that changed, another ISA or a damaged file; none is saved for
// weights modified moments ago; the folder stays under its size limit.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/families/family.hpp"
#include "model/quantize.hpp"
#include "model/temp_dir.hpp"

namespace warden::model {
namespace {

namespace fs = std::filesystem;
using fixtures::Head;

// Points WARDEN_PACK_CACHE at `dir` for the test's lifetime.
class CacheDir {
 public:
  explicit CacheDir(const fs::path& dir) { ::setenv("WARDEN_PACK_CACHE", dir.c_str(), 1); }
  CacheDir(const CacheDir&) = delete;
  CacheDir& operator=(const CacheDir&) = delete;
  ~CacheDir() { ::unsetenv("WARDEN_PACK_CACHE"); }
};

// A fixture whose weights were last modified a minute ago (older than the racy window).
fs::path write_settled(const testing::TempDir& tmp, const std::string& name, std::string_view arch, Head head,
                       std::uint64_t seed = 3) {
  fixtures::FixtureOptions options;
  options.arch = arch;
  options.head = head;
  options.seed = seed;
  const auto dir = tmp / name;
  fixtures::write_fixture(options, dir);
  fs::last_write_time(dir / "model.safetensors", fs::file_time_type::clock::now() - std::chrono::minutes(1));
  return dir;
}

// Hidden states and logits of a fixed batch.
std::vector<float> outputs(const EncoderModel& m, ThreadPool* pool) {
  engine::TokenBatch batch;
  const bool roberta = m.family->name == "roberta" || m.family->name == "deberta-v2";
  for (const std::vector<std::uint32_t>& ids :
       {std::vector<std::uint32_t>{101, 2000, 3000, 4000, 102}, std::vector<std::uint32_t>{101, 7592, 102}}) {
    std::vector<std::uint32_t> seq = ids;
    if (roberta) {
      for (auto& id : seq) id = id % 8000;
    }
    batch.add(seq);
  }
  m.encoder.validate(batch);
  engine::EncoderWorkspace ws;
  const auto hidden = m.encoder.forward(batch, ws, pool);
  std::vector<float> out(hidden.begin(), hidden.end());
  if (m.head) {
    std::vector<float> logits(2 * m.head->labels());
    m.head->logits(hidden, m.encoder.dims().hidden, batch.offsets, logits, pool);
    out.insert(out.end(), logits.begin(), logits.end());
  }
  return out;
}

std::vector<fs::path> images(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".wpk") out.push_back(e.path());
  }
  return out;
}

// Loads `dir` without images, then twice with them (saving, then mapping), and checks all
// three give the same bits.
void expect_mapped_equals_packed(const fs::path& dir, const fs::path& cache, Isa isa, Precision precision,
                                 ThreadPool* pool) {
  ::setenv("WARDEN_PACK_CACHE", "off", 1);
  const auto plain = load_encoder_model(dir, pool, isa, precision);
  EXPECT_EQ(plain->encoder.packed_image(), engine::PackedImageUse::Off);
  ::setenv("WARDEN_PACK_CACHE", cache.c_str(), 1);
  const auto saving = load_encoder_model(dir, pool, isa, precision);
  EXPECT_EQ(saving->encoder.packed_image(), engine::PackedImageUse::Saved)
      << saving->encoder.packed_image_note();
  const auto mapped = load_encoder_model(dir, pool, isa, precision);
  EXPECT_EQ(mapped->encoder.packed_image(), engine::PackedImageUse::Mapped);
  const auto want = outputs(*plain, pool);
  EXPECT_EQ(outputs(*saving, pool), want);
  EXPECT_EQ(outputs(*mapped, pool), want);
  EXPECT_EQ(mapped->encoder.weight_bytes(), plain->encoder.weight_bytes());
}

TEST(PackedImage, AMappedModelIsBitIdenticalInEveryPrecisionArchitectureAndIsa) {
  const testing::TempDir tmp;
  const CacheDir cache_env(tmp / "cache");
  ThreadPool pool(2);
  std::vector<Isa> isas{Isa::Portable};  // every ISA the machine has, below
  if (cpu_features().avx2_fma) isas.push_back(Isa::Avx2);
  if (cpu_features().avx512) isas.push_back(Isa::Avx512);
  if (cpu_features().amx_int8) isas.push_back(Isa::Amx);
  const auto bert = write_settled(tmp, "bert", "bert", Head::None);
  const auto xlmr = write_settled(tmp, "xlmr", "xlm-roberta", Head::Reranker);
  const auto distil = write_settled(tmp, "distil", "distilbert", Head::Classifier);
  const auto deberta = write_settled(tmp, "deberta", "deberta-v2", Head::Classifier);
  const auto jina = write_settled(tmp, "jina", "jina-bert", Head::Reranker);
  std::size_t expected_images = 0;
  for (const Isa isa : isas) {
    for (const Precision precision : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
      for (const auto& dir : {bert, xlmr, distil, deberta, jina}) {
        SCOPED_TRACE(
            fmt::format("{} {} {}", dir.filename().string(), isa_name(isa), precision_name(precision)));
        expect_mapped_equals_packed(dir, tmp / "cache", isa, precision, &pool);
        ++expected_images;
      }
    }
  }
  // One image per model, precision and ISA: none was mistaken for another.
  EXPECT_EQ(images(tmp / "cache").size(), expected_images);
}

TEST(PackedImage, AnInt8CheckpointAndABfloat16OneAreMappedToo) {
  const testing::TempDir tmp;
  const auto dir = write_settled(tmp, "bert", "bert", Head::Reranker);
  (void)quantize_model_folder(dir, tmp / "int8", Precision::Int8);
  (void)quantize_model_folder(dir, tmp / "bf16", Precision::BFloat16);
  for (const char* name : {"int8", "bf16"}) {
    fs::last_write_time(tmp / name / "model.safetensors",
                        fs::file_time_type::clock::now() - std::chrono::minutes(1));
  }
  for (const Precision precision : {Precision::Int8, Precision::Float32}) {
    expect_mapped_equals_packed(tmp / "int8", tmp / "cache", active_isa(), precision, nullptr);
    expect_mapped_equals_packed(tmp / "bf16", tmp / "cache", active_isa(), precision, nullptr);
  }
  ::unsetenv("WARDEN_PACK_CACHE");
}

TEST(PackedImage, ChangedWeightsAreNeverServedFromTheOldImage) {
  const testing::TempDir tmp;
  const CacheDir cache_env(tmp / "cache");
  const auto dir = write_settled(tmp, "bert", "bert", Head::None, 3);
  const auto first = load_encoder_model(dir, nullptr, active_isa(), Precision::Float32);
  ASSERT_EQ(first->encoder.packed_image(), engine::PackedImageUse::Saved);
  const auto old_out = outputs(*first, nullptr);

  // Other weights in the same file, with the old modification time put back: the change
  // time (which no one can set) and the content sample still tell it apart.
  const auto mtime = fs::last_write_time(dir / "model.safetensors");
  const auto other = write_settled(tmp, "other", "bert", Head::None, 4);
  fs::copy_file(other / "model.safetensors", dir / "model.safetensors", fs::copy_options::overwrite_existing);
  fs::last_write_time(dir / "model.safetensors", mtime);
  const auto reloaded = load_encoder_model(dir, nullptr, active_isa(), Precision::Float32);
  EXPECT_NE(reloaded->encoder.packed_image(), engine::PackedImageUse::Mapped);
  const auto want = outputs(*load_encoder_model(other, nullptr, active_isa(), Precision::Float32), nullptr);
  EXPECT_EQ(outputs(*reloaded, nullptr), want);
  EXPECT_NE(outputs(*reloaded, nullptr), old_out);
}

TEST(PackedImage, WeightsModifiedMomentsAgoAreNotSaved) {
  const testing::TempDir tmp;
  const CacheDir cache_env(tmp / "cache");
  fixtures::FixtureOptions options;
  fixtures::write_fixture(options, tmp / "fresh");
  const auto m = load_encoder_model(tmp / "fresh", nullptr, active_isa(), Precision::Float32);
  EXPECT_EQ(m->encoder.packed_image(), engine::PackedImageUse::NotSaved);
  EXPECT_NE(m->encoder.packed_image_note().find("less than"), std::string::npos)
      << m->encoder.packed_image_note();
  EXPECT_TRUE(images(tmp / "cache").empty());
}

TEST(PackedImage, ADamagedOrForeignImageIsIgnored) {
  const testing::TempDir tmp;
  const CacheDir cache_env(tmp / "cache");
  const auto dir = write_settled(tmp, "bert", "bert", Head::None);
  const auto want = outputs(*load_encoder_model(dir, nullptr, active_isa(), Precision::Int8), nullptr);
  const auto saved = images(tmp / "cache");
  ASSERT_EQ(saved.size(), 1U);
  const auto image = saved.front();
  const auto size = fs::file_size(image);

  // Truncated (a full disk), then with another key under the same name (a hash collision),
  // then garbage: each time the layers are packed again, right.
  const std::vector<std::function<void()>> damage{
      [&] { fs::resize_file(image, size / 2); },
      [&] {
        std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(32);
        f.put('#');
      },
      [&] {
        std::ofstream f(image, std::ios::binary | std::ios::trunc);
        f << "not an image";
      },
  };
  for (std::size_t i = 0; i < damage.size(); ++i) {
    SCOPED_TRACE(i);
    damage[i]();
    const auto m = load_encoder_model(dir, nullptr, active_isa(), Precision::Int8);
    EXPECT_NE(m->encoder.packed_image(), engine::PackedImageUse::Mapped);
    EXPECT_EQ(outputs(*m, nullptr), want);
  }
}

TEST(PackedImage, TheFolderIsTrimmedToItsLimitLeastRecentlyUsedFirst) {
  const testing::TempDir tmp;
  const CacheDir cache_env(tmp / "cache");
  const auto dir = write_settled(tmp, "bert", "bert", Head::None);
  (void)load_encoder_model(dir, nullptr, active_isa(), Precision::Float32);
  (void)load_encoder_model(dir, nullptr, active_isa(), Precision::Int8);
  ASSERT_EQ(images(tmp / "cache").size(), 2U);
  // Use the float32 one again, so the int8 one is the least recently used.
  EXPECT_EQ(load_encoder_model(dir, nullptr, active_isa(), Precision::Float32)->encoder.packed_image(),
            engine::PackedImageUse::Mapped);
  // The images of this fixture: float32 0.27 MB (the word embeddings are read in place),
  // int8 2.2 MB, bfloat16 4.0 MB. A 5 MiB limit holds the float32 and bfloat16 ones but not
  // all three: saving the bfloat16 one removes the least recently used (int8) alone.
  ::setenv("WARDEN_PACK_CACHE_MAX_MB", "5", 1);
  (void)load_encoder_model(dir, nullptr, active_isa(), Precision::BFloat16);
  ::unsetenv("WARDEN_PACK_CACHE_MAX_MB");
  EXPECT_EQ(images(tmp / "cache").size(), 2U);
  for (const Precision kept : {Precision::Float32, Precision::BFloat16}) {
    EXPECT_EQ(load_encoder_model(dir, nullptr, active_isa(), kept)->encoder.packed_image(),
              engine::PackedImageUse::Mapped);
  }
  EXPECT_NE(load_encoder_model(dir, nullptr, active_isa(), Precision::Int8)->encoder.packed_image(),
            engine::PackedImageUse::Mapped);
}

TEST(PackedImage, OffMeansNothingIsWritten) {
  const testing::TempDir tmp;
  const auto dir = write_settled(tmp, "bert", "bert", Head::None);
  ::setenv("WARDEN_PACK_CACHE", "off", 1);
  ::setenv("XDG_CACHE_HOME", (tmp / "xdg").c_str(), 1);
  EXPECT_EQ(load_encoder_model(dir)->encoder.packed_image(), engine::PackedImageUse::Off);
  EXPECT_FALSE(fs::exists(tmp / "xdg"));
  // Unset, the images go under $XDG_CACHE_HOME/warden/packed.
  ::unsetenv("WARDEN_PACK_CACHE");
  EXPECT_EQ(load_encoder_model(dir)->encoder.packed_image(), engine::PackedImageUse::Saved);
  EXPECT_EQ(images(tmp / "xdg" / "warden" / "packed").size(), 1U);
  ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace warden::model
