#include "model/onnx/protobuf_wire.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::model::onnx {

void WireReader::fail_at(std::size_t at, std::string_view what) const {
  throw Error(ErrorKind::CorruptFile, fmt::format("{}: at byte {}: {}", source_, base_ + at, what));
}

void WireReader::fail(const WireField& field, std::string_view what) const {
  fail_at(field.offset, what);
}

std::uint64_t WireReader::varint(std::size_t& at) const {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= bytes_.size()) fail_at(at, "a varint runs past the end of its message");
    const auto b = static_cast<std::uint8_t>(bytes_[at++]);
    // The tenth byte may only carry the top bit of a 64-bit value.
    if (shift == 63 && b > 1) fail_at(at - 1, "a varint does not fit 64 bits");
    v |= static_cast<std::uint64_t>(b & 0x7FU) << shift;
    if ((b & 0x80U) == 0) return v;
  }
  fail_at(at, "a varint longer than 10 bytes");
}

bool WireReader::next(WireField& field) {
  if (at_ >= bytes_.size()) return false;
  field = WireField{};
  field.offset = at_;
  const std::uint64_t key = varint(at_);
  const std::uint64_t number = key >> 3;
  if (number == 0 || number > 536870911U) fail_at(field.offset, "a field number outside [1, 2^29)");
  field.number = static_cast<std::uint32_t>(number);
  switch (key & 7U) {
    case 0:
      field.type = WireType::Varint;
      field.value = varint(at_);
      return true;
    case 1: {
      field.type = WireType::Fixed64;
      if (bytes_.size() - at_ < 8) fail_at(at_, "a fixed64 runs past the end of its message");
      std::memcpy(&field.value, bytes_.data() + at_, 8);
      at_ += 8;
      return true;
    }
    case 2: {
      field.type = WireType::Bytes;
      const std::uint64_t length = varint(at_);
      if (length > bytes_.size() - at_) {
        fail_at(field.offset, fmt::format("field {} claims {} bytes; {} are left", field.number, length,
                                          bytes_.size() - at_));
      }
      field.bytes = bytes_.subspan(at_, static_cast<std::size_t>(length));
      at_ += static_cast<std::size_t>(length);
      return true;
    }
    case 5: {
      field.type = WireType::Fixed32;
      if (bytes_.size() - at_ < 4) fail_at(at_, "a fixed32 runs past the end of its message");
      std::uint32_t v = 0;
      std::memcpy(&v, bytes_.data() + at_, 4);
      field.value = v;
      at_ += 4;
      return true;
    }
    default:
      fail_at(field.offset,
              fmt::format("field {} has wire type {} (groups are not part of ONNX)", number, key & 7U));
  }
}

void append_varints(const WireReader& reader, const WireField& field, std::vector<std::uint64_t>& out,
                    std::size_t limit) {
  if (field.type == WireType::Varint) {
    if (out.size() >= limit) reader.fail(field, fmt::format("more than {} values", limit));
    out.push_back(field.value);
    return;
  }
  if (field.type != WireType::Bytes) reader.fail(field, "an integer list of the wrong wire type");
  // A packed run: the payload is varints back to back.
  std::size_t at = 0;
  const std::span<const std::byte> b = field.bytes;
  while (at < b.size()) {
    if (out.size() >= limit) reader.fail(field, fmt::format("more than {} values", limit));
    std::uint64_t v = 0;
    int shift = 0;
    for (;; shift += 7) {
      if (shift > 63) reader.fail(field, "a packed varint longer than 10 bytes");
      if (at >= b.size()) reader.fail(field, "a packed varint runs past its field");
      const auto byte = static_cast<std::uint8_t>(b[at++]);
      v |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
      if ((byte & 0x80U) == 0) break;
    }
    out.push_back(v);
  }
}

void append_fixed32(const WireReader& reader, const WireField& field, std::vector<std::uint32_t>& out,
                    std::size_t limit) {
  if (field.type == WireType::Fixed32) {
    if (out.size() >= limit) reader.fail(field, fmt::format("more than {} values", limit));
    out.push_back(static_cast<std::uint32_t>(field.value));
    return;
  }
  if (field.type != WireType::Bytes || field.bytes.size() % 4 != 0) {
    reader.fail(field, "a float list that is not whole 4-byte values");
  }
  const std::size_t n = field.bytes.size() / 4;
  if (n > limit - std::min(limit, out.size())) reader.fail(field, fmt::format("more than {} values", limit));
  if (n == 0) return;
  const std::size_t first = out.size();
  out.resize(first + n);
  std::memcpy(out.data() + first, field.bytes.data(), n * 4);
}

}  // namespace warden::model::onnx
