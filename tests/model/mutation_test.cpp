// A cheap, deterministic stand-in for fuzzing in the regular suite (and under ASan+UBSan):
// thousands of mutated safetensors images and config.json texts must either parse into
// something consistent or throw warden::Error; never crash, never read out of bounds.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/families/registry.hpp"
#include "model/formats/safetensors.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden {
namespace {

// A tiny deterministic generator (the test's own; std distributions vary by library).
struct Lcg {
  std::uint64_t state;
  std::uint64_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
};

std::string mutate(const std::string& original, Lcg& rng, std::size_t focus_end) {
  std::string s = original;
  static constexpr std::string_view kPieces[] = {"0",
                                                 "9",
                                                 "-1",
                                                 "1e300",
                                                 "\"",
                                                 "{",
                                                 "}",
                                                 "[",
                                                 "]",
                                                 ",",
                                                 ":",
                                                 "null",
                                                 "[]",
                                                 "{}",
                                                 "\\",
                                                 "\xff",
                                                 "18446744073709551615",
                                                 "F16",
                                                 "\"dtype\"",
                                                 "\"shape\""};
  const std::size_t edits = 1 + rng.below(4);
  for (std::size_t e = 0; e < edits && !s.empty(); ++e) {
    const std::size_t limit = std::min(focus_end, s.size());
    const std::size_t pos = rng.below(limit);
    switch (rng.below(5)) {
      case 0:
        s[pos] = static_cast<char>(rng.next());
        break;
      case 1:
        s.erase(pos, 1 + rng.below(8));
        break;
      case 2:
        s.insert(pos, kPieces[rng.below(std::size(kPieces))]);
        break;
      case 3:
        s.resize(rng.below(s.size() + 1));
        break;
      default:
        s[pos] = static_cast<char>(s[pos] ^ (1 << rng.below(8)));
        break;
    }
  }
  return s;
}

TEST(Mutation, SafetensorsNeverCrashes) {
  const std::vector<float> a(6, 1.5F);
  const std::vector<std::uint16_t> b(5, 0x3C00);
  const std::vector<std::int64_t> c{1, 2};
  const std::vector<model::formats::TensorToWrite> tensors{
      {"layer.weight", model::formats::Dtype::F32, {2, 3}, std::as_bytes(std::span(a))},
      {"layer.bias", model::formats::Dtype::F16, {5}, std::as_bytes(std::span(b))},
      {"ids", model::formats::Dtype::I64, {2}, std::as_bytes(std::span(c))}};
  const std::string valid = model::formats::serialize_safetensors(tensors, {{"format", "pt"}});
  std::uint64_t header = 0;
  std::memcpy(&header, valid.data(), 8);
  Lcg rng{42};
  std::size_t parsed = 0;
  for (int i = 0; i < 4000; ++i) {
    // Mostly mutate the length and the JSON header; sometimes anywhere.
    const std::string bytes =
        mutate(valid, rng, i % 4 == 0 ? valid.size() : 8 + static_cast<std::size_t>(header));
    try {
      const auto h =
          model::formats::parse_safetensors(std::as_bytes(std::span(bytes.data(), bytes.size())), "m");
      ++parsed;
      const auto* begin = reinterpret_cast<const std::byte*>(bytes.data());
      for (const auto& t : h.tensors) {
        ASSERT_GE(t.data.data(), begin);
        ASSERT_LE(t.data.data() + t.data.size(), begin + bytes.size());
        ASSERT_EQ(t.data.size(), t.element_count() * model::formats::dtype_size(t.dtype));
        if (t.dtype == model::formats::Dtype::F32 || t.dtype == model::formats::Dtype::F16 ||
            t.dtype == model::formats::Dtype::BF16)
          (void)model::formats::to_float32(t);
      }
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::CorruptFile) << e.what();
    }
  }
  EXPECT_GT(parsed, 0U);  // some mutations (e.g. metadata text) stay valid
}

TEST(Mutation, ConfigReadersNeverCrash) {
  const std::string config = R"({"architectures":["BertModel"],"hidden_size":64,"num_hidden_layers":2,
    "num_attention_heads":4,"intermediate_size":128,"layer_norm_eps":1e-12,"max_position_embeddings":512,
    "model_type":"bert","pad_token_id":0,"type_vocab_size":2,"vocab_size":30522,"id2label":{"0":"a","1":"b"},
    "label2id":{"a":0,"b":1}})";
  const std::string pooling = R"({"word_embedding_dimension":64,"pooling_mode_cls_token":false,
    "pooling_mode_mean_tokens":true,"include_prompt":true})";
  const std::string modules =
      R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
    {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}])";
  Lcg rng{7};
  for (int i = 0; i < 3000; ++i) {
    try {
      const auto c = model::families::parse_model_config(mutate(config, rng, config.size()), "config.json");
      ASSERT_GT(c.num_attention_heads, 0U);
      ASSERT_EQ(c.hidden_size % c.num_attention_heads, 0U);
      ASSERT_FALSE(c.id2label.empty());
    } catch (const Error&) {
    }
    try {
      (void)model::metadata::parse_pooling_config(mutate(pooling, rng, pooling.size()), "p");
    } catch (const Error&) {
    }
    try {
      (void)model::metadata::parse_st_modules(mutate(modules, rng, modules.size()), "m");
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace warden
