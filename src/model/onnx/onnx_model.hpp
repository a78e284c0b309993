#pragma once
// An ONNX model file (onnx.proto's ModelProto) read without the protobuf library: the graph's
// nodes, initializers, inputs and outputs, and the opsets, as value types whose tensor data are
// views into the memory-mapped file (or into external data files, also mapped). Only what a
// graph of tensors needs is kept; what Warden cannot use (sparse initializers, model-local
// functions, training info) is Error(Unsupported) where it would change the graph's meaning,
// and ignored otherwise (doc strings, metadata).
//
// Untrusted input: every length, offset, count and dimension is checked (Error(CorruptFile)
// naming the file, the byte offset or the tensor); nested messages are at most kMaxDepth deep;
// external data (data_location EXTERNAL, "location"/"offset"/"length") must name a file inside
// the model's folder (no absolute path, no "..", no symlink out) and lie within it.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/file.hpp"

namespace warden::model::onnx {

// onnx.proto's TensorProto.DataType.
enum class DataType : std::int32_t {
  Undefined = 0,
  Float = 1,
  Uint8 = 2,
  Int8 = 3,
  Uint16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  Uint32 = 12,
  Uint64 = 13,
  Bfloat16 = 16,
};
[[nodiscard]] std::string_view data_type_name(DataType t) noexcept;  // "FLOAT", "INT64", ...
// Bytes of one element; 0 for STRING and the types Warden does not read.
[[nodiscard]] std::size_t data_type_size(DataType t) noexcept;

// A tensor's values, little-endian, C order: a view into a mapped file, or bytes decoded from
// the typed fields (int32_data, int64_data, ...) that the tensor owns.
struct Tensor {
  std::string name;
  DataType type = DataType::Undefined;
  std::vector<std::int64_t> dims;
  std::span<const std::byte> data;    // element_count() * data_type_size(type) bytes
  std::shared_ptr<const void> owner;  // keeps `data` alive when it is not the model's mapping

  [[nodiscard]] std::size_t element_count() const noexcept;
  // The values as float32 (FLOAT, FLOAT16, BFLOAT16, DOUBLE; exact widening, DOUBLE rounded);
  // Error(Unsupported) for other types.
  [[nodiscard]] std::vector<float> to_floats() const;
  // The values as int64 (INT64, INT32, INT8, UINT8, INT16, UINT16, BOOL, UINT32); Error(Unsupported)
  // for the others.
  [[nodiscard]] std::vector<std::int64_t> to_ints() const;
};

enum class AttributeType : std::int32_t {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
  SparseTensor = 11,
  SparseTensors = 12,
  TypeProto = 13,
  TypeProtos = 14,
};

struct Attribute {
  std::string name;
  AttributeType type = AttributeType::Undefined;
  float f = 0.0F;
  std::int64_t i = 0;
  std::string s;
  std::optional<Tensor> t;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
  std::vector<std::string> strings;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" (and "ai.onnx") is the default domain; "com.microsoft" ORT's contrib ops
  std::vector<std::string> inputs;  // "" for an omitted optional input
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  [[nodiscard]] const Attribute* attribute(std::string_view name) const noexcept;
};

// A graph input or output: its name, element type and shape (a dimension is a number, or a
// symbolic name such as "batch_size", or unknown).
struct Dimension {
  std::optional<std::int64_t> value;
  std::string param;
};
struct ValueInfo {
  std::string name;
  DataType type = DataType::Undefined;
  std::optional<std::vector<Dimension>> shape;  // absent: unknown rank
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<Tensor> initializers;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;
};

struct Model {
  std::int64_t ir_version = 0;
  std::map<std::string, std::int64_t> opsets;  // domain ("" default) -> version
  std::string producer_name;
  std::string producer_version;
  Graph graph;
};

inline constexpr int kMaxDepth = 8;

// Parses a ModelProto held in memory (`source` names it in errors). Tensors with external data
// resolve through `external` (given the location and the byte range asked for, it returns the
// bytes or throws); without it they are Error(Unsupported). The tensors view `bytes`.
using ExternalData = std::function<std::span<const std::byte>(
    const std::string& location, std::uint64_t offset, std::optional<std::uint64_t> length)>;
Model parse_model(std::span<const std::byte> bytes, std::string_view source,
                  const ExternalData& external = {});

// A mapped .onnx file and the external data files it names, parsed. Move-only; the tensors stay
// valid for its lifetime.
class ModelFile {
 public:
  explicit ModelFile(const std::filesystem::path& path);  // NotFound, Io, CorruptFile, Unsupported
  [[nodiscard]] const Model& model() const noexcept { return model_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return file_->bytes(); }
  // The external data files the tensors view, by their location (relative to the folder).
  [[nodiscard]] std::vector<std::pair<std::filesystem::path, std::span<const std::byte>>> external_files()
      const;

 private:
  std::filesystem::path path_;
  std::unique_ptr<MappedFile> file_;
  std::map<std::string, std::unique_ptr<MappedFile>> external_;
  Model model_;
};

}  // namespace warden::model::onnx
