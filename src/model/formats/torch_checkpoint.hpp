#pragma once
// PyTorch checkpoints (pytorch_model.bin, *.pt) as torch.save has written them since 1.6: a ZIP
// archive (model/formats/zip_archive.hpp) of <name>/data.pkl — the pickled state dict, read by the
// restricted unpickler of model/formats/torch_pickle.hpp, which executes nothing — and one
// <name>/data/<key> entry of raw little-endian bytes per storage. Each tensor becomes a view
// into the memory-mapped file, exactly as a safetensors tensor is (model/formats/safetensors.hpp's
// Tensor), so the engine reads both the same way.
//
// Checked: every tensor's storage exists and holds exactly its declared elements; the tensor's
// view (offset + elements) lies inside it; it is C-contiguous (other strides are
// Error(Unsupported), naming the tensor); names are unique. The pre-1.6 format (a bare pickle
// stream, not a ZIP) is Error(Unsupported) with how to convert it.

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/file.hpp"
#include "model/formats/safetensors.hpp"

namespace warden::model::formats {

// The tensors of a checkpoint image held in memory (their spans point into `bytes`), in the
// state dict's order. `file_name` names the file in errors. (The entry point the fuzz target
// drives.)
std::vector<Tensor> parse_torch_checkpoint(std::span<const std::byte> bytes, std::string_view file_name);

// One memory-mapped checkpoint file. Move-only; the tensors' spans stay valid for its lifetime.
class TorchCheckpoint {
 public:
  explicit TorchCheckpoint(const std::filesystem::path& path);  // throws NotFound/Io/CorruptFile/Unsupported

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::span<const Tensor> tensors() const noexcept { return tensors_; }
  // The whole mapped file.
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return file_.bytes(); }
  // nullptr when the checkpoint has no tensor of that name.
  [[nodiscard]] const Tensor* find(std::string_view name) const noexcept;

 private:
  std::filesystem::path path_;
  MappedFile file_;
  std::vector<Tensor> tensors_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

}  // namespace warden::model::formats
