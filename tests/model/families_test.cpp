// The family registry's own consistency: each HF class belongs to one family (a remote-code
// family's to it among configs naming its code), each model_type
// to one family whose base class it resolves to, and a family's class roles have what they need
// (a classifier class its head builder, the registry's lists what the loader reads).

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "model/families/registry.hpp"

namespace warden::model::families {
namespace {

TEST(Families, EachClassAndModelTypeHasOneFamily) {
  std::set<std::string_view> classes, model_types, names;
  for (const Family* f : all()) {
    EXPECT_TRUE(names.insert(f->name).second) << f->name;
    EXPECT_FALSE(f->classes.empty()) << f->name;
    EXPECT_FALSE(f->weight_prefix.empty()) << f->name;
    // A remote-code family's classes are looked up among its own only (Family::remote_configs):
    // jina-embeddings-v3's XLMRobertaModel is not stock XLM-R's.
    std::set<std::string_view> own;
    for (const FamilyClass& c : f->classes) {
      EXPECT_TRUE(own.insert(c.name).second) << c.name;
      if (f->remote_configs.empty()) {
        EXPECT_TRUE(classes.insert(c.name).second) << c.name;
      }
    }
    for (const std::string_view t : f->model_types) {
      EXPECT_TRUE(model_types.insert(t).second) << t;
      EXPECT_EQ(for_model_type(t), f) << t;
    }
  }
  EXPECT_EQ(for_model_type("gpt2"), nullptr);
}

TEST(Families, ClassesHaveWhatTheirRoleNeeds) {
  for (const Family* f : all()) {
    for (const FamilyClass& c : f->classes) {
      if (c.role == ClassRole::Classifier) {
        EXPECT_NE(f->classifier, nullptr) << c.name;
      }
    }
    if (f->mlm_head != nullptr) {
      bool masked = false;
      for (const FamilyClass& c : f->classes) masked = masked || c.role == ClassRole::MaskedLm;
      EXPECT_TRUE(masked) << f->name << " names an MLM head but no *ForMaskedLM class";
    }
  }
}

// A config without "architectures" is its model_type's base model, found in the registry.
TEST(Families, BaseClassesResolve) {
  for (const Family* f : all()) {
    for (const std::string_view t : f->model_types) {
      metadata::ModelConfig c;
      c.model_type = std::string(t);
      const ResolvedClass r = resolve(c, "/m");
      EXPECT_EQ(r.cls->role, ClassRole::Encoder) << t;
    }
  }
  metadata::ModelConfig alibi;
  alibi.model_type = "bert";
  alibi.position_embedding_type = "alibi";
  EXPECT_EQ(resolve(alibi, "/m").family->name, "jina-bert");
  // The same class name is jina-embeddings-v3's when auto_map names its remote config class.
  metadata::ModelConfig jina;
  jina.model_type = "xlm-roberta";
  jina.architectures = {"XLMRobertaModel"};
  EXPECT_EQ(resolve(jina, "/m").family->name, "roberta");
  jina.remote_config = "XLMRobertaFlashConfig";
  EXPECT_EQ(resolve(jina, "/m").family->name, "xlm-roberta-flash");
  jina.architectures.clear();
  EXPECT_EQ(resolve(jina, "/m").family->name, "xlm-roberta-flash");
  jina.architectures = {"XLMRobertaForSequenceClassification"};  // jina-reranker-v2
  EXPECT_EQ(resolve(jina, "/m").family->name, "xlm-roberta-flash");
  EXPECT_EQ(resolve(jina, "/m").cls->role, ClassRole::Classifier);
  jina.architectures = {"XLMRobertaForMaskedLM"};  // stock XLM-R's, not the remote code's here
  EXPECT_THROW((void)resolve(jina, "/m"), Error);
  metadata::ModelConfig unknown;
  unknown.model_type = "gpt2";
  try {
    (void)resolve(unknown, "/m");
    ADD_FAILURE() << "gpt2 resolved";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("Qwen3Model"), std::string::npos) << e.what();
  }
}

// A family reads its own keys: DistilBERT's names map onto the shared fields, and a family's
// settings are its own (a config of another family has none of its keys read).
TEST(Families, ConfigsAreReadByTheirFamily) {
  const metadata::ModelConfig d = families::parse_model_config(
      R"({"model_type": "distilbert", "dim": 64, "n_layers": 2, "n_heads": 4, "hidden_dim": 128,
          "vocab_size": 100})",
      "config.json");
  EXPECT_EQ(d.hidden_size, 64U);
  EXPECT_EQ(d.type_vocab_size, 0U);
  EXPECT_EQ(d.pad_token_id, 0);
  const metadata::ModelConfig m = families::parse_model_config(
      R"({"model_type": "mpnet", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "intermediate_size": 128, "vocab_size": 100})",
      "config.json");
  EXPECT_EQ(m.pad_token_id, 1);  // MPNetConfig's default
  EXPECT_NE(m.family_settings, nullptr);
  // The table length's default is the config class's, not BERT's 512.
  const metadata::ModelConfig q = families::parse_model_config(
      R"({"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "intermediate_size": 128, "vocab_size": 100})",
      "config.json");
  EXPECT_EQ(q.max_position_embeddings, 32768U);
}

}  // namespace
}  // namespace warden::model::families
