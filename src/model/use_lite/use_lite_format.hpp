#pragma once
// The on-disk form of a converted USE-lite model folder (written by `warden convert-use`,
// read by UseLiteModel), shared by the converter and the loader so the two cannot drift:
//
//   config.json        {"architectures": ["UseLiteModel"], "model_type": "use-lite", sizes,
//                       and the graph's scalar constants (epsilons, attention scales)}
//   model.safetensors  float32 tensors named below; every linear weight in PyTorch's
//                      nn.Linear layout [out x in] (the TF.js files store [in x out])
//   vocab.json         the package's vocabulary, byte for byte (its quirks are part of the
//                      tokenizer's behaviour: see tokenizer/use_lite_tokenizer.hpp)
//   LICENSE            the package's licence (Apache-2.0)

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace warden::model::use_lite {

inline constexpr std::string_view kArchitecture = "UseLiteModel";
inline constexpr std::string_view kModelType = "use-lite";
inline constexpr std::string_view kConfigFile = "config.json";
inline constexpr std::string_view kWeightsFile = "model.safetensors";
inline constexpr std::string_view kVocabFile = "vocab.json";

inline constexpr std::string_view kEmbeddings = "embeddings.weight";                // [vocab x embed]
inline constexpr std::string_view kInvTimescales = "timing_signal.inv_timescales";  // [embed / 2]
inline constexpr std::string_view kHeadWeight = "head.weight";                      // [hidden x hidden]
inline constexpr std::string_view kHeadBias = "head.bias";

// Per layer: "layers.{L}.{part}.weight" / ".bias"; parts: input_projection (layer 0 only:
// the residual's [hidden x embed] projection), attention_norm, qkv, attention_output,
// ffn_norm, ffn_in, ffn_out.
inline std::string layer_tensor(std::size_t layer, std::string_view part, std::string_view kind) {
  return fmt::format("layers.{}.{}.{}", layer, part, kind);
}

}  // namespace warden::model::use_lite
