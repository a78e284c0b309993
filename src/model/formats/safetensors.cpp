#include "model/formats/safetensors.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"

namespace warden::model::formats {

// Tensor data is little-endian; reading it with memcpy is only right on a little-endian host
// (every machine Warden targets: x86-64 and arm64).
static_assert(std::endian::native == std::endian::little, "safetensors reading assumes a little-endian host");

namespace {

// The Rust crate's MAX_HEADER_SIZE: a larger header is refused before it is parsed.
constexpr std::uint64_t kMaxHeaderLength = 100'000'000;

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DtypeInfo, 15> kDtypes{{
    {Dtype::BOOL, "BOOL", 1},
    {Dtype::U8, "U8", 1},
    {Dtype::I8, "I8", 1},
    {Dtype::F8_E5M2, "F8_E5M2", 1},
    {Dtype::F8_E4M3, "F8_E4M3", 1},
    {Dtype::I16, "I16", 2},
    {Dtype::U16, "U16", 2},
    {Dtype::F16, "F16", 2},
    {Dtype::BF16, "BF16", 2},
    {Dtype::I32, "I32", 4},
    {Dtype::U32, "U32", 4},
    {Dtype::F32, "F32", 4},
    {Dtype::F64, "F64", 8},
    {Dtype::I64, "I64", 8},
    {Dtype::U64, "U64", 8},
}};

const DtypeInfo& info_of(Dtype dtype) noexcept {
  return kDtypes[static_cast<std::size_t>(dtype)];
}

// product(shape) x element size, or nullopt on overflow.
std::optional<std::size_t> checked_byte_size(std::span<const std::size_t> shape, std::size_t element_size) {
  std::size_t n = element_size;
  for (const std::size_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

// A header entry before validation of the layout.
struct Entry {
  Tensor tensor;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view file_name) : file_(file_name) {}

  [[nodiscard]] Error fail(std::string_view what) const {
    return Error(ErrorKind::CorruptFile, fmt::format("{}: {}", file_, what));
  }
  [[nodiscard]] Error fail_tensor(std::string_view tensor, std::string_view what) const {
    return Error(ErrorKind::CorruptFile, fmt::format("{}: tensor '{}': {}", file_, tensor, what));
  }

  void read_metadata(simdjson::dom::element value, std::map<std::string, std::string>& out) const {
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) throw fail("__metadata__ is not a JSON object");
    for (const auto field : object) {
      std::string_view text;
      if (field.value.get_string().get(text) != simdjson::SUCCESS) {
        throw fail(fmt::format("__metadata__ entry '{}' is not a string", std::string_view(field.key)));
      }
      if (!out.emplace(std::string(field.key), std::string(text)).second) {
        throw fail(fmt::format("__metadata__ entry '{}' appears twice", std::string_view(field.key)));
      }
    }
  }

  [[nodiscard]] Entry read_tensor(std::string_view name, simdjson::dom::element value) const {
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS)
      throw fail_tensor(name, "entry is not a JSON object");
    Entry entry;
    entry.tensor.name = std::string(name);

    std::string_view dtype_text;
    if (object["dtype"].get_string().get(dtype_text) != simdjson::SUCCESS) {
      throw fail_tensor(name, "missing or non-string \"dtype\"");
    }
    const auto dtype = parse_dtype(dtype_text);
    if (!dtype) throw fail_tensor(name, fmt::format("unknown dtype \"{}\"", dtype_text));
    entry.tensor.dtype = *dtype;

    simdjson::dom::array shape;
    if (object["shape"].get_array().get(shape) != simdjson::SUCCESS) {
      throw fail_tensor(name, "missing or non-array \"shape\"");
    }
    for (const auto dim : shape) {
      std::uint64_t d = 0;
      if (dim.get_uint64().get(d) != simdjson::SUCCESS) {
        throw fail_tensor(name, "\"shape\" holds something other than a non-negative integer");
      }
      entry.tensor.shape.push_back(static_cast<std::size_t>(d));
    }

    simdjson::dom::array offsets;
    if (object["data_offsets"].get_array().get(offsets) != simdjson::SUCCESS || offsets.size() != 2) {
      throw fail_tensor(name, "\"data_offsets\" is missing or not a [begin, end] pair");
    }
    if (offsets.at(0).get_uint64().get(entry.begin) != simdjson::SUCCESS ||
        offsets.at(1).get_uint64().get(entry.end) != simdjson::SUCCESS) {
      throw fail_tensor(name, "\"data_offsets\" holds something other than non-negative integers");
    }
    return entry;
  }

 private:
  std::string_view file_;
};

}  // namespace

std::size_t dtype_size(Dtype dtype) noexcept {
  return info_of(dtype).size;
}

std::string_view dtype_name(Dtype dtype) noexcept {
  return info_of(dtype).name;
}

std::optional<Dtype> parse_dtype(std::string_view name) noexcept {
  for (const auto& d : kDtypes) {
    if (d.name == name) return d.dtype;
  }
  return std::nullopt;
}

std::size_t Tensor::element_count() const noexcept {
  std::size_t n = 1;
  for (const std::size_t d : shape) n *= d;  // validated not to overflow when parsed
  return n;
}

SafetensorsHeader parse_safetensors(std::span<const std::byte> bytes, std::string_view file_name) {
  const HeaderParser parser(file_name);
  if (bytes.size() < 8) {
    throw parser.fail(fmt::format("{} bytes is too short for the 8-byte header length", bytes.size()));
  }
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxHeaderLength) {
    throw parser.fail(fmt::format("header length {} exceeds the limit of {} bytes", n, kMaxHeaderLength));
  }
  if (n > bytes.size() - 8) {
    throw parser.fail(
        fmt::format("header length {} runs past the end of the file ({} bytes)", n, bytes.size()));
  }
  const std::string_view json(reinterpret_cast<const char*>(bytes.data()) + 8, static_cast<std::size_t>(n));
  const std::size_t data_offset = 8 + static_cast<std::size_t>(n);
  const std::span<const std::byte> data = bytes.subspan(data_offset);

  // simdjson needs padding after the text; the copy is header-sized, not file-sized.
  const simdjson::padded_string padded(json);
  simdjson::dom::parser json_parser;
  simdjson::dom::element root;
  if (const auto err = json_parser.parse(padded).get(root); err != simdjson::SUCCESS) {
    throw parser.fail(fmt::format("header is not valid JSON ({})", simdjson::error_message(err)));
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) throw parser.fail("header is not a JSON object");

  SafetensorsHeader header;
  header.header_length = static_cast<std::size_t>(n);
  std::vector<Entry> entries;
  std::set<std::string_view> seen;
  bool have_metadata = false;
  for (const auto field : object) {
    const std::string_view key = field.key;
    if (key == "__metadata__") {
      if (have_metadata) throw parser.fail("__metadata__ appears twice");
      have_metadata = true;
      parser.read_metadata(field.value, header.metadata);
      continue;
    }
    if (!seen.insert(key).second) throw parser.fail_tensor(key, "name appears twice in the header");
    Entry entry = parser.read_tensor(key, field.value);
    const auto nbytes = checked_byte_size(entry.tensor.shape, dtype_size(entry.tensor.dtype));
    if (!nbytes) throw parser.fail_tensor(key, "shape x dtype size overflows");
    if (entry.end < entry.begin) {
      throw parser.fail_tensor(
          key, fmt::format("data_offsets [{}, {}] end before they begin", entry.begin, entry.end));
    }
    if (entry.end - entry.begin != *nbytes) {
      throw parser.fail_tensor(
          key, fmt::format("shape [{}] of {} needs {} bytes but data_offsets [{}, {}] span {}",
                           fmt::join(entry.tensor.shape, ", "), dtype_name(entry.tensor.dtype), *nbytes,
                           entry.begin, entry.end, entry.end - entry.begin));
    }
    if (entry.end > data.size()) {
      throw parser.fail_tensor(
          key, fmt::format("data_offsets [{}, {}] run past the end of the data region ({} bytes)",
                           entry.begin, entry.end, data.size()));
    }
    entries.push_back(std::move(entry));
  }

  // The crate's rule: sorted by offset, the tensors must tile the data region exactly.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  std::uint64_t covered = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.begin < covered) {
      throw parser.fail_tensor(e.tensor.name, fmt::format("data_offsets [{}, {}] overlap tensor '{}'",
                                                          e.begin, e.end, entries[i - 1].tensor.name));
    }
    if (e.begin > covered) {
      throw parser.fail_tensor(e.tensor.name,
                               fmt::format("data_offsets [{}, {}] leave a hole of {} unclaimed bytes "
                                           "before the tensor",
                                           e.begin, e.end, e.begin - covered));
    }
    covered = e.end;
  }
  if (covered != data.size()) {
    throw parser.fail(
        fmt::format("the tensors cover {} bytes of a {}-byte data region; {} trailing bytes belong to "
                    "no tensor",
                    covered, data.size(), data.size() - covered));
  }

  header.tensors.reserve(entries.size());
  for (Entry& e : entries) {
    e.tensor.data =
        data.subspan(static_cast<std::size_t>(e.begin), static_cast<std::size_t>(e.end - e.begin));
    header.tensors.push_back(std::move(e.tensor));
  }
  return header;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : path_(path), file_(path) {
  header_ = parse_safetensors(file_.bytes(), path_.string());
  for (std::size_t i = 0; i < header_.tensors.size(); ++i) index_.emplace(header_.tensors[i].name, i);
}

const Tensor* SafetensorsFile::find(std::string_view name) const noexcept {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

float f16_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1FU;
  const std::uint32_t mantissa = bits & 0x3FFU;
  if (exponent == 0) {
    // Zero or subnormal: mantissa x 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24F;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000U | (mantissa << 13));  // inf / NaN
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float bf16_to_float(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_f16(float value) noexcept {
  const auto x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000U);
  const std::uint32_t abs = x & 0x7FFFFFFFU;
  if (abs > 0x7F800000U) return static_cast<std::uint16_t>(sign | 0x7E00U);   // NaN
  if (abs >= 0x477FF000U) return static_cast<std::uint16_t>(sign | 0x7C00U);  // >= 65520 rounds to inf
  // Rounds q, whose discarded low bits are `rem` out of 2^shift, to nearest even.
  const auto round = [](std::uint32_t q, std::uint32_t rem, std::uint32_t half) {
    return (rem > half || (rem == half && (q & 1U) != 0)) ? q + 1 : q;
  };
  if (abs < 0x38800000U) {  // below 2^-14: a half subnormal (or zero)
    const std::uint32_t exponent = abs >> 23;
    if (exponent < 102) return sign;  // below 2^-25: rounds to zero
    const std::uint32_t mantissa = (abs & 0x7FFFFFU) | 0x800000U;
    const std::uint32_t shift = 126 - exponent;  // value x 2^24 = mantissa >> shift
    const std::uint32_t q = round(mantissa >> shift, mantissa & ((1U << shift) - 1), 1U << (shift - 1));
    return static_cast<std::uint16_t>(sign | q);
  }
  // Normal: rebias the exponent (127 -> 15) and drop 13 mantissa bits; a carry out of the
  // mantissa correctly bumps the exponent.
  const std::uint32_t q = round((abs - 0x38000000U) >> 13, abs & 0x1FFFU, 0x1000U);
  return static_cast<std::uint16_t>(sign | q);
}

std::uint16_t float_to_bf16(float value) noexcept {
  const auto x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7FFFFFFFU) > 0x7F800000U) return static_cast<std::uint16_t>((x >> 16) | 0x40U);  // quiet NaN
  return static_cast<std::uint16_t>((x + 0x7FFFU + ((x >> 16) & 1U)) >> 16);
}

bool is_aligned_float32(const Tensor& tensor) noexcept {
  return tensor.dtype == Dtype::F32 && !tensor.transposed &&
         reinterpret_cast<std::uintptr_t>(tensor.data.data()) % alignof(float) == 0;
}

std::span<const float> as_float32(const Tensor& tensor) noexcept {
  if (!is_aligned_float32(tensor)) return {};
  return {reinterpret_cast<const float*>(tensor.data.data()), tensor.element_count()};
}

void to_float32(const Tensor& tensor, std::span<float> out) {
  const std::size_t n = tensor.element_count();
  if (out.size() != n) {
    throw Error(ErrorKind::Internal, fmt::format("to_float32: tensor '{}' has {} elements, output holds {}",
                                                 tensor.name, n, out.size()));
  }
  if (tensor.transposed) {
    if (tensor.shape.size() != 2) {
      throw Error(ErrorKind::Internal,
                  fmt::format("to_float32: transposed tensor '{}' is not a matrix", tensor.name));
    }
    Tensor stored = tensor;
    stored.transposed = false;
    stored.shape = {tensor.shape[1], tensor.shape[0]};
    const std::vector<float> values = to_float32(stored);
    const std::size_t rows = tensor.shape[0];
    const std::size_t cols = tensor.shape[1];
    for (std::size_t c = 0; c < cols; ++c) {
      for (std::size_t r = 0; r < rows; ++r) out[r * cols + c] = values[c * rows + r];
    }
    return;
  }
  const std::byte* src = tensor.data.data();
  switch (tensor.dtype) {
    case Dtype::F32:
      if (n != 0) std::memcpy(out.data(), src, n * sizeof(float));
      return;
    case Dtype::F16:
    case Dtype::BF16: {
      const bool is_f16 = tensor.dtype == Dtype::F16;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t bits = 0;
        std::memcpy(&bits, src + 2 * i, 2);
        out[i] = is_f16 ? f16_to_float(bits) : bf16_to_float(bits);
      }
      return;
    }
    default:
      throw Error(ErrorKind::Unsupported,
                  fmt::format("tensor '{}' has dtype {}; only F32, F16 and BF16 convert to "
                              "float32",
                              tensor.name, dtype_name(tensor.dtype)));
  }
}

std::vector<float> to_float32(const Tensor& tensor) {
  std::vector<float> out(tensor.element_count());
  to_float32(tensor, out);
  return out;
}

std::string serialize_safetensors(std::span<const TensorToWrite> tensors,
                                  const std::map<std::string, std::string>& metadata) {
  std::vector<const TensorToWrite*> order;
  order.reserve(tensors.size());
  std::set<std::string_view> names;
  for (const auto& t : tensors) {
    if (!names.insert(t.name).second) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("safetensors writer: tensor '{}' given twice", t.name));
    }
    const auto nbytes = checked_byte_size(t.shape, dtype_size(t.dtype));
    if (!nbytes || *nbytes != t.data.size()) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("safetensors writer: tensor '{}' has shape [{}] of {} but {} data bytes",
                              t.name, fmt::join(t.shape, ", "), dtype_name(t.dtype), t.data.size()));
    }
    order.push_back(&t);
  }
  // The Rust crate's `prepare`: dtype descending (its enum order), then name ascending
  // (byte order, which std::string's comparison is).
  std::sort(order.begin(), order.end(), [](const TensorToWrite* a, const TensorToWrite* b) {
    if (a->dtype != b->dtype) return a->dtype > b->dtype;
    return a->name < b->name;
  });

  JsonWriter w;
  w.begin_object();
  if (!metadata.empty()) {
    w.key("__metadata__").begin_object();
    for (const auto& [k, v] : metadata) w.key(k).value(v);
    w.end_object();
  }
  std::uint64_t offset = 0;
  for (const TensorToWrite* t : order) {
    w.key(t->name).begin_object().key("dtype").value(dtype_name(t->dtype)).key("shape").begin_array();
    for (const std::size_t d : t->shape) w.value(static_cast<std::uint64_t>(d));
    w.end_array().key("data_offsets").begin_array().value(offset).value(offset + t->data.size()).end_array();
    w.end_object();
    offset += t->data.size();
  }
  w.end_object();
  std::string header = w.take();
  header.append((8 - header.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + header.size() + static_cast<std::size_t>(offset));
  const std::uint64_t n = header.size();
  out.append(reinterpret_cast<const char*>(&n), 8);  // little-endian host (see the static_assert)
  out += header;
  for (const TensorToWrite* t : order) {
    if (!t->data.empty()) out.append(reinterpret_cast<const char*>(t->data.data()), t->data.size());
  }
  return out;
}

void write_safetensors(const std::filesystem::path& path, std::span<const TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata) {
  write_file_atomic(path, serialize_safetensors(tensors, metadata));
}

}  // namespace warden::model::formats
