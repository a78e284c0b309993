// Static embedders against the reference written from model2vec's and sentence-transformers'
// own code (tools/golden/static_reference.py): the same token ids (unknown tokens dropped or
// kept, the character and token cuts) and the same vectors, for the three layouts; and the
// folders that do not fit are clear errors naming what is wrong.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "embed/model_folder.hpp"
#include "embed/static_embedder.hpp"
#include "model/formats/safetensors.hpp"
#include "model/formats/weights.hpp"
#include "support/golden_fixture.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

struct TempFolder {
  fs::path path =
      fs::temp_directory_path() / ("warden-static-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempFolder() { fs::remove_all(path); }
  ~TempFolder() { fs::remove_all(path); }
};

fs::path golden_path(const std::string& name) {
  return fs::path(WARDEN_TEST_DATA) / "static-goldens" / (name + ".json");
}

std::unique_ptr<embed::StaticEmbedder> open(const fs::path& dir) {
  const auto layout = model::static_models::find_static_layout(dir);
  if (!layout) throw Error(ErrorKind::NotFound, "not a static model folder");
  return std::make_unique<embed::StaticEmbedder>(dir, *layout);
}

TEST(StaticEmbedder, MatchesModel2VecAndSentenceTransformersForEveryLayout) {
  for (const std::string name :
       {"static-model2vec", "static-model2vec-quantized", "static-sentence-transformers"}) {
    SCOPED_TRACE(name);
    const TempFolder tmp;
    simdjson::dom::parser parser;
    const std::string text = read_file(golden_path(name));
    const simdjson::dom::element golden = parser.parse(text);
    testing::run_fixture_command(std::string_view(golden["fixture"]["command"]), tmp.path);
    for (const auto [file, sha] : golden["fixture"]["files_sha256"].get_object()) {
      const std::string got =
          testing::capture_command("sha256sum '" + (tmp.path / std::string(file)).string() + "'");
      ASSERT_EQ(got.substr(0, 64), std::string_view(sha)) << "fixture file " << file << " changed";
    }
    const auto embedder = open(tmp.path);
    const embed::ModelFolder folder = embed::inspect_model_folder(tmp.path);
    ASSERT_TRUE(folder.static_layout.has_value());
    EXPECT_EQ(folder.hidden_size, embedder->dim());
    EXPECT_TRUE(embedder->semantic());

    double worst = 0;
    std::size_t n = 0;
    for (const auto c : golden["cases"].get_array()) {
      const std::string_view input = c["input"];
      SCOPED_TRACE(std::string(input.substr(0, 40)));
      const embed::PreparedInput p = embedder->prepare(input, {});
      std::vector<std::uint32_t> want_ids;
      for (const auto x : c["ids"].get_array()) want_ids.push_back(static_cast<std::uint32_t>(int64_t(x)));
      EXPECT_EQ(p.ids, want_ids);
      std::vector<float> got(embedder->dim());
      const embed::PreparedInput* one[] = {&p};
      embedder->embed_prepared(one, got);
      std::size_t j = 0;
      for (const auto x : c["embedding"].get_array()) {
        ASSERT_LT(j, got.size());
        worst = std::max(worst, std::fabs(double(x) - double(got[j])));
        ++j;
      }
      EXPECT_EQ(j, got.size());
      ++n;
    }
    EXPECT_LE(worst, 1e-4);
    EXPECT_GE(n, 10U);
    std::printf("[ golden ] %s: %zu cases, max |diff| %.2e\n", name.c_str(), n, worst);
  }
}

TEST(StaticEmbedder, Model2VecCutsAt512TokensOrRefusesWithoutTruncation) {
  const TempFolder tmp;
  testing::run_fixture_command("warden-fixture --arch static --preset tiny --seed 1 --out DIR", tmp.path);
  const auto e = open(tmp.path);
  EXPECT_EQ(e->max_input_tokens(), 512U);
  EXPECT_EQ(e->median_token_length(), 6U);  // the golden's reference says the same
  std::string long_text;
  for (int i = 0; i < 700; ++i) long_text += "word ";
  EXPECT_EQ(e->prepare(long_text, {}).ids.size(), 512U);
  embed::InputOptions strict;
  strict.truncate = false;
  EXPECT_THROW((void)e->prepare(long_text, strict), Error);
  const std::uint32_t too_big[] = {0, 1U << 30};
  EXPECT_THROW((void)e->prepare_ids(too_big, {}), Error);
  const std::string_view bad[] = {"bad \xFF"};
  EXPECT_THROW((void)e->embed(bad), Error);
}

// Rewrites DIR/model.safetensors with tensor `name` replaced by `values` (raw bytes, dtype, shape).
void replace_tensor(const fs::path& file, const std::string& name, model::formats::Dtype dtype,
                    std::vector<std::size_t> shape, std::vector<std::byte> values) {
  std::vector<std::string> names;
  std::vector<std::vector<std::byte>> blobs;
  std::vector<model::formats::TensorToWrite> tensors;
  {
    const model::formats::ModelWeights w = model::formats::ModelWeights::open_file(file);
    for (const std::string_view n : w.names()) {
      const model::formats::Tensor* t = w.find(n);
      names.emplace_back(n);
      if (n == name) {
        blobs.push_back(values);
        tensors.push_back({names.back(), dtype, shape, {}});
      } else {
        blobs.emplace_back(t->data.begin(), t->data.end());
        tensors.push_back({names.back(), t->dtype, t->shape, {}});
      }
    }
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i].data = blobs[i];
  model::formats::write_safetensors(file, tensors, {{"format", "pt"}});
}

void expect_error(const fs::path& dir, ErrorKind kind, const std::string& names) {
  try {
    (void)open(dir);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(StaticEmbedder, BrokenTablesWeightsAndMappingsAreNamed) {
  const std::string quantized =
      "warden-fixture --arch static --static-layout model2vec-quantized --seed 1 --out DIR";
  {
    const TempFolder tmp;
    testing::run_fixture_command(quantized, tmp.path);
    std::vector<std::int32_t> mapping(30522, 0);
    mapping[7] = 1 << 20;  // past the table's rows
    std::vector<std::byte> bytes(mapping.size() * 4);
    std::memcpy(bytes.data(), mapping.data(), bytes.size());
    replace_tensor(tmp.path / "model.safetensors", "mapping", model::formats::Dtype::I32, {mapping.size()},
                   bytes);
    expect_error(tmp.path, ErrorKind::CorruptFile, "'mapping' sends token 7");
  }
  {
    const TempFolder tmp;
    testing::run_fixture_command(quantized, tmp.path);
    replace_tensor(tmp.path / "model.safetensors", "weights", model::formats::Dtype::F32, {3},
                   std::vector<std::byte>(12));
    expect_error(tmp.path, ErrorKind::CorruptFile, "'weights'");
  }
  {
    const TempFolder tmp;
    testing::run_fixture_command("warden-fixture --arch static --seed 1 --out DIR", tmp.path);
    // A table with fewer rows than the tokenizer has tokens.
    replace_tensor(tmp.path / "model.safetensors", "embeddings", model::formats::Dtype::F32, {10, 64},
                   std::vector<std::byte>(10 * 64 * 4));
    expect_error(tmp.path, ErrorKind::CorruptFile, "the tokenizer has 30522 tokens");
  }
  {
    const TempFolder tmp;
    testing::run_fixture_command("warden-fixture --arch static --seed 1 --out DIR", tmp.path);
    replace_tensor(tmp.path / "model.safetensors", "embeddings", model::formats::Dtype::F32, {30522},
                   std::vector<std::byte>(30522 * 4));
    expect_error(tmp.path, ErrorKind::CorruptFile, "'embeddings' must be a [tokens x dim] table");
  }
}

}  // namespace
}  // namespace warden
