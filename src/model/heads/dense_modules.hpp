#pragma once
// sentence-transformers' Dense modules after the Pooling module (EmbeddingGemma's 2_Dense and
// 3_Dense, 768 -> 3072 -> 768): each activation(Linear(pooled)), applied in modules.json's order
// to the pooled vector before any Normalize. float32 whatever the encoder's precision: they run
// once per sequence, not per token.

#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

#include "core/cpu_features.hpp"
#include "kernels/activation.hpp"
#include "kernels/gemm.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden {
class ThreadPool;
}  // namespace warden

namespace warden::model::heads {

struct DenseModule {
  kernels::PackedLinear linear;  // in -> out, with its bias when the module has one
  kernels::Activation activation = kernels::Activation::None;
};

// The Dense modules of `modules` that follow its Pooling module, read from their folders under
// `dir` (config.json, then model.safetensors or pytorch_model.bin: "linear.weight" [out x in] and
// "linear.bias"). Each in_features must be the width before it (the first: `pooled`).
// Error(CorruptFile) names the file for a wrong shape or width; Error(Unsupported) a Dense module
// before the Pooling, an activation Warden does not run, or a module kind it does not run (other
// than Transformer, Pooling, Dense, Normalize and the SPLADE modules): running a folder without
// one of its modules would give other vectors than sentence-transformers does.
std::vector<DenseModule> read_pooled_dense_modules(const std::filesystem::path& dir,
                                                   const metadata::StModules& modules, std::size_t pooled,
                                                   Isa isa);

// The width the chain gives for `pooled`-wide input (`pooled` when it is empty).
std::size_t dense_modules_width(std::span<const DenseModule> chain, std::size_t pooled) noexcept;

// in: rows x pooled; out: rows x dense_modules_width(chain, pooled). `in` and `out` may not overlap.
void apply_dense_modules(std::span<const DenseModule> chain, std::span<const float> in, std::size_t rows,
                         std::span<float> out, ThreadPool* pool);

}  // namespace warden::model::heads
