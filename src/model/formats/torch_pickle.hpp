#pragma once
// A restricted unpickler for PyTorch state dicts (the data.pkl of a torch.save archive).
// Python's pickle is a program: opcodes that build objects by calling whatever global they
// name. This reader runs none of it. It understands only the opcodes a state dict needs
// (protocols 2-5: numbers, strings, tuples, lists, dicts, the memo, persistent ids) and only
// the globals whose effect it knows and re-implements — collections.OrderedDict,
// torch._utils._rebuild_tensor_v2 and _rebuild_parameter, and the typed storage classes
// (torch.FloatStorage, ...) inside persistent ids. Any other global (os.system,
// builtins.eval, ...) or opcode is Error(CorruptFile) naming it, before anything could be
// called; the stack, the memo and nesting are bounded, so no input can exhaust memory or the
// C++ stack.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/formats/safetensors.hpp"

namespace warden::model::formats {

// One tensor of the state dict: its storage (the archive's data/<storage_key> entry, of
// storage_elements elements of `dtype`) and its view into it.
struct PickledTensor {
  std::string name;
  std::string storage_key;
  Dtype dtype = Dtype::F32;
  std::uint64_t storage_elements = 0;
  std::uint64_t offset = 0;  // in elements
  std::vector<std::size_t> shape;
  std::vector<std::int64_t> stride;
};

// The tensors of the pickled state dict `pickle` (a dict, or OrderedDict, of names to tensors;
// a nested "state_dict" / "model" dict is not unwrapped). `file_name` names the file in errors.
std::vector<PickledTensor> read_state_dict_pickle(std::span<const std::byte> pickle,
                                                  std::string_view file_name);

}  // namespace warden::model::formats
