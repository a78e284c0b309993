// The fixture generator (tools/fixtures) against the project's own readers: every generated
// folder must re-read with the safetensors, config and sentence-transformers readers, with
// exactly the tensors and shapes its config implies, and the same seed must give the same
// bytes.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "fixtures/fixture.hpp"
#include "model/families/registry.hpp"
#include "model/formats/weights.hpp"
#include "model/metadata/sentence_transformers.hpp"
#include "model/temp_dir.hpp"

namespace warden {
namespace {

using fixtures::FixtureOptions;
using fixtures::Head;
using fixtures::Preset;
using Expected = std::vector<std::pair<std::string, std::vector<std::size_t>>>;

// What HF's modelling code would build for this config: written here from the config alone,
// independently of the generator's tables.
Expected expected_tensors(const model::metadata::ModelConfig& c, bool classifier) {
  Expected out;
  const std::size_t h = c.hidden_size;
  const std::size_t labels = c.num_labels();
  const auto linear = [&out](const std::string& name, std::size_t o, std::size_t i) {
    out.push_back({name + ".weight", {o, i}});
    out.push_back({name + ".bias", {o}});
  };
  const auto norm = [&out](const std::string& name, std::size_t n) {
    out.push_back({name + ".weight", {n}});
    out.push_back({name + ".bias", {n}});
  };
  if (c.model_type == "distilbert") {
    const std::string p = classifier ? "distilbert." : "";
    out.push_back({p + "embeddings.word_embeddings.weight", {c.vocab_size, h}});
    out.push_back({p + "embeddings.position_embeddings.weight", {c.max_position_embeddings, h}});
    norm(p + "embeddings.LayerNorm", h);
    for (std::size_t l = 0; l < c.num_hidden_layers; ++l) {
      const std::string q = p + "transformer.layer." + std::to_string(l) + ".";
      for (const char* lin : {"q_lin", "k_lin", "v_lin", "out_lin"}) linear(q + "attention." + lin, h, h);
      norm(q + "sa_layer_norm", h);
      linear(q + "ffn.lin1", c.intermediate_size, h);
      linear(q + "ffn.lin2", h, c.intermediate_size);
      norm(q + "output_layer_norm", h);
    }
    if (classifier) {
      linear("pre_classifier", h, h);
      linear("classifier", labels, h);
    }
    return out;
  }
  const bool roberta = c.model_type == "xlm-roberta";
  const std::string p = classifier ? (roberta ? "roberta." : "bert.") : "";
  out.push_back({p + "embeddings.word_embeddings.weight", {c.vocab_size, h}});
  out.push_back({p + "embeddings.position_embeddings.weight", {c.max_position_embeddings, h}});
  out.push_back({p + "embeddings.token_type_embeddings.weight", {c.type_vocab_size, h}});
  norm(p + "embeddings.LayerNorm", h);
  for (std::size_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string q = p + "encoder.layer." + std::to_string(l) + ".";
    for (const char* s : {"query", "key", "value"}) linear(q + "attention.self." + s, h, h);
    linear(q + "attention.output.dense", h, h);
    norm(q + "attention.output.LayerNorm", h);
    linear(q + "intermediate.dense", c.intermediate_size, h);
    linear(q + "output.dense", h, c.intermediate_size);
    norm(q + "output.LayerNorm", h);
  }
  if (!(roberta && classifier)) linear(p + "pooler.dense", h, h);
  if (classifier && roberta) {
    linear("classifier.dense", h, h);
    linear("classifier.out_proj", labels, h);
  } else if (classifier) {
    linear("classifier", labels, h);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> folder_contents(const std::filesystem::path& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file())
      files.emplace_back(e.path().lexically_relative(dir).string(), read_file(e.path()));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ULL;
  }
  return h;
}

TEST(Fixture, EveryArchitectureAndHeadReReadsWithTheShapesItsConfigImplies) {
  const testing::TempDir tmp;
  for (const std::string_view arch : {"bert", "xlm-roberta", "distilbert"}) {
    for (const Head head : {Head::None, Head::Reranker, Head::Classifier}) {
      const std::string label = fmt::format("{}-{}", arch, fixtures::head_name(head));
      SCOPED_TRACE(label);
      const auto dir = tmp / label;
      FixtureOptions options;
      options.arch = arch;
      options.head = head;
      options.seed = 3;
      fixtures::write_fixture(options, dir);

      const model::metadata::ModelConfig config = model::families::read_model_config(dir / "config.json");
      EXPECT_EQ(config.architectures, std::vector<std::string>{fixtures::architecture_class(arch, head)});
      EXPECT_EQ(config.model_type, arch);
      EXPECT_EQ(config.hidden_size, 64U);
      EXPECT_EQ(config.num_hidden_layers, 2U);
      EXPECT_EQ(config.num_attention_heads, 4U);
      EXPECT_EQ(config.intermediate_size, 128U);
      EXPECT_EQ(config.torch_dtype, "float32");
      const bool classifier = head != Head::None;
      if (head == Head::Reranker) {
        EXPECT_EQ(config.num_labels(), 1U);
      }
      if (head == Head::Classifier) {
        EXPECT_EQ(config.id2label, (std::vector<std::string>{"BENIGN", "INJECTION", "JAILBREAK"}));
      }
      if (arch == "xlm-roberta") {
        EXPECT_EQ(config.pad_token_id, 1);
        EXPECT_EQ(config.max_position_embeddings, 514U);
        EXPECT_EQ(config.vocab_size, 8002U);
      } else {
        EXPECT_EQ(config.vocab_size, 30522U);
      }

      const auto weights = model::formats::ModelWeights::open_dir(dir);
      const Expected expected = expected_tensors(config, classifier);
      EXPECT_EQ(weights.size(), expected.size()) << "extra or missing tensors";
      for (const auto& [name, shape] : expected) {
        EXPECT_NO_THROW((void)weights.require(name, shape)) << name;
      }
      EXPECT_EQ(model::formats::SafetensorsFile(weights.files().front().path()).metadata().at("format"),
                "pt");
      // HF zeroes the padding row of the word embeddings.
      const auto* words = weights.find((classifier ? (arch == "bert"          ? "bert."
                                                      : arch == "xlm-roberta" ? "roberta."
                                                                              : "distilbert.")
                                                   : "") +
                                       std::string("embeddings.word_embeddings.weight"));
      ASSERT_NE(words, nullptr);
      const std::vector<float> table = model::formats::to_float32(*words);
      const std::size_t pad = static_cast<std::size_t>(*config.pad_token_id);
      for (std::size_t j = 0; j < config.hidden_size; ++j)
        EXPECT_EQ(table[pad * config.hidden_size + j], 0.0F);
      EXPECT_NE(table[(pad + 1) * config.hidden_size], 0.0F);

      // The tokenizer's vocabulary is the config's.
      simdjson::dom::parser parser;
      const simdjson::padded_string tok(read_file(dir / "tokenizer.json"));
      simdjson::dom::element root;
      ASSERT_EQ(parser.parse(tok).get(root), simdjson::SUCCESS);
      std::size_t vocab = 0;
      if (arch == "xlm-roberta") {
        vocab = simdjson::dom::array(root["model"]["vocab"]).size();
      } else {
        vocab = simdjson::dom::object(root["model"]["vocab"]).size();
        EXPECT_TRUE(std::filesystem::exists(dir / "vocab.txt"));
      }
      EXPECT_EQ(vocab, config.vocab_size);
      EXPECT_TRUE(std::filesystem::exists(dir / "tokenizer_config.json"));
      EXPECT_TRUE(std::filesystem::exists(dir / "special_tokens_map.json"));

      // Embedding models carry the sentence-transformers files; classifiers do not.
      EXPECT_EQ(std::filesystem::exists(dir / "modules.json"), !classifier);
      if (!classifier) {
        const model::metadata::StModules modules = model::metadata::read_st_modules(dir / "modules.json");
        ASSERT_NE(modules.find("Pooling"), nullptr);
        EXPECT_NE(modules.find("Normalize"), nullptr);
        const model::metadata::PoolingConfig pooling =
            model::metadata::read_pooling_config(dir / modules.find("Pooling")->path / "config.json");
        EXPECT_EQ(pooling.word_embedding_dimension, config.hidden_size);
        EXPECT_EQ(pooling.mode, model::metadata::PoolingMode::Mean);
        const model::metadata::StConfig st =
            model::metadata::read_st_config(dir / "config_sentence_transformers.json");
        EXPECT_TRUE(st.prompts.empty());
      }
    }
  }
}

TEST(Fixture, SameSeedSameBytesOtherSeedOtherWeights) {
  const testing::TempDir tmp;
  FixtureOptions options;
  options.arch = "xlm-roberta";
  options.seed = 11;
  fixtures::write_fixture(options, tmp / "a");
  fixtures::write_fixture(options, tmp / "b");
  EXPECT_EQ(folder_contents(tmp / "a"), folder_contents(tmp / "b"));
  options.seed = 12;
  fixtures::write_fixture(options, tmp / "c");
  EXPECT_NE(read_file(tmp / "a" / "model.safetensors"), read_file(tmp / "c" / "model.safetensors"));
  EXPECT_EQ(read_file(tmp / "a" / "config.json"), read_file(tmp / "c" / "config.json"));
}

TEST(Fixture, BytesArePinnedAcrossMachines) {
  // The weights are integer PRNG output and exact conversions, so these digests must hold on
  // every IEEE machine and compiler; a change here changes every golden output.
  const testing::TempDir tmp;
  FixtureOptions options;
  options.seed = 1;
  fixtures::write_fixture(options, tmp.path());
  const std::string bytes = read_file(tmp / "model.safetensors");
  EXPECT_EQ(bytes.size(), 8234264U);
  EXPECT_EQ(fnv1a(bytes), 100585981384765995ULL) << fnv1a(bytes);
}

TEST(Fixture, BertTokenizerJsonIsByteIdenticalToTheReference) {
  const std::filesystem::path reference =
      std::string(WARDEN_SHARED_FIXTURES) + "/bert-base-uncased-tokenizer.json";
  if (!std::filesystem::exists(reference)) GTEST_SKIP() << "no " << reference;
  const testing::TempDir tmp;
  FixtureOptions options;
  options.arch = "distilbert";
  fixtures::write_fixture(options, tmp.path());
  EXPECT_TRUE(read_file(tmp / "tokenizer.json") == read_file(reference));
}

TEST(Fixture, ShardedAndHalfPrecisionCheckpointsHoldTheSameWeights) {
  const testing::TempDir tmp;
  FixtureOptions options;
  options.seed = 5;
  fixtures::write_fixture(options, tmp / "f32");
  options.max_shard_bytes = 100'000;  // the word embeddings (7.8 MB) get a shard of their own
  fixtures::write_fixture(options, tmp / "sharded");
  options.max_shard_bytes = 0;
  options.dtype = model::formats::Dtype::F16;
  fixtures::write_fixture(options, tmp / "f16");
  options.dtype = model::formats::Dtype::BF16;
  fixtures::write_fixture(options, tmp / "bf16");

  EXPECT_FALSE(std::filesystem::exists(tmp / "sharded" / "model.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "sharded" / "model-00001-of-00006.safetensors"));
  const std::string index = read_file(tmp / "sharded" / "model.safetensors.index.json");
  const std::string head = "{\n  \"metadata\": {\n    \"total_size\": 8230144\n  },\n  \"weight_map\": {\n";
  EXPECT_EQ(index.substr(0, head.size()), head);
  EXPECT_EQ(model::families::read_model_config(tmp / "f16" / "config.json").torch_dtype, "float16");
  EXPECT_EQ(model::families::read_model_config(tmp / "bf16" / "config.json").torch_dtype, "bfloat16");

  const auto f32 = model::formats::ModelWeights::open_dir(tmp / "f32");
  const auto sharded = model::formats::ModelWeights::open_dir(tmp / "sharded");
  const auto f16 = model::formats::ModelWeights::open_dir(tmp / "f16");
  const auto bf16 = model::formats::ModelWeights::open_dir(tmp / "bf16");
  EXPECT_EQ(sharded.files().size(), 6U);
  EXPECT_EQ(sharded.names(), f32.names());
  EXPECT_EQ(f16.names(), f32.names());
  for (const std::string_view name : f32.names()) {
    SCOPED_TRACE(name);
    const std::vector<float> want = model::formats::to_float32(*f32.find(name));
    EXPECT_EQ(model::formats::to_float32(*sharded.find(name)), want);
    ASSERT_EQ(f16.find(name)->dtype, model::formats::Dtype::F16);
    ASSERT_EQ(bf16.find(name)->dtype, model::formats::Dtype::BF16);
    const std::vector<float> half = model::formats::to_float32(*f16.find(name));
    const std::vector<float> brain = model::formats::to_float32(*bf16.find(name));
    for (std::size_t i = 0; i < want.size(); i += 97) {
      ASSERT_EQ(half[i], model::formats::f16_to_float(model::formats::float_to_f16(want[i])));
      ASSERT_EQ(brain[i], model::formats::bf16_to_float(model::formats::float_to_bf16(want[i])));
    }
  }
}

TEST(Fixture, OptionsAndErrors) {
  const testing::TempDir tmp;
  FixtureOptions options;
  options.preset = Preset::BgeSmall;  // would be 130 MB: only the error path runs here
  options.arch = "bert";
  options.preset = Preset::XlmrBase;
  EXPECT_THROW(fixtures::write_fixture(options, tmp / "x"), Error);
  options.preset = Preset::Tiny;
  options.prompts = {{"query", "query: "}};
  options.default_prompt_name = "passage";
  EXPECT_THROW(fixtures::write_fixture(options, tmp / "x"), Error);
  options.default_prompt_name = "query";
  options.pooling = model::metadata::PoolingMode::Cls;
  fixtures::write_fixture(options, tmp / "p");
  const model::metadata::StConfig st =
      model::metadata::read_st_config(tmp / "p" / "config_sentence_transformers.json");
  EXPECT_EQ(st.prompts.at("query"), "query: ");
  EXPECT_EQ(st.default_prompt_name, "query");
  EXPECT_EQ(model::metadata::read_pooling_config(tmp / "p" / "1_Pooling" / "config.json").mode,
            model::metadata::PoolingMode::Cls);

  EXPECT_EQ(fixtures::architecture_class("xlm-roberta", fixtures::Head::None), "XLMRobertaModel");
  EXPECT_THROW((void)fixtures::architecture_class("bart", fixtures::Head::None), Error);
  EXPECT_EQ(fixtures::parse_preset("bge-base"), Preset::BgeBase);
  EXPECT_THROW((void)fixtures::parse_head("regressor"), Error);
  EXPECT_EQ(fixtures::preset_shape(Preset::MiniLmL6).layers, 6U);
  EXPECT_EQ(fixtures::preset_shape(Preset::BgeSmall).layers, 12U);
  EXPECT_EQ(fixtures::preset_shape(Preset::BgeBase).hidden, 768U);
}

}  // namespace
}  // namespace warden
