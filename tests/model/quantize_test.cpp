// `warden quantize` (model/quantize.hpp): a folder saved in int8 or bfloat16 loads to the
// same numbers as the original converted at load, and everything else survives the copy.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/family_fixture.hpp"
#include "model/formats/weights.hpp"
#include "model/quantize.hpp"
#include "model/temp_dir.hpp"

namespace warden::model {
namespace {

namespace fs = std::filesystem;

// Last hidden states of a fixed batch of three sequences.
std::vector<float> run(const fs::path& dir, Precision precision) {
  ThreadPool pool(2);
  const auto m = load_encoder_model(dir, &pool, active_isa(), precision);
  engine::TokenBatch batch;
  batch.add(std::vector<std::uint32_t>{101, 2023, 2003, 1037, 3231, 102});
  batch.add(std::vector<std::uint32_t>{101, 7592, 102});
  batch.add(std::vector<std::uint32_t>{101, 1996, 4937, 2938, 2006, 1996, 1352, 1012, 102});
  m->encoder.validate(batch);
  engine::EncoderWorkspace ws;
  const auto out = m->encoder.forward(batch, ws, &pool);
  return {out.begin(), out.end()};
}

void write_file(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  write_file_atomic(path, bytes);
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * double(b[i]);
    na += double(a[i]) * double(a[i]);
    nb += double(b[i]) * double(b[i]);
  }
  return dot / std::sqrt(na * nb);
}

fs::path make_fixture(const testing::TempDir& tmp, std::string_view arch, fixtures::Head head) {
  fixtures::FixtureOptions o;
  o.arch = arch;
  o.head = head;
  o.seed = 3;
  const fs::path dir = tmp / "original";
  fixtures::write_fixture(o, dir);
  return dir;
}

TEST(Quantize, Int8FolderLoadsBitIdenticalToConvertingAtLoad) {
  const testing::TempDir tmp;
  for (const auto& [family, arch] : testing::generator_families()) {
    if (!family->quantize_ahead) continue;
    fs::remove_all(tmp / "original");
    fs::remove_all(tmp / "int8");
    const fs::path dir = make_fixture(tmp, arch, fixtures::Head::Classifier);
    const QuantizeReport r = quantize_model_folder(dir, tmp / "int8", Precision::Int8);
    EXPECT_GT(r.converted, 0U);
    EXPECT_LT(r.bytes_out, r.bytes_in);
    const std::vector<float> at_load = run(dir, Precision::Int8);
    const std::vector<float> saved = run(tmp / "int8", Precision::Int8);
    ASSERT_EQ(at_load.size(), saved.size());
    EXPECT_EQ(std::memcmp(at_load.data(), saved.data(), at_load.size() * sizeof(float)), 0) << arch;
    // The heads stay float32 and are copied as they are.
    const auto original = formats::ModelWeights::open_dir(dir);
    const auto quantised = formats::ModelWeights::open_dir(tmp / "int8");
    for (const std::string_view name : original.names()) {
      const formats::Tensor* t = quantised.find(name);
      ASSERT_NE(t, nullptr) << name;
      if (t->dtype == formats::Dtype::I8) {
        EXPECT_NE(quantised.find(std::string(name) + std::string(formats::kInt8ScaleSuffix)), nullptr)
            << name;
        EXPECT_TRUE(std::string(name).find("layer.") != std::string::npos ||
                    std::string(name).find("word_embeddings") != std::string::npos)
            << name;
      } else {
        EXPECT_EQ(t->dtype, original.find(name)->dtype) << name;
      }
    }
  }
}

TEST(Quantize, Int8FolderInFloat32IsTheDequantisedModel) {
  const testing::TempDir tmp;
  const fs::path dir = make_fixture(tmp, "bert", fixtures::Head::None);
  (void)quantize_model_folder(dir, tmp / "int8", Precision::Int8);
  const double c = cosine(run(dir, Precision::Float32), run(tmp / "int8", Precision::Float32));
  std::printf("int8 checkpoint read as float32 vs the original: cosine %.6f\n", c);
  EXPECT_GT(c, 0.999);
}

TEST(Quantize, Bfloat16FolderIsStandardBf16) {
  const testing::TempDir tmp;
  const fs::path dir = make_fixture(tmp, "bert", fixtures::Head::None);
  const QuantizeReport r = quantize_model_folder(dir, tmp / "bf16", Precision::BFloat16);
  EXPECT_GT(r.converted, 0U);
  const auto w = formats::ModelWeights::open_dir(tmp / "bf16");
  EXPECT_EQ(w.find("embeddings.word_embeddings.weight")->dtype, formats::Dtype::BF16);
  EXPECT_EQ(w.find("encoder.layer.0.attention.self.query.weight")->dtype, formats::Dtype::BF16);
  EXPECT_EQ(w.find("encoder.layer.0.attention.self.query.bias")->dtype, formats::Dtype::F32);
  EXPECT_EQ(w.find("embeddings.position_embeddings.weight")->dtype, formats::Dtype::F32);
  const double c = cosine(run(dir, Precision::Float32), run(tmp / "bf16", Precision::Float32));
  std::printf("bfloat16 checkpoint read as float32 vs the original: cosine %.6f\n", c);
  EXPECT_GT(c, 0.999);
}

TEST(Quantize, CopiesTheOtherFilesButNotOtherWeightFormats) {
  const testing::TempDir tmp;
  const fs::path dir = make_fixture(tmp, "bert", fixtures::Head::None);
  write_file(dir / "pytorch_model.bin", "not copied");
  (void)quantize_model_folder(dir, tmp / "int8", Precision::Int8);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), dir);
    if (rel == "pytorch_model.bin" || rel == "model.safetensors") continue;
    ASSERT_TRUE(fs::exists(tmp / "int8" / rel)) << rel;
    EXPECT_EQ(read_file(e.path()), read_file(tmp / "int8" / rel)) << rel;
  }
  EXPECT_FALSE(fs::exists(tmp / "int8" / "pytorch_model.bin"));
}

TEST(Quantize, ErrorsNameTheProblem) {
  const testing::TempDir tmp;
  const fs::path dir = make_fixture(tmp, "bert", fixtures::Head::None);
  auto kind_of = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of([&] { (void)quantize_model_folder(dir, tmp / "x", Precision::Float32); }),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of([&] { (void)quantize_model_folder(tmp / "missing", tmp / "x", Precision::Int8); }),
            ErrorKind::NotFound);
  write_file(tmp / "busy" / "file", "x");
  EXPECT_EQ(kind_of([&] { (void)quantize_model_folder(dir, tmp / "busy", Precision::Int8); }),
            ErrorKind::InvalidArgument);
  // Not an encoder Warden quantises ahead of time.
  fs::copy(dir, tmp / "other", fs::copy_options::recursive);
  std::string config = read_file(dir / "config.json");
  config.replace(config.find("\"bert\""), 6, "\"gpt2\"");
  write_file(tmp / "other" / "config.json", config);
  EXPECT_EQ(kind_of([&] { (void)quantize_model_folder(tmp / "other", tmp / "y", Precision::Int8); }),
            ErrorKind::Unsupported);
  EXPECT_FALSE(fs::exists(tmp / "y"));
}

TEST(Quantize, BadScalesInAnInt8CheckpointAreCorruptFile) {
  const testing::TempDir tmp;
  const fs::path dir = make_fixture(tmp, "bert", fixtures::Head::None);
  (void)quantize_model_folder(dir, tmp / "int8", Precision::Int8);
  // Rewrite one scale tensor with a NaN, and drop another: both are named errors at load.
  const auto w = formats::ModelWeights::open_dir(tmp / "int8");
  std::vector<std::vector<std::byte>> keep;
  std::vector<formats::TensorToWrite> out;
  for (const std::string_view name : w.names()) {
    const formats::Tensor& t = *w.find(name);
    if (name == "encoder.layer.0.intermediate.dense.weight_scale") continue;
    std::vector<std::byte> data(t.data.begin(), t.data.end());
    if (name == "encoder.layer.0.attention.self.query.weight_scale") {
      const float nan = std::nanf("");
      std::memcpy(data.data(), &nan, sizeof nan);
    }
    keep.push_back(std::move(data));
    out.push_back({t.name, t.dtype, t.shape, keep.back()});
  }
  formats::write_safetensors(tmp / "int8" / "model.safetensors", out, {});
  try {
    (void)load_encoder_model(tmp / "int8", nullptr, active_isa(), Precision::Int8);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    const std::string what = e.what();
    EXPECT_TRUE(what.find("weight_scale") != std::string::npos) << what;
  }
}

}  // namespace
}  // namespace warden::model
