// libFuzzer: any model.safetensors beside a tiny config.json either loads — in every
// precision, int8 checkpoints (I8 weights + "_scale" tensors, `warden quantize`) included —
// and runs a forward pass, or throws warden::Error; never anything else. The config is BERT's,
// DeBERTa-v3's (relative attention over log buckets, shared keys, a normalised table) when the
// bytes mention "rel_embeddings", JinaBERT's (ALiBi, GEGLU) when they mention "gated_layers",
// MPNet's, NomicBERT's (with mixture-of-experts layers when it names a router), GTE's and
// jina-embeddings-v3's (task adapters, run on a second sequence) by their own tensor names; bytes naming
// "embeddings" or "mapping" are read as a static (model2vec) table instead. Seeds: fuzz/corpus/model (float32
// and int8 BERT checkpoints; one per other family, written by fuzz/make_model_seeds.py).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/file.hpp"
#include "kernels/dense.hpp"
#include "model/encoder_model.hpp"
#include "model/static_models/static_model.hpp"

namespace {

constexpr std::string_view kBertConfig = R"({"architectures": ["BertModel"], "model_type": "bert",
 "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
 "vocab_size": 8, "max_position_embeddings": 8, "type_vocab_size": 1, "hidden_act": "gelu",
 "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "absolute"})";

constexpr std::string_view kDebertaConfig = R"({"architectures": ["DebertaV2Model"],
 "model_type": "deberta-v2", "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2,
 "intermediate_size": 8, "vocab_size": 8, "max_position_embeddings": 8, "type_vocab_size": 0,
 "relative_attention": true, "position_buckets": 4, "max_relative_positions": -1,
 "pos_att_type": ["p2c", "c2p"], "share_att_key": true, "norm_rel_ebd": "layer_norm",
 "position_biased_input": false, "layer_norm_eps": 1e-7, "pad_token_id": 0})";

constexpr std::string_view kJinaBertConfig = R"({"architectures": ["JinaBertModel"], "model_type": "bert",
 "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
 "vocab_size": 8, "max_position_embeddings": 8, "type_vocab_size": 2, "hidden_act": "gelu",
 "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "alibi",
 "feed_forward_type": "geglu"})";

constexpr std::string_view kMpnetConfig = R"({"architectures": ["MPNetForMaskedLM"], "model_type": "mpnet",
 "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
 "vocab_size": 8, "max_position_embeddings": 8, "hidden_act": "gelu", "layer_norm_eps": 1e-5,
 "pad_token_id": 1, "relative_attention_num_buckets": 32})";

constexpr std::string_view kNomicConfig = R"({"architectures": ["NomicBertModel"], "model_type": "nomic_bert",
 "n_embd": 4, "n_layer": 1, "n_head": 2, "n_inner": 8, "n_positions": 16, "vocab_size": 8,
 "activation_function": "swiglu", "qkv_proj_bias": false, "mlp_fc1_bias": false, "mlp_fc2_bias": false,
 "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0, "rotary_scaling_factor": 2.0,
 "max_trained_positions": 4, "layer_norm_epsilon": 1e-12, "type_vocab_size": 2})";

// Two layers, the second a mixture of two experts with both kept per token (nomic-embed-text-v2-moe's).
constexpr std::string_view kNomicMoeConfig =
    R"({"architectures": ["NomicBertModel"], "model_type": "nomic_bert",
 "n_embd": 4, "n_layer": 2, "n_head": 2, "n_inner": 8, "n_positions": 16, "vocab_size": 8,
 "activation_function": "gelu", "qkv_proj_bias": true, "mlp_fc1_bias": true, "mlp_fc2_bias": true,
 "rotary_emb_base": 10000, "rotary_emb_fraction": 1.0, "layer_norm_epsilon": 1e-5, "type_vocab_size": 1,
 "moe_every_n_layers": 2, "num_experts": 2, "moe_top_k": 2})";

constexpr std::string_view kGteConfig = R"({"architectures": ["NewModel"], "model_type": "new",
 "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
 "vocab_size": 8, "max_position_embeddings": 16, "type_vocab_size": 0, "hidden_act": "gelu",
 "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "rope", "rope_theta": 500000,
 "rope_scaling": {"factor": 2.0, "type": "ntk"}, "pack_qkv": true})";

// Two layers: a global one and a local one with a window of 2 each side.
constexpr std::string_view kModernBertConfig =
    R"({"architectures": ["ModernBertModel"], "model_type": "modernbert",
 "hidden_size": 4, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8,
 "vocab_size": 8, "max_position_embeddings": 16, "hidden_activation": "gelu", "norm_eps": 1e-5,
 "norm_bias": false, "attention_bias": false, "mlp_bias": false, "local_attention": 4,
 "global_attn_every_n_layers": 2, "global_rope_theta": 160000.0, "local_rope_theta": 10000.0})";

// jina-embeddings-v3's remote code (XLMRobertaFlashConfig): rotary XLM-R with two task adapters.
constexpr std::string_view kJinaV3Config =
    R"({"architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta",
 "auto_map": {"AutoConfig": "jinaai/xlm-roberta-flash-implementation--configuration_xlm_roberta.XLMRobertaFlashConfig"},
 "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
 "vocab_size": 8, "max_position_embeddings": 16, "type_vocab_size": 1, "hidden_act": "gelu",
 "layer_norm_eps": 1e-5, "pad_token_id": 1, "position_embedding_type": "rotary", "rotary_emb_base": 20000.0,
 "lora_adaptations": ["a", "b"], "task_instructions": {"a": "", "b": ""}, "lora_rank": 2, "lora_alpha": 1,
 "load_trained_adapters": true})";

bool mentions(const std::uint8_t* data, std::size_t size, std::string_view word) {
  return std::string_view(reinterpret_cast<const char*>(data), size).find(word) != std::string_view::npos;
}

// The model folder, with the config the input calls for.
const std::filesystem::path& model_dir(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = [] {
    const auto d =
        std::filesystem::temp_directory_path() / ("warden-fuzz-model-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    // Every input is a new file: no packed image would ever be used, so none is written.
    ::setenv("WARDEN_PACK_CACHE", "off", 1);
    return d;
  }();
  static std::string_view written;
  const std::string_view config = mentions(data, size, "parametrizations")          ? kJinaV3Config
                                  : mentions(data, size, "gated_layers")            ? kJinaBertConfig
                                  : mentions(data, size, "rel_embeddings")          ? kDebertaConfig
                                  : mentions(data, size, "relative_attention_bias") ? kMpnetConfig
                                  : mentions(data, size, "router")                  ? kNomicMoeConfig
                                  : mentions(data, size, "Wqkv")                    ? kNomicConfig
                                  : mentions(data, size, "up_gate_proj")            ? kGteConfig
                                  : mentions(data, size, "tok_embeddings")          ? kModernBertConfig
                                                                                    : kBertConfig;
  if (config.data() != written.data()) {
    warden::write_file_atomic(dir / "config.json", config);
    written = config;
  }
  return dir;
}

}  // namespace

// A static (model2vec) table: the file as model2vec's model.safetensors ("embeddings", and the
// vocabulary-quantised "weights" / "mapping"), every token id embedded.
void fuzz_static_model(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = [] {
    const auto d =
        std::filesystem::temp_directory_path() / ("warden-fuzz-static-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  {
    std::ofstream out(dir / "model.safetensors", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const auto model = warden::model::static_models::StaticModel::load(
        {warden::model::static_models::StaticRules::Model2Vec, dir, true});
    std::vector<float> out(model->dim());
    std::vector<std::uint32_t> ids;
    for (std::uint32_t id = 0; id < model->vocab() && id < 64; ++id) ids.push_back(id);
    model->embed(ids, out);
  } catch (const warden::Error&) {
    // A named, clean refusal.
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (mentions(data, size, "\"embeddings\"") || mentions(data, size, "\"mapping\"")) {
    fuzz_static_model(data, size);
    return 0;
  }
  const std::filesystem::path& dir = model_dir(data, size);
  {
    std::ofstream out(dir / "model.safetensors", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  using warden::Precision;
  for (const Precision p : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
    try {
      const auto model = warden::model::load_encoder_model(dir, nullptr, warden::active_isa(), p);
      warden::model::engine::TokenBatch batch;
      batch.add(std::vector<std::uint32_t>{1, 2, 3});
      // A task adapter, when the model has some (jina-embeddings-v3's).
      if (!model->config.task_adapters.empty()) batch.add(std::vector<std::uint32_t>{0, 4, 2}, {}, 0, 1);
      model->encoder.validate(batch);
      warden::model::engine::EncoderWorkspace ws;
      (void)model->encoder.forward(batch, ws, nullptr);
    } catch (const warden::Error&) {
      // A named, clean refusal: what a bad file must get.
    }
  }
  return 0;
}
