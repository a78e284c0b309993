// libFuzzer: the restricted unpickler alone (a checkpoint's data.pkl), so that mutations reach
// it without the ZIP layer around: a list of tensor views or Error(CorruptFile), with the
// stack, the memo and nesting bounded whatever the opcodes say.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "model/formats/torch_pickle.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    for (const auto& t :
         warden::model::formats::read_state_dict_pickle(std::as_bytes(std::span(data, size)), "fuzz")) {
      if (t.shape.size() != t.stride.size()) std::abort();
    }
  } catch (const warden::Error& e) {
    if (e.kind() != warden::ErrorKind::CorruptFile) std::abort();
  }
  return 0;
}
