// libFuzzer: an ONNX ModelProto through Warden's wire-format reader (src/model/onnx/), with
// external data served from a fixed 4 KiB buffer (a request past it throws, as a file's end
// would): a model whose every tensor holds exactly its shape's bytes, or Error(CorruptFile /
// Unsupported), with lengths, counts, dimensions and nesting bounded whatever the bytes say.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "model/onnx/onnx_model.hpp"

namespace {

void check(const warden::model::onnx::Tensor& t) {
  const std::size_t size = warden::model::onnx::data_type_size(t.type);
  if (size != 0 && t.data.size() != t.element_count() * size) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::array<std::byte, 4096> external_bytes{};
  const warden::model::onnx::ExternalData external = [](const std::string&, std::uint64_t offset,
                                                        std::optional<std::uint64_t> length) {
    const std::span<const std::byte> all(external_bytes);
    if (offset > all.size() || (length && *length > all.size() - offset)) {
      throw warden::Error(warden::ErrorKind::CorruptFile, "external data past the end");
    }
    return all.subspan(offset, length ? *length : all.size() - offset);
  };
  try {
    const warden::model::onnx::Model m =
        warden::model::onnx::parse_model(std::as_bytes(std::span(data, size)), "fuzz", external);
    for (const auto& t : m.graph.initializers) check(t);
    for (const auto& n : m.graph.nodes) {
      for (const auto& a : n.attributes) {
        if (a.t) check(*a.t);
      }
    }
  } catch (const warden::Error& e) {
    if (e.kind() != warden::ErrorKind::CorruptFile && e.kind() != warden::ErrorKind::Unsupported)
      std::abort();
  }
  return 0;
}
