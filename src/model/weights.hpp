#pragma once
// All the weights of one model: a single model.safetensors, or a sharded checkpoint whose
// model.safetensors.index.json maps each tensor name to the shard file that holds it
// ({"metadata": {...}, "weight_map": {"name": "model-00001-of-00002.safetensors", ...}}).
//
// Opening a sharded checkpoint checks that every shard named in the index is a plain file
// name in the same folder (no paths: a hostile index must not reach outside the model),
// that it exists and is a valid safetensors file, and that every listed tensor is in the
// shard the index says. Tensors a shard holds but the index does not list are not exposed,
// as in transformers, which loads through the weight map.

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/safetensors.hpp"

namespace warden {

// The per-row scales of an I8 weight "X" are the tensor "X_scale" (`warden quantize`).
inline constexpr std::string_view kInt8ScaleSuffix = "_scale";

class ModelWeights {
 public:
  // model.safetensors in `dir` if present, else model.safetensors.index.json; Error(NotFound)
  // when the folder has neither.
  static ModelWeights open_dir(const std::filesystem::path& dir);
  static ModelWeights open_file(const std::filesystem::path& safetensors_path);
  static ModelWeights open_index(const std::filesystem::path& index_path);

  [[nodiscard]] const Tensor* find(std::string_view name) const noexcept;
  // The tensor `name` with exactly `shape` and a float dtype (F32, F16 or BF16): what the
  // engine asks for each weight. Throws Error(CorruptFile) naming the tensor and the source
  // when it is missing, has another shape, or another dtype.
  [[nodiscard]] const Tensor& require(std::string_view name, std::span<const std::size_t> shape) const;
  [[nodiscard]] const Tensor& require(std::string_view name, std::initializer_list<std::size_t> shape) const {
    return require(name, std::span<const std::size_t>(shape.begin(), shape.size()));
  }

  // As require(), also accepting I8: the int8 checkpoints `warden quantize` writes, where a
  // weight "X" [n x k] is I8 with its per-row scales "X_scale" (F32 [n]) beside it.
  [[nodiscard]] const Tensor& require_weight(std::string_view name,
                                             std::initializer_list<std::size_t> shape) const;

  // Tensor names in byte order.
  [[nodiscard]] std::vector<std::string_view> names() const;
  [[nodiscard]] std::size_t size() const noexcept { return tensors_.size(); }
  // The file the weights came from (model.safetensors or the index).
  [[nodiscard]] const std::filesystem::path& source() const noexcept { return source_; }
  [[nodiscard]] std::span<const SafetensorsFile> files() const noexcept { return files_; }

 private:
  ModelWeights() = default;
  const Tensor& check(std::string_view name, std::span<const std::size_t> shape, bool int8_ok) const;
  std::filesystem::path source_;
  std::vector<SafetensorsFile> files_;
  // Points into files_' tensor vectors, whose heap storage does not move when files_ grows.
  std::map<std::string, const Tensor*, std::less<>> tensors_;
};

}  // namespace warden
