#pragma once
// A bounds-checked reader of the protocol-buffers wire format, over bytes it does not own
// (a memory-mapped .onnx file): each field's number, wire type and value — a varint, a
// fixed32/fixed64, or a view of a length-delimited payload. It never allocates, never reads
// past its span, and refuses what a well-formed message cannot hold (groups, field number 0,
// a varint longer than 10 bytes, a length past the end) with Error(CorruptFile) naming the
// source and the byte offset. Messages nest by reading a length-delimited payload with a new
// reader; callers bound the depth.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace warden::model::onnx {

enum class WireType : std::uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

struct WireField {
  std::uint32_t number = 0;
  WireType type = WireType::Varint;
  std::uint64_t value = 0;           // Varint, Fixed64, Fixed32 (zero-extended)
  std::span<const std::byte> bytes;  // Bytes: the payload
  std::size_t offset = 0;            // where the field starts, from the message's start
};

class WireReader {
 public:
  // `source` names the file in errors; `base` is the message's offset in it.
  WireReader(std::span<const std::byte> bytes, std::string_view source, std::size_t base = 0) noexcept
      : bytes_(bytes), source_(source), base_(base) {}

  // The next field, or false at the end of the message.
  bool next(WireField& field);

  // A nested message's reader (a Bytes field's payload).
  [[nodiscard]] WireReader nested(const WireField& field) const noexcept {
    return {field.bytes, source_, base_ + field.offset};
  }

  // Error(CorruptFile) naming the source and the offset of `field` and what was wrong.
  [[noreturn]] void fail(const WireField& field, std::string_view what) const;
  [[nodiscard]] std::string_view source() const noexcept { return source_; }
  [[nodiscard]] std::size_t base() const noexcept { return base_; }

 private:
  std::uint64_t varint(std::size_t& at) const;
  [[noreturn]] void fail_at(std::size_t at, std::string_view what) const;

  std::span<const std::byte> bytes_;
  std::string_view source_;
  std::size_t base_ = 0;
  std::size_t at_ = 0;
};

// One element of a repeated scalar field, or a packed run of them, appended to `out`
// (Error(CorruptFile) for a payload that is not whole values, or the wrong wire type).
// At most `limit` values in all (`out` counts), as a bound on what a file can make us hold.
void append_varints(const WireReader& reader, const WireField& field, std::vector<std::uint64_t>& out,
                    std::size_t limit);
void append_fixed32(const WireReader& reader, const WireField& field, std::vector<std::uint32_t>& out,
                    std::size_t limit);

// A varint field's value as a signed 64-bit integer (protobuf's int64: two's complement).
[[nodiscard]] inline std::int64_t as_int64(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>(v);
}

}  // namespace warden::model::onnx
