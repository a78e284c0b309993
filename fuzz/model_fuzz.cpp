// libFuzzer: any model.safetensors beside a fixed tiny BERT config.json either loads — in
// every precision, int8 checkpoints (I8 weights + "_scale" tensors, `warden quantize`)
// included — and runs a forward pass, or throws warden::Error; never anything else.
// Seeds: fuzz/corpus/model (a float32 and an int8 checkpoint of that config).

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

namespace {

constexpr std::string_view kConfig = R"({"architectures": ["BertModel"], "model_type": "bert",
 "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
 "vocab_size": 8, "max_position_embeddings": 8, "type_vocab_size": 1, "hidden_act": "gelu",
 "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "absolute"})";

const std::filesystem::path& model_dir() {
  static const std::filesystem::path dir = [] {
    const auto d =
        std::filesystem::temp_directory_path() / ("warden-fuzz-model-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    warden::write_file_atomic(d / "config.json", kConfig);
    // Every input is a new file: no packed image would ever be used, so none is written.
    ::setenv("WARDEN_PACK_CACHE", "off", 1);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path& dir = model_dir();
  {
    std::ofstream out(dir / "model.safetensors", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  using warden::Precision;
  for (const Precision p : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
    try {
      const auto model = warden::model::load_encoder_model(dir, nullptr, warden::active_isa(), p);
      warden::model::TokenBatch batch;
      batch.add(std::vector<std::uint32_t>{1, 2, 3});
      model->encoder.validate(batch);
      warden::model::EncoderWorkspace ws;
      (void)model->encoder.forward(batch, ws, nullptr);
    } catch (const warden::Error&) {
      // A named, clean refusal: what a bad file must get.
    }
  }
  return 0;
}
