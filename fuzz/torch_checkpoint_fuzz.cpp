// libFuzzer: any byte string given to the PyTorch checkpoint reader (a ZIP archive holding a
// pickled state dict) either gives tensors whose bytes lie inside the input, or throws
// warden::Error (CorruptFile, or Unsupported for compressed entries, non-contiguous tensors and
// the pre-1.6 format). The unpickler never executes anything whatever the pickle says.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "model/formats/torch_checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  try {
    for (const auto& t : warden::model::formats::parse_torch_checkpoint(bytes, "fuzz")) {
      if (t.data.data() < bytes.data() || t.data.data() + t.data.size() > bytes.data() + bytes.size())
        std::abort();
      if (t.data.size() != t.element_count() * warden::model::formats::dtype_size(t.dtype)) std::abort();
    }
  } catch (const warden::Error& e) {
    if (e.kind() != warden::ErrorKind::CorruptFile && e.kind() != warden::ErrorKind::Unsupported)
      std::abort();
  }
  return 0;
}
