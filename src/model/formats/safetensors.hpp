#pragma once
// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON header, then the data region. The header
// maps tensor names to {dtype, shape, data_offsets [begin, end)} relative to the data
// region, plus an optional "__metadata__" string-to-string map.
//
// Reading memory-maps the file and validates everything a broken or hostile file can get
// wrong, with the same rules as the Rust `safetensors` crate: header length within the
// file and at most 100 MB, valid UTF-8 JSON object, known dtypes, bytes == product(shape) x
// dtype size (overflow-checked), tensors that tile the data region exactly (sorted by
// offset, each starting where the previous ended, the last ending at the end of the file:
// no overlap, no hole, no trailing bytes), no duplicate names. Every failure is
// Error(CorruptFile) naming the file and, where there is one, the tensor.
//
// Writing produces byte-for-byte what the Python/Rust library writes (see serialize).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/file.hpp"

namespace warden::model::formats {

// Element types, in the Rust crate's declaration order (its serializer sorts by this order,
// descending, so the order is part of the file format we reproduce).
enum class Dtype : std::uint8_t {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64
};

[[nodiscard]] std::size_t dtype_size(Dtype dtype) noexcept;
[[nodiscard]] std::string_view dtype_name(Dtype dtype) noexcept;  // "F32", as in the header
[[nodiscard]] std::optional<Dtype> parse_dtype(std::string_view name) noexcept;

// One tensor of a file: a view into the mapped bytes (valid while the file is open).
struct Tensor {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<std::size_t> shape;
  std::span<const std::byte> data;  // little-endian, C order; not necessarily aligned
  // A matrix [shape[0] x shape[1]] whose data hold its transpose, [shape[1] x shape[0]] (an
  // ONNX MatMul's [in x out] weight presented as nn.Linear's [out x in]): read only through
  // to_float32, which transposes as it converts; is_aligned_float32 is false for it.
  bool transposed = false;

  [[nodiscard]] std::size_t element_count() const noexcept;
};

// The parsed header of a safetensors byte image. Tensors are in file (offset) order.
struct SafetensorsHeader {
  std::vector<Tensor> tensors;
  std::map<std::string, std::string> metadata;
  std::size_t header_length = 0;  // N, the JSON header's length in bytes
};

// Parses and validates a whole safetensors image held in memory. `file_name` only names the
// file in error messages. The tensors' spans point into `bytes`. Throws Error(CorruptFile).
// (This is the entry point the fuzz target drives.)
SafetensorsHeader parse_safetensors(std::span<const std::byte> bytes, std::string_view file_name);

// One memory-mapped, validated safetensors file. Move-only; the tensors' spans stay valid
// for the object's lifetime (moves do not move the mapping).
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::filesystem::path& path);  // throws NotFound/Io/CorruptFile

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::span<const Tensor> tensors() const noexcept { return header_.tensors; }
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const noexcept {
    return header_.metadata;
  }
  // nullptr when the file has no tensor of that name.
  [[nodiscard]] const Tensor* find(std::string_view name) const noexcept;
  // The whole mapped file.
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return file_.bytes(); }

 private:
  std::filesystem::path path_;
  MappedFile file_;
  SafetensorsHeader header_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

// Whether the tensor is F32 and 4-byte aligned in its mapping: then as_float32() views it in place.
[[nodiscard]] bool is_aligned_float32(const Tensor& tensor) noexcept;
// The floats of such a tensor, in place (empty for any other).
[[nodiscard]] std::span<const float> as_float32(const Tensor& tensor) noexcept;

// Converts an F32, F16 or BF16 tensor to float32 (exactly: every f16/bf16 value is a float).
// Throws Error(Unsupported) for other dtypes, naming the tensor; `out` must hold
// element_count() floats (Error(Internal) otherwise).
void to_float32(const Tensor& tensor, std::span<float> out);
[[nodiscard]] std::vector<float> to_float32(const Tensor& tensor);

// Scalar conversions, exposed for the kernels' tests and the writer's callers.
[[nodiscard]] float f16_to_float(std::uint16_t bits) noexcept;
[[nodiscard]] float bf16_to_float(std::uint16_t bits) noexcept;
// float32 -> half / bfloat16, rounding to nearest even as torch's .half() / .bfloat16() do
// (overflow becomes infinity, NaN stays a quiet NaN).
[[nodiscard]] std::uint16_t float_to_f16(float value) noexcept;
[[nodiscard]] std::uint16_t float_to_bf16(float value) noexcept;

// ---- writing ----------------------------------------------------------------------------

struct TensorToWrite {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<std::size_t> shape;
  std::span<const std::byte> data;  // exactly product(shape) x dtype_size bytes
};

// The bytes `safetensors.torch.save_file(tensors, metadata=...)` writes: tensors sorted by
// dtype (the Rust enum order, descending: largest alignment first) then by name, laid out
// back to back in that order; the header is compact JSON with "__metadata__" first (omitted
// when `metadata` is empty), its keys sorted, then the tensors in layout order, each
// {"dtype","shape","data_offsets"}; the header is padded with spaces to a multiple of 8 so
// that the data region is 8-byte aligned. Deterministic. Throws Error(InvalidArgument) on a
// size mismatch or a duplicate name.
std::string serialize_safetensors(std::span<const TensorToWrite> tensors,
                                  const std::map<std::string, std::string>& metadata);

// serialize_safetensors written atomically to `path`.
void write_safetensors(const std::filesystem::path& path, std::span<const TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata);

}  // namespace warden::model::formats
