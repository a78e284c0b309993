// Model ids, the wanted-file list and the options read from the environment.

#include <gtest/gtest.h>

#include <cstdlib>

#include "hub/hub.hpp"

namespace warden::hub {
namespace {

TEST(ModelId, AcceptsOrgNameAndRevision) {
  const auto plain = ModelId::parse("sentence-transformers/all-MiniLM-L6-v2");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->repo, "sentence-transformers/all-MiniLM-L6-v2");
  EXPECT_EQ(plain->revision, "main");
  const auto tagged = ModelId::parse("a/b@v1.0");
  ASSERT_TRUE(tagged);
  EXPECT_EQ(tagged->repo, "a/b");
  EXPECT_EQ(tagged->revision, "v1.0");
  EXPECT_TRUE(ModelId::parse("BAAI/bge_small.en-v1.5@0123456789abcdef0123456789abcdef01234567"));
}

TEST(ModelId, RejectsOtherShapes) {
  for (const char* bad : {"../x", "a/b/c", "a", "a/b@", "", "/b", "a/", "a/.b", ".a/b", "a/b..c", "a/b@..",
                          "a/b@x/y", "a b/c", "a/b@v1@v2", "a\\b/c"}) {
    EXPECT_FALSE(ModelId::parse(bad)) << bad;
  }
  EXPECT_TRUE(ModelId::parse("a/" + std::string(96, 'n')));
  EXPECT_FALSE(ModelId::parse("a/" + std::string(97, 'n')));
}

TEST(WantedFile, TakesWhatWardenReadsOnly) {
  for (const char* f : {"config.json",
                        "tokenizer.json",
                        "vocab.txt",
                        "tokenizer_config.json",
                        "special_tokens_map.json",
                        "modules.json",
                        "config_sentence_transformers.json",
                        "sentence_bert_config.json",
                        "1_Pooling/config.json",
                        "model.safetensors",
                        "model.safetensors.index.json",
                        "model-00001-of-00002.safetensors",
                        "0_StaticEmbedding/model.safetensors",
                        "0_StaticEmbedding/tokenizer.json",
                        "pytorch_model.bin",
                        "pytorch_model.bin.index.json",
                        "pytorch_model-00001-of-00002.bin",
                        "sparse_linear.pt",
                        "colbert_linear.pt",
                        "onnx/model_fp16.onnx",
                        "model_int8.onnx"}) {
    EXPECT_TRUE(wanted_file(f)) << f;
  }
  for (const char* f :
       {"onnx/pytorch_model.bin", "training_args.bin", "optimizer.pt", "onnx/model_q4.onnx", "model.onnx.bak",
        "onnx/decoder_model.onnx", "model.onnx_data_2", "tf_model.h5", "flax_model.msgpack", "README.md",
        "onnx/model.safetensors", ".safetensors", "openvino/openvino_model.xml", "2_Dense/config.json"}) {
    EXPECT_FALSE(wanted_file(f)) << f;
  }
}

TEST(WantedFiles, TakesOneCopyOfTheWeights) {
  // Both formats: the safetensors only.
  const std::vector<std::string> both{"config.json",      "model.safetensors", "pytorch_model.bin",
                                      "sparse_linear.pt", "colbert_linear.pt", "onnx/model.onnx"};
  EXPECT_EQ(wanted_files(both), (std::vector<std::string>{"config.json", "model.safetensors",
                                                          "sparse_linear.pt", "colbert_linear.pt"}));
  // PyTorch's only (older repos): its weights, sharded or not.
  const std::vector<std::string> bin{"config.json", "pytorch_model.bin.index.json",
                                     "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin",
                                     "tf_model.h5"};
  EXPECT_EQ(wanted_files(bin), (std::vector<std::string>{"config.json", "pytorch_model.bin.index.json",
                                                         "pytorch_model-00001-of-00002.bin",
                                                         "pytorch_model-00002-of-00002.bin"}));
  EXPECT_TRUE(has_weights(wanted_files(bin)));
  // An index alone is no weights.
  EXPECT_FALSE(has_weights(std::vector<std::string>{"config.json", "pytorch_model.bin.index.json"}));
}

// --format: the ONNX graph of the loader's order with its external data, instead of the
// checkpoint (onnx), only when there is no checkpoint (auto), or never (safetensors).
TEST(WantedFiles, TakesTheOnnxGraphTheFormatAsksFor) {
  for (const char* f : {"model.onnx", "onnx/model.onnx", "model_optimized.onnx", "onnx/model_quantized.onnx",
                        "model.onnx_data", "onnx/model.onnx.data"}) {
    EXPECT_TRUE(wanted_file(f)) << f;
  }
  // transformers.js's layout: several graphs in onnx/, no checkpoint.
  const std::vector<std::string> js{"config.json", "tokenizer.json", "onnx/model.onnx",
                                    "onnx/model_fp16.onnx", "onnx/model_quantized.onnx"};
  const std::vector<std::string> want_js{"config.json", "tokenizer.json", "onnx/model.onnx"};
  EXPECT_EQ(wanted_files(js), want_js);
  EXPECT_EQ(wanted_files(js, WeightFormat::Onnx), want_js);
  EXPECT_FALSE(has_weights(wanted_files(js, WeightFormat::Safetensors)));
  // fastembed's Qdrant repos: the optimised graph at the top.
  const std::vector<std::string> q{"config.json", "model_optimized.onnx", "tokenizer.json"};
  EXPECT_EQ(wanted_files(q), q);
  // Both: auto takes the checkpoint; onnx the graph and its external data, not the checkpoint.
  const std::vector<std::string> both{"config.json", "model.safetensors", "model.onnx", "model.onnx_data",
                                      "onnx/model.onnx"};
  EXPECT_EQ(wanted_files(both), (std::vector<std::string>{"config.json", "model.safetensors"}));
  EXPECT_EQ(wanted_files(both, WeightFormat::Onnx),
            (std::vector<std::string>{"config.json", "model.onnx", "model.onnx_data"}));
  EXPECT_TRUE(has_weights(wanted_files(both, WeightFormat::Onnx)));
}

TEST(HubOptions, ReadsTheEnvironmentWithHuggingfaceHubPrecedence) {
  ::setenv("HF_ENDPOINT", "http://mirror.example/", 1);
  ::setenv("HF_HOME", "/tmp/warden-hf-home-test", 1);
  ::unsetenv("HF_HUB_CACHE");
  ::setenv("HF_TOKEN", " tok ", 1);
  ::setenv("HF_HUB_OFFLINE", "yes", 1);
  auto o = HubOptions::from_environment();
  EXPECT_EQ(o.endpoint, "http://mirror.example");
  EXPECT_EQ(o.cache_dir, std::filesystem::path("/tmp/warden-hf-home-test/hub"));
  EXPECT_EQ(o.token, "tok");
  EXPECT_TRUE(o.offline);
  ::setenv("HF_HUB_CACHE", "/tmp/other-cache", 1);
  ::unsetenv("HF_TOKEN");
  ::setenv("HUGGING_FACE_HUB_TOKEN", "old", 1);
  ::setenv("HF_HUB_OFFLINE", "0", 1);
  o = HubOptions::from_environment();
  EXPECT_EQ(o.cache_dir, std::filesystem::path("/tmp/other-cache"));
  EXPECT_EQ(o.token, "old");
  EXPECT_FALSE(o.offline);
  for (const char* v :
       {"HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"}) {
    ::unsetenv(v);
  }
}

}  // namespace
}  // namespace warden::hub
