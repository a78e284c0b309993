#include "model/onnx/onnx_model.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/formats/safetensors.hpp"
#include "model/onnx/protobuf_wire.hpp"

namespace warden::model::onnx {

namespace {

constexpr std::size_t kMaxRank = 16;
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 40;
constexpr std::size_t kMaxListValues = std::size_t{1} << 24;  // attribute lists, typed tensor fields

std::string text(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

bool known_type(std::int64_t t) noexcept {
  return (t >= 0 && t <= 13) || t == 16;
}

// What one TensorProto holds before its data is settled.
struct RawTensor {
  Tensor tensor;
  std::span<const std::byte> raw;
  bool has_raw = false;
  std::vector<std::uint32_t> fixed32;  // float_data
  std::vector<std::uint64_t> varints;  // int32_data, int64_data, uint64_data
  std::vector<std::uint64_t> fixed64;  // double_data
  int typed_fields = 0;                // how many of the typed data fields appeared
  bool external = false;
  std::map<std::string, std::string> external_data;
};

class Parser {
 public:
  Parser(std::string_view source, const ExternalData& external) : source_(source), external_(external) {}

  Model model(std::span<const std::byte> bytes) {
    WireReader r(bytes, source_);
    Model m;
    bool has_graph = false;
    WireField f;
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          m.ir_version = as_int64(varint(r, f));
          break;
        case 2:
          m.producer_name = string(r, f);
          break;
        case 3:
          m.producer_version = string(r, f);
          break;
        case 7:
          if (has_graph) r.fail(f, "a second graph");
          m.graph = graph(r.nested(bytes_of(r, f)), 1);
          has_graph = true;
          break;
        case 8: {
          std::string domain;
          std::int64_t version = 0;
          WireReader o = r.nested(bytes_of(r, f));
          WireField g;
          while (o.next(g)) {
            if (g.number == 1) domain = string(o, g);
            if (g.number == 2) version = as_int64(varint(o, g));
          }
          if (domain == "ai.onnx") domain.clear();
          m.opsets[domain] = version;
          break;
        }
        default:
          break;  // doc strings, metadata, training info, functions: not needed to run the graph
      }
    }
    if (!has_graph)
      throw Error(ErrorKind::CorruptFile, fmt::format("{}: no graph (not an ONNX model)", source_));
    return m;
  }

 private:
  static const WireField& bytes_of(const WireReader& r, const WireField& f) {
    if (f.type != WireType::Bytes) r.fail(f, fmt::format("field {} should be length-delimited", f.number));
    return f;
  }
  static std::uint64_t varint(const WireReader& r, const WireField& f) {
    if (f.type != WireType::Varint) r.fail(f, fmt::format("field {} should be a varint", f.number));
    return f.value;
  }
  static std::string string(const WireReader& r, const WireField& f) { return text(bytes_of(r, f).bytes); }

  Graph graph(WireReader r, int depth) {
    if (depth > kMaxDepth)
      throw Error(ErrorKind::CorruptFile, fmt::format("{}: messages nested too deep", source_));
    Graph g;
    WireField f;
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          if (g.nodes.size() >= kMaxListValues) r.fail(f, "too many nodes");
          g.nodes.push_back(node(r.nested(bytes_of(r, f)), depth + 1));
          break;
        case 2:
          g.name = string(r, f);
          break;
        case 5:
          if (g.initializers.size() >= kMaxListValues) r.fail(f, "too many initializers");
          g.initializers.push_back(tensor(r.nested(bytes_of(r, f))));
          break;
        case 11:
          g.inputs.push_back(value_info(r.nested(bytes_of(r, f))));
          break;
        case 12:
          g.outputs.push_back(value_info(r.nested(bytes_of(r, f))));
          break;
        case 13:
          g.value_info.push_back(value_info(r.nested(bytes_of(r, f))));
          break;
        case 15:
          throw Error(
              ErrorKind::Unsupported,
              fmt::format("{}: the graph has sparse initializers, which Warden does not read", source_));
        default:
          break;
      }
    }
    return g;
  }

  Node node(WireReader r, int depth) {
    Node n;
    WireField f;
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          n.inputs.push_back(string(r, f));
          break;
        case 2:
          n.outputs.push_back(string(r, f));
          break;
        case 3:
          n.name = string(r, f);
          break;
        case 4:
          n.op_type = string(r, f);
          break;
        case 5:
          n.attributes.push_back(attribute(r.nested(bytes_of(r, f)), depth + 1));
          break;
        case 7:
          n.domain = string(r, f);
          if (n.domain == "ai.onnx") n.domain.clear();
          break;
        default:
          break;
      }
    }
    if (n.op_type.empty())
      throw Error(ErrorKind::CorruptFile, fmt::format("{}: a node '{}' without an op_type", source_, n.name));
    return n;
  }

  Attribute attribute(WireReader r, int depth) {
    if (depth > kMaxDepth)
      throw Error(ErrorKind::CorruptFile, fmt::format("{}: messages nested too deep", source_));
    Attribute a;
    std::vector<std::uint32_t> floats;
    std::vector<std::uint64_t> ints;
    WireField f;
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          a.name = string(r, f);
          break;
        case 20: {
          const std::uint64_t t = varint(r, f);
          if (t > 14) r.fail(f, fmt::format("attribute type {}", t));
          a.type = static_cast<AttributeType>(t);
          break;
        }
        case 2:
          if (f.type != WireType::Fixed32) r.fail(f, "attribute f should be a float");
          {
            const auto bits = static_cast<std::uint32_t>(f.value);
            std::memcpy(&a.f, &bits, 4);
          }
          break;
        case 3:
          a.i = as_int64(varint(r, f));
          break;
        case 4:
          a.s = string(r, f);
          break;
        case 5:
          a.t = tensor(r.nested(bytes_of(r, f)));
          break;
        case 7:
          append_fixed32(r, f, floats, kMaxListValues);
          break;
        case 8:
          append_varints(r, f, ints, kMaxListValues);
          break;
        case 9:
          if (a.strings.size() >= kMaxListValues) r.fail(f, "too many strings");
          a.strings.push_back(string(r, f));
          break;
        default:
          break;  // subgraphs (If, Loop) and the rest are not read: such nodes are refused later
      }
    }
    a.floats.resize(floats.size());
    if (!floats.empty()) std::memcpy(a.floats.data(), floats.data(), floats.size() * 4);
    a.ints.reserve(ints.size());
    for (const std::uint64_t v : ints) a.ints.push_back(as_int64(v));
    return a;
  }

  ValueInfo value_info(WireReader r) {
    ValueInfo v;
    WireField f;
    while (r.next(f)) {
      if (f.number == 1) v.name = string(r, f);
      if (f.number != 2) continue;
      WireReader type = r.nested(bytes_of(r, f));
      WireField t;
      while (type.next(t)) {
        if (t.number != 1) continue;  // tensor_type; sequences and maps stay Undefined
        WireReader tensor_type = type.nested(bytes_of(type, t));
        WireField e;
        while (tensor_type.next(e)) {
          if (e.number == 1) {
            const std::uint64_t elem = varint(tensor_type, e);
            v.type = known_type(static_cast<std::int64_t>(elem)) ? static_cast<DataType>(elem)
                                                                 : DataType::Undefined;
          } else if (e.number == 2) {
            v.shape = shape(tensor_type.nested(bytes_of(tensor_type, e)));
          }
        }
      }
    }
    return v;
  }

  std::vector<Dimension> shape(WireReader r) {
    std::vector<Dimension> dims;
    WireField f;
    while (r.next(f)) {
      if (f.number != 1) continue;
      if (dims.size() >= kMaxRank) r.fail(f, fmt::format("a shape of more than {} dimensions", kMaxRank));
      Dimension d;
      WireReader dim = r.nested(bytes_of(r, f));
      WireField g;
      while (dim.next(g)) {
        if (g.number == 1) d.value = as_int64(varint(dim, g));
        if (g.number == 2) d.param = string(dim, g);
      }
      dims.push_back(std::move(d));
    }
    return dims;
  }

  Tensor tensor(WireReader r) {
    RawTensor t;
    std::vector<std::uint64_t> dims;
    WireField f;
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          append_varints(r, f, dims, kMaxRank);
          break;
        case 2: {
          const std::uint64_t type = varint(r, f);
          if (!known_type(static_cast<std::int64_t>(type)))
            r.fail(f, fmt::format("tensor data type {}", type));
          t.tensor.type = static_cast<DataType>(type);
          break;
        }
        case 3:
          throw Error(ErrorKind::Unsupported,
                      fmt::format("{}: a segmented tensor, which Warden does not read", source_));
        case 4:
          append_fixed32(r, f, t.fixed32, kMaxListValues);
          ++t.typed_fields;
          break;
        case 5:
        case 7:
        case 11:
          append_varints(r, f, t.varints, kMaxListValues);
          ++t.typed_fields;
          break;
        case 10:
          if (f.type == WireType::Fixed64) {
            t.fixed64.push_back(f.value);
          } else {
            const std::span<const std::byte> b = bytes_of(r, f).bytes;
            if (b.size() % 8 != 0 || b.size() / 8 > kMaxListValues)
              r.fail(f, "double_data is not whole values");
            const std::size_t first = t.fixed64.size();
            t.fixed64.resize(first + b.size() / 8);
            if (!b.empty()) std::memcpy(t.fixed64.data() + first, b.data(), b.size());
          }
          ++t.typed_fields;
          break;
        case 6:
          ++t.typed_fields;  // string_data: kept out (STRING tensors are not read)
          break;
        case 8:
          t.tensor.name = string(r, f);
          break;
        case 9:
          t.raw = bytes_of(r, f).bytes;
          t.has_raw = true;
          break;
        case 13: {
          std::string key;
          std::string value;
          WireReader e = r.nested(bytes_of(r, f));
          WireField g;
          while (e.next(g)) {
            if (g.number == 1) key = string(e, g);
            if (g.number == 2) value = string(e, g);
          }
          t.external_data[key] = value;
          break;
        }
        case 14:
          t.external = varint(r, f) == 1;
          break;
        default:
          break;
      }
    }
    for (const std::uint64_t d : dims) t.tensor.dims.push_back(as_int64(d));
    return settle(std::move(t));
  }

  // The tensor's bytes from whichever field holds them, checked against its shape.
  Tensor settle(RawTensor t) {
    Tensor& out = t.tensor;
    const std::string name = out.name.empty() ? std::string("(unnamed)") : out.name;
    std::uint64_t count = 1;
    for (const std::int64_t d : out.dims) {
      if (d < 0)
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: tensor {} has a negative dimension", source_, name));
      if (d != 0 && count > kMaxElements / static_cast<std::uint64_t>(d)) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: tensor {} has more than 2^40 elements", source_, name));
      }
      count *= static_cast<std::uint64_t>(d);
    }
    const std::size_t size = data_type_size(out.type);
    if (out.type == DataType::Undefined) {
      throw Error(ErrorKind::CorruptFile, fmt::format("{}: tensor {} has no data type", source_, name));
    }
    if (size == 0) return std::move(out);  // STRING and the like: no bytes are read
    const std::uint64_t want = count * size;
    auto mismatch = [&](std::uint64_t have, std::string_view where) {
      return Error(ErrorKind::CorruptFile,
                   fmt::format("{}: tensor {} ({} {}) has {} bytes of {}, not {}", source_, name,
                               data_type_name(out.type), count, have, where, want));
    };
    if (t.external) {
      if (!external_) {
        throw Error(
            ErrorKind::Unsupported,
            fmt::format("{}: tensor {} has external data, which this reader cannot open", source_, name));
      }
      const auto location = t.external_data.find("location");
      if (location == t.external_data.end()) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: tensor {} is external without a location", source_, name));
      }
      const std::uint64_t offset = number(t.external_data, "offset", name).value_or(0);
      const std::optional<std::uint64_t> length = number(t.external_data, "length", name);
      const std::span<const std::byte> bytes = external_(location->second, offset, length);
      if (bytes.size() != want) throw mismatch(bytes.size(), "external data");
      out.data = bytes;
      return std::move(out);
    }
    if (t.has_raw) {
      if (t.typed_fields > 0) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: tensor {} has raw_data and typed data", source_, name));
      }
      if (t.raw.size() != want) throw mismatch(t.raw.size(), "raw_data");
      out.data = t.raw;
      return std::move(out);
    }
    // The typed fields, decoded into bytes the tensor owns: counted before anything is
    // allocated, so a huge shape with a few values costs nothing but the error.
    const std::uint64_t have = out.type == DataType::Float    ? t.fixed32.size()
                               : out.type == DataType::Double ? t.fixed64.size()
                                                              : t.varints.size();
    if (have != count) throw mismatch(have * size, "typed data");
    auto bytes = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(want));
    std::byte* dst = bytes->data();
    if (out.type == DataType::Float) {
      if (want > 0) std::memcpy(dst, t.fixed32.data(), want);
    } else if (out.type == DataType::Double) {
      if (want > 0) std::memcpy(dst, t.fixed64.data(), want);
    } else {
      for (std::size_t i = 0; i < t.varints.size(); ++i) {
        // int32_data carries the small types' values (FLOAT16/BFLOAT16 as their bits); the low
        // bytes of the varint are the element's little-endian bytes.
        const std::uint64_t v = t.varints[i];
        std::memcpy(dst + i * size, &v, size);
      }
    }
    out.owner = bytes;
    out.data = std::span<const std::byte>(bytes->data(), bytes->size());
    return std::move(out);
  }

  std::optional<std::uint64_t> number(const std::map<std::string, std::string>& entries,
                                      const std::string& key, const std::string& name) const {
    const auto it = entries.find(key);
    if (it == entries.end()) return std::nullopt;
    std::uint64_t v = 0;
    const std::string& s = it->second;
    if (s.empty() || s.size() > 19 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: tensor {}: external {} '{}' is not a number", source_, name, key, s));
    }
    for (const char c : s) v = v * 10 + static_cast<std::uint64_t>(c - '0');
    return v;
  }

  std::string_view source_;
  const ExternalData& external_;
};

}  // namespace

std::string_view data_type_name(DataType t) noexcept {
  switch (t) {
    case DataType::Float:
      return "FLOAT";
    case DataType::Uint8:
      return "UINT8";
    case DataType::Int8:
      return "INT8";
    case DataType::Uint16:
      return "UINT16";
    case DataType::Int16:
      return "INT16";
    case DataType::Int32:
      return "INT32";
    case DataType::Int64:
      return "INT64";
    case DataType::String:
      return "STRING";
    case DataType::Bool:
      return "BOOL";
    case DataType::Float16:
      return "FLOAT16";
    case DataType::Double:
      return "DOUBLE";
    case DataType::Uint32:
      return "UINT32";
    case DataType::Uint64:
      return "UINT64";
    case DataType::Bfloat16:
      return "BFLOAT16";
    case DataType::Undefined:
      break;
  }
  return "UNDEFINED";
}

std::size_t data_type_size(DataType t) noexcept {
  switch (t) {
    case DataType::Uint8:
    case DataType::Int8:
    case DataType::Bool:
      return 1;
    case DataType::Uint16:
    case DataType::Int16:
    case DataType::Float16:
    case DataType::Bfloat16:
      return 2;
    case DataType::Float:
    case DataType::Int32:
    case DataType::Uint32:
      return 4;
    case DataType::Int64:
    case DataType::Double:
    case DataType::Uint64:
      return 8;
    case DataType::String:
    case DataType::Undefined:
      break;
  }
  return 0;
}

std::size_t Tensor::element_count() const noexcept {
  std::size_t n = 1;
  for (const std::int64_t d : dims) n *= static_cast<std::size_t>(d);
  return n;
}

std::vector<float> Tensor::to_floats() const {
  const std::size_t n = element_count();
  std::vector<float> out(n);
  const std::byte* p = data.data();
  for (std::size_t i = 0; i < n; ++i) {
    switch (type) {
      case DataType::Float:
        std::memcpy(&out[i], p + 4 * i, 4);
        break;
      case DataType::Double: {
        double d = 0;
        std::memcpy(&d, p + 8 * i, 8);
        out[i] = static_cast<float>(d);
        break;
      }
      case DataType::Float16:
      case DataType::Bfloat16: {
        std::uint16_t bits = 0;
        std::memcpy(&bits, p + 2 * i, 2);
        out[i] = type == DataType::Float16 ? formats::f16_to_float(bits) : formats::bf16_to_float(bits);
        break;
      }
      default:
        throw Error(ErrorKind::Unsupported,
                    fmt::format("tensor {} is {}, not a floating-point type", name, data_type_name(type)));
    }
  }
  return out;
}

std::vector<std::int64_t> Tensor::to_ints() const {
  const std::size_t n = element_count();
  std::vector<std::int64_t> out(n);
  const std::byte* p = data.data();
  for (std::size_t i = 0; i < n; ++i) {
    switch (type) {
      case DataType::Int64:
        std::memcpy(&out[i], p + 8 * i, 8);
        break;
      case DataType::Int32: {
        std::int32_t v = 0;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = v;
        break;
      }
      case DataType::Uint32: {
        std::uint32_t v = 0;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = v;
        break;
      }
      case DataType::Int16: {
        std::int16_t v = 0;
        std::memcpy(&v, p + 2 * i, 2);
        out[i] = v;
        break;
      }
      case DataType::Uint16: {
        std::uint16_t v = 0;
        std::memcpy(&v, p + 2 * i, 2);
        out[i] = v;
        break;
      }
      case DataType::Int8:
        out[i] = static_cast<std::int8_t>(p[i]);
        break;
      case DataType::Uint8:
      case DataType::Bool:
        out[i] = static_cast<std::uint8_t>(p[i]);
        break;
      default:
        throw Error(ErrorKind::Unsupported,
                    fmt::format("tensor {} is {}, not an integer type", name, data_type_name(type)));
    }
  }
  return out;
}

const Attribute* Node::attribute(std::string_view attribute_name) const noexcept {
  for (const Attribute& a : attributes) {
    if (a.name == attribute_name) return &a;
  }
  return nullptr;
}

Model parse_model(std::span<const std::byte> bytes, std::string_view source, const ExternalData& external) {
  return Parser(source, external).model(bytes);
}

ModelFile::ModelFile(const std::filesystem::path& path) : path_(path) {
  file_ = std::make_unique<MappedFile>(path);
  const std::filesystem::path dir = std::filesystem::weakly_canonical(path).parent_path();
  const std::string source = path.string();
  const ExternalData external = [&](const std::string& location, std::uint64_t offset,
                                    std::optional<std::uint64_t> length) -> std::span<const std::byte> {
    // Only a plain relative path inside the model's folder: no absolute path, no "..", no
    // backslash, and (after symlinks) still inside it.
    const std::filesystem::path rel(location);
    bool safe = !location.empty() && !rel.is_absolute() && location.find('\\') == std::string::npos &&
                location.find('\0') == std::string::npos;
    for (const auto& part : rel) safe = safe && part != "..";
    const std::filesystem::path full = std::filesystem::weakly_canonical(dir / rel);
    const auto [d, f] = std::mismatch(dir.begin(), dir.end(), full.begin(), full.end());
    if (!safe || d != dir.end()) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: external data location '{}' is not a file inside the model's folder",
                              source, location));
    }
    auto it = external_.find(location);
    if (it == external_.end()) it = external_.emplace(location, std::make_unique<MappedFile>(full)).first;
    const std::span<const std::byte> all = it->second->bytes();
    if (offset > all.size() || (length && *length > all.size() - offset)) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: external data [{}, +{}) lies past the end of {} ({} bytes)", source,
                              offset, length.value_or(0), location, all.size()));
    }
    return all.subspan(static_cast<std::size_t>(offset),
                       static_cast<std::size_t>(length.value_or(all.size() - offset)));
  };
  model_ = parse_model(file_->bytes(), source, external);
}

std::vector<std::pair<std::filesystem::path, std::span<const std::byte>>> ModelFile::external_files() const {
  std::vector<std::pair<std::filesystem::path, std::span<const std::byte>>> out;
  for (const auto& [location, file] : external_)
    out.emplace_back(path_.parent_path() / location, file->bytes());
  return out;
}

}  // namespace warden::model::onnx
