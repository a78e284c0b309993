#include "model/families/registry.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden {
namespace {

// The all-MiniLM-L6-v2 config.json as published (transformers 4.8.2).
constexpr std::string_view kMiniLm = R"({
  "_name_or_path": "nreimers/MiniLM-L6-H384-uncased",
  "architectures": ["BertModel"],
  "attention_probs_dropout_prob": 0.1,
  "gradient_checkpointing": false,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 384,
  "initializer_range": 0.02,
  "intermediate_size": 1536,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 6,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.8.2",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 30522
})";

// Replaces the first occurrence of `from` in kMiniLm (to make one field bad).
std::string mini_lm_with(std::string_view from, std::string_view to) {
  std::string s(kMiniLm);
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

std::string config_error(const std::string& json, ErrorKind kind = ErrorKind::CorruptFile) {
  try {
    (void)model::families::parse_model_config(json, "config.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "parsed without error: " << json;
  return {};
}

TEST(ModelConfig, ReadsARealBertConfig) {
  const auto c = model::families::parse_model_config(kMiniLm, "config.json");
  EXPECT_EQ(c.architectures, std::vector<std::string>{"BertModel"});
  EXPECT_EQ(c.model_type, "bert");
  EXPECT_EQ(c.hidden_size, 384U);
  EXPECT_EQ(c.num_hidden_layers, 6U);
  EXPECT_EQ(c.num_attention_heads, 12U);
  EXPECT_EQ(c.head_dim(), 32U);
  EXPECT_EQ(c.intermediate_size, 1536U);
  EXPECT_EQ(c.hidden_act, "gelu");
  EXPECT_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.max_position_embeddings, 512U);
  EXPECT_EQ(c.type_vocab_size, 2U);
  EXPECT_EQ(c.vocab_size, 30522U);
  EXPECT_EQ(c.pad_token_id, 0);
  EXPECT_EQ(c.position_embedding_type, "absolute");
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"LABEL_0", "LABEL_1"}));  // transformers' default
  EXPECT_FALSE(c.torch_dtype.has_value());
}

TEST(ModelConfig, DistilBertNamesMapOntoTheSameFields) {
  const auto c = model::families::parse_model_config(
      R"({"activation":"gelu","architectures":["DistilBertForSequenceClassification"],
    "dim":768,"hidden_dim":3072,"max_position_embeddings":512,"model_type":"distilbert","n_heads":12,"n_layers":6,
    "pad_token_id":0,"sinusoidal_pos_embds":false,"vocab_size":30522,"id2label":{"1":"POSITIVE","0":"NEGATIVE"},
    "label2id":{"NEGATIVE":0,"POSITIVE":1}})",
      "config.json");
  EXPECT_EQ(c.hidden_size, 768U);
  EXPECT_EQ(c.num_hidden_layers, 6U);
  EXPECT_EQ(c.num_attention_heads, 12U);
  EXPECT_EQ(c.intermediate_size, 3072U);
  EXPECT_EQ(c.type_vocab_size, 0U);
  EXPECT_FALSE(c.sinusoidal_pos_embds);
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"NEGATIVE", "POSITIVE"}));
  EXPECT_EQ(c.label2id.at("POSITIVE"), 1);
}

TEST(ModelConfig, XlmRobertaDefaultsAndOneLabel) {
  const auto c = model::families::parse_model_config(
      R"({"model_type":"xlm-roberta","hidden_size":768,"num_hidden_layers":12,
    "num_attention_heads":12,"intermediate_size":3072,"vocab_size":250002,"max_position_embeddings":514,
    "layer_norm_eps":1e-05,"type_vocab_size":1,"id2label":{"0":"LABEL_0"},"label2id":{"LABEL_0":0},"some_new_key":[1]})",
      "config.json");
  EXPECT_EQ(c.pad_token_id, 1);  // XLMRobertaConfig's default
  EXPECT_EQ(c.layer_norm_eps, 1e-05);
  EXPECT_EQ(c.num_labels(), 1U);
  EXPECT_EQ(
      model::families::parse_model_config(mini_lm_with(R"("use_cache": true)", R"("dtype": "bfloat16")"), "c")
          .torch_dtype,
      "bfloat16");
}

TEST(ModelConfig, BadConfigsAreClearErrors) {
  EXPECT_NE(config_error("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(config_error("[1]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"("model_type": "bert",)", "")).find("\"model_type\" is missing"),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"("hidden_size": 384,)", "")).find("\"hidden_size\" is missing"),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"("hidden_size": 384)", R"("hidden_size": )"
                                                               "\"384\""))
                .find("\"hidden_size\" must be an integer"),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"("hidden_size": 384)", R"("hidden_size": )"
                                                               "384.5"))
                .find("\"hidden_size\" must be an integer"),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"("hidden_size": 384)", R"("hidden_size": )"
                                                               "0"))
                .find("\"hidden_size\" is 0, outside"),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"("hidden_size": 384)", R"("hidden_size": )"
                                                               "-384"))
                .find("\"hidden_size\""),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with("30522", "99999999999")).find("\"vocab_size\""), std::string::npos);
  EXPECT_NE(config_error(mini_lm_with("30522", "99999999999999999999999")).find("config.json"),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"("num_attention_heads": 12)", R"("num_attention_heads": 7)"))
                .find("does not divide the hidden size 384"),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with("1e-12", "0")).find("\"layer_norm_eps\""), std::string::npos);
  EXPECT_NE(config_error(mini_lm_with("1e-12", "\"tiny\"")).find("\"layer_norm_eps\" must be a number"),
            std::string::npos);
  EXPECT_NE(
      config_error(mini_lm_with(R"("pad_token_id": 0)", R"("pad_token_id": 40000)")).find("\"pad_token_id\""),
      std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"(["BertModel"])", "[1]")).find("\"architectures\""),
            std::string::npos);
  EXPECT_NE(config_error(mini_lm_with(R"("use_cache": true)", R"("id2label": {"0": "a", "2": "b"})"))
                .find("skips class 1"),
            std::string::npos);
  EXPECT_NE(
      config_error(mini_lm_with(R"("use_cache": true)", R"("id2label": {"x": "a"})")).find("\"id2label\""),
      std::string::npos);
  EXPECT_NE(
      config_error(mini_lm_with(R"("use_cache": true)", R"("id2label": {"0": 3})")).find("\"id2label\""),
      std::string::npos);
  EXPECT_NE(
      config_error(mini_lm_with(R"("use_cache": true)", R"("label2id": {"a": "0"})")).find("\"label2id\""),
      std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"distilbert","dim":768,"n_layers":6,"n_heads":12,"vocab_size":10})")
                .find("\"hidden_dim\" is missing"),
            std::string::npos);
  EXPECT_NE(config_error(
                R"({"model_type":"xlm-roberta","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,
      "intermediate_size":8,"vocab_size":10,"max_position_embeddings":2})")
                .find("max_position_embeddings"),
            std::string::npos);
}

TEST(SentenceTransformers, Modules) {
  const auto m = model::metadata::parse_st_modules(R"([
  {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
  {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
])",
                                                   "modules.json");
  ASSERT_EQ(m.modules.size(), 3U);
  ASSERT_NE(m.find("Pooling"), nullptr);
  EXPECT_EQ(m.find("Pooling")->path, "1_Pooling");
  EXPECT_NE(m.find("Normalize"), nullptr);
  EXPECT_EQ(m.find("Dense"), nullptr);

  for (const char* bad :
       {R"([{"idx":0,"path":"../x","type":"t"}])", R"([{"idx":0,"path":"/etc","type":"t"}])",
        R"([{"idx":0,"path":"a//b","type":"t"}])", R"([{"idx":0,"path":""}])", R"({"idx":0})", R"([3])"}) {
    SCOPED_TRACE(bad);
    try {
      (void)model::metadata::parse_st_modules(bad, "modules.json");
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
      EXPECT_NE(std::string(e.what()).find("modules.json"), std::string::npos);
    }
  }
}

TEST(SentenceTransformers, Pooling) {
  const auto mean = model::metadata::parse_pooling_config(R"({
  "word_embedding_dimension": 384,
  "pooling_mode_cls_token": false,
  "pooling_mode_mean_tokens": true,
  "pooling_mode_max_tokens": false,
  "pooling_mode_mean_sqrt_len_tokens": false,
  "pooling_mode_weightedmean_tokens": false,
  "pooling_mode_lasttoken": false,
  "include_prompt": true
})",
                                                          "p");
  EXPECT_EQ(mean.mode, model::metadata::PoolingMode::Mean);
  EXPECT_EQ(mean.word_embedding_dimension, 384U);
  EXPECT_TRUE(mean.include_prompt);

  const auto cls = model::metadata::parse_pooling_config(
      R"({"word_embedding_dimension":8,"pooling_mode_cls_token":true,"include_prompt":false})", "p");
  EXPECT_EQ(cls.mode, model::metadata::PoolingMode::Cls);
  EXPECT_FALSE(cls.include_prompt);
  EXPECT_EQ(model::metadata::parse_pooling_config(
                R"({"word_embedding_dimension":8,"pooling_mode_lasttoken":true})", "p")
                .mode,
            model::metadata::PoolingMode::LastToken);
  EXPECT_EQ(
      model::metadata::parse_pooling_config(R"({"word_embedding_dimension":8,"pooling_mode":"max"})", "p")
          .mode,
      model::metadata::PoolingMode::Max);
  EXPECT_EQ(model::metadata::pooling_mode_name(model::metadata::PoolingMode::LastToken), "lasttoken");

  const auto error_kind = [](const char* json) {
    try {
      (void)model::metadata::parse_pooling_config(json, "p");
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(error_kind(R"({"word_embedding_dimension":8})"), ErrorKind::CorruptFile);
  EXPECT_EQ(error_kind(R"({"pooling_mode_cls_token":true})"), ErrorKind::CorruptFile);
  EXPECT_EQ(error_kind(R"({"word_embedding_dimension":8,"pooling_mode_cls_token":"yes"})"),
            ErrorKind::CorruptFile);
  EXPECT_EQ(error_kind(R"({"word_embedding_dimension":8,"pooling_mode":"median"})"), ErrorKind::CorruptFile);
  EXPECT_EQ(error_kind(R"({"word_embedding_dimension":8,"pooling_mode_weightedmean_tokens":true})"),
            ErrorKind::Unsupported);
  EXPECT_EQ(
      error_kind(
          R"({"word_embedding_dimension":8,"pooling_mode_cls_token":true,"pooling_mode_mean_tokens":true})"),
      ErrorKind::Unsupported);
}

TEST(SentenceTransformers, PromptsConfig) {
  const auto c = model::metadata::parse_st_config(R"({"__version__":{"sentence_transformers":"3.2.1"},
    "prompts":{"query":"query: ","passage":"passage: "},"default_prompt_name":"query","similarity_fn_name":"cosine"})",
                                                  "c");
  EXPECT_EQ(c.prompts.at("query"), "query: ");
  EXPECT_EQ(c.default_prompt_name, "query");
  EXPECT_EQ(c.similarity_fn_name, "cosine");
  const auto empty = model::metadata::parse_st_config(R"({"prompts":{},"default_prompt_name":null})", "c");
  EXPECT_TRUE(empty.prompts.empty());
  EXPECT_FALSE(empty.default_prompt_name.has_value());
  EXPECT_THROW((void)model::metadata::parse_st_config(R"({"prompts":{},"default_prompt_name":"query"})", "c"),
               Error);
  EXPECT_THROW((void)model::metadata::parse_st_config(R"({"prompts":{"q":1}})", "c"), Error);
}

TEST(SentenceTransformers, MaxSeqLength) {
  EXPECT_EQ(model::metadata::parse_max_seq_length(R"({"max_seq_length": 8192, "do_lower_case": false})", "s"),
            8192U);
  EXPECT_EQ(model::metadata::parse_max_seq_length(R"({"do_lower_case": false})", "s"), std::nullopt);
  EXPECT_EQ(model::metadata::parse_max_seq_length(R"({"max_seq_length": null})", "s"), std::nullopt);
  for (const char* bad : {R"({"max_seq_length": 0})", R"({"max_seq_length": "long"})", R"([1])"}) {
    try {
      (void)model::metadata::parse_max_seq_length(bad, "sentence_bert_config.json");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::CorruptFile) << e.what();
      EXPECT_NE(std::string(e.what()).find("sentence_bert_config.json"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace warden
