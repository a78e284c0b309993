#pragma once
// All the weights of one model: a single model.safetensors, or a sharded checkpoint whose
// model.safetensors.index.json maps each tensor name to the shard file that holds it
// ({"metadata": {...}, "weight_map": {"name": "model-00001-of-00002.safetensors", ...}}); or,
// for repos that ship no safetensors, PyTorch's pytorch_model.bin (or its sharded
// pytorch_model.bin.index.json), read without executing anything (model/formats/torch_checkpoint.hpp).
// Both give the same tensor views into the mapped files.
//
// Opening a sharded checkpoint checks that every shard named in the index is a plain file
// name in the same folder (no paths: a hostile index must not reach outside the model),
// that it exists and is a valid safetensors file, and that every listed tensor is in the
// shard the index says. Tensors a shard holds but the index does not list are not exposed,
// as in transformers, which loads through the weight map.

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/formats/safetensors.hpp"
#include "model/formats/torch_checkpoint.hpp"

namespace warden::model::formats {

// Tensors viewing a file of another format, named as the checkpoint names them (an ONNX graph's
// initializers, read by model/onnx/onnx_encoder.hpp); `owner` keeps what they view alive.
struct TensorViews {
  std::filesystem::path path;
  std::span<const std::byte> bytes;  // the file's bytes (the packed-image cache hashes them)
  std::vector<Tensor> tensors;
  std::shared_ptr<const void> owner;

  [[nodiscard]] const Tensor* find(std::string_view name) const noexcept;
  // Makes the tensor `existing` answer to `name` as well (a family whose checkpoints keep a
  // weight under another name: torch parametrizations' "X.parametrizations.weight.original" for
  // "X.weight"). Errors name the tensor as its file does. Error(Internal) when `existing` is
  // missing or `name` is taken.
  void alias(const std::string& name, std::string_view existing);
};

// One file of a checkpoint: safetensors (by its extension) or a PyTorch checkpoint (anything
// else: .bin, .pt, .pth), or tensor views of another format. Move-only, like the files it holds.
class WeightFile {
 public:
  explicit WeightFile(const std::filesystem::path& path);
  explicit WeightFile(TensorViews views);
  [[nodiscard]] const std::filesystem::path& path() const noexcept;
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept;
  [[nodiscard]] std::span<const Tensor> tensors() const noexcept;
  [[nodiscard]] const Tensor* find(std::string_view name) const noexcept;
  // Makes the tensor `existing` answer to `name` as well (a family whose checkpoints keep a
  // weight under another name: torch parametrizations' "X.parametrizations.weight.original" for
  // "X.weight"). Errors name the tensor as its file does. Error(Internal) when `existing` is
  // missing or `name` is taken.
  void alias(const std::string& name, std::string_view existing);

 private:
  std::variant<SafetensorsFile, TorchCheckpoint, TensorViews> file_;
};

// The per-row scales of an I8 weight "X" are the tensor "X_scale" (`warden quantize`).
inline constexpr std::string_view kInt8ScaleSuffix = "_scale";

class ModelWeights {
 public:
  // The first of model.safetensors, model.safetensors.index.json, pytorch_model.bin and
  // pytorch_model.bin.index.json in `dir`; Error(NotFound) when the folder has none.
  static ModelWeights open_dir(const std::filesystem::path& dir);
  // The file open_dir would open, or nullopt.
  static std::optional<std::filesystem::path> checkpoint_in(const std::filesystem::path& dir);
  // One weight file (safetensors, or a PyTorch checkpoint), or an index of shards of either.
  static ModelWeights open_file(const std::filesystem::path& path);
  static ModelWeights open_index(const std::filesystem::path& index_path);
  // Tensors of another format, already named (names must be unique: Error(Internal) otherwise);
  // the first file is the source.
  static ModelWeights from_views(std::vector<TensorViews> files);

  [[nodiscard]] const Tensor* find(std::string_view name) const noexcept;
  // Makes the tensor `existing` answer to `name` as well (a family whose checkpoints keep a
  // weight under another name: torch parametrizations' "X.parametrizations.weight.original" for
  // "X.weight"). Errors name the tensor as its file does. Error(Internal) when `existing` is
  // missing or `name` is taken.
  void alias(const std::string& name, std::string_view existing);
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
  [[nodiscard]] std::span<const WeightFile> files() const noexcept { return files_; }

 private:
  ModelWeights() = default;
  const Tensor& check(std::string_view name, std::span<const std::size_t> shape, bool int8_ok) const;
  std::filesystem::path source_;
  std::vector<WeightFile> files_;
  // Points into files_' tensor vectors, whose heap storage does not move when files_ grows.
  std::map<std::string, const Tensor*, std::less<>> tensors_;
};

}  // namespace warden::model::formats
