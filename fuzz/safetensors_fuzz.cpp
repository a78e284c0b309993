// libFuzzer: any byte string given to the safetensors reader either parses into tensors that
// lie inside the input, or throws warden::Error(CorruptFile).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "model/formats/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  try {
    const auto header = warden::model::formats::parse_safetensors(bytes, "fuzz");
    for (const auto& t : header.tensors) {
      if (t.data.data() < bytes.data() || t.data.data() + t.data.size() > bytes.data() + bytes.size())
        std::abort();
      if (t.data.size() != t.element_count() * warden::model::formats::dtype_size(t.dtype)) std::abort();
      if (t.dtype == warden::model::formats::Dtype::F32 || t.dtype == warden::model::formats::Dtype::F16 ||
          t.dtype == warden::model::formats::Dtype::BF16) {
        if (t.element_count() <= (1U << 20)) (void)warden::model::formats::to_float32(t);
      }
    }
  } catch (const warden::Error& e) {
    if (e.kind() != warden::ErrorKind::CorruptFile) std::abort();
  }
  return 0;
}
