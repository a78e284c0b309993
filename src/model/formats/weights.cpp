#include "model/formats/weights.hpp"

#include <algorithm>
#include <set>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include "core/error.hpp"

namespace warden::model::formats {

namespace {

constexpr std::string_view kSingleFile = "model.safetensors";
constexpr std::string_view kIndexFile = "model.safetensors.index.json";
constexpr std::string_view kTorchFile = "pytorch_model.bin";
constexpr std::string_view kTorchIndexFile = "pytorch_model.bin.index.json";

std::variant<SafetensorsFile, TorchCheckpoint, TensorViews> open_weight_file(
    const std::filesystem::path& path) {
  if (path.extension() == ".safetensors") return SafetensorsFile(path);
  return TorchCheckpoint(path);
}

// A shard must be a plain file name next to the index: no separators, no "." or "..".
bool is_plain_file_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\\') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

}  // namespace

const Tensor* TensorViews::find(std::string_view name) const noexcept {
  const auto it =
      std::find_if(tensors.begin(), tensors.end(), [name](const Tensor& t) { return t.name == name; });
  return it == tensors.end() ? nullptr : &*it;
}

WeightFile::WeightFile(const std::filesystem::path& path) : file_(open_weight_file(path)) {}
WeightFile::WeightFile(TensorViews views) : file_(std::move(views)) {}

const std::filesystem::path& WeightFile::path() const noexcept {
  return std::visit(
      [](const auto& f) -> const std::filesystem::path& {
        if constexpr (std::is_same_v<std::decay_t<decltype(f)>, TensorViews>) {
          return f.path;
        } else {
          return f.path();
        }
      },
      file_);
}
std::span<const std::byte> WeightFile::bytes() const noexcept {
  return std::visit(
      [](const auto& f) -> std::span<const std::byte> {
        if constexpr (std::is_same_v<std::decay_t<decltype(f)>, TensorViews>) {
          return f.bytes;
        } else {
          return f.bytes();
        }
      },
      file_);
}
std::span<const Tensor> WeightFile::tensors() const noexcept {
  return std::visit(
      [](const auto& f) -> std::span<const Tensor> {
        if constexpr (std::is_same_v<std::decay_t<decltype(f)>, TensorViews>) {
          return f.tensors;
        } else {
          return f.tensors();
        }
      },
      file_);
}
const Tensor* WeightFile::find(std::string_view name) const noexcept {
  return std::visit([name](const auto& f) { return f.find(name); }, file_);
}

std::optional<std::filesystem::path> ModelWeights::checkpoint_in(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const std::string_view name : {kSingleFile, kIndexFile, kTorchFile, kTorchIndexFile}) {
    if (std::filesystem::exists(dir / name, ec)) return dir / name;
  }
  return std::nullopt;
}

ModelWeights ModelWeights::open_dir(const std::filesystem::path& dir) {
  if (const auto path = checkpoint_in(dir)) {
    return path->extension() == ".json" ? open_index(*path) : open_file(*path);
  }
  throw Error(ErrorKind::NotFound,
              fmt::format("{}: no {}, {}, {} or {} (nor an ONNX graph) in the model folder", dir.string(),
                          kSingleFile, kIndexFile, kTorchFile, kTorchIndexFile));
}

ModelWeights ModelWeights::open_file(const std::filesystem::path& path) {
  ModelWeights w;
  w.source_ = path;
  w.files_.emplace_back(path);
  for (const Tensor& t : w.files_.front().tensors()) w.tensors_.emplace(t.name, &t);
  return w;
}

ModelWeights ModelWeights::from_views(std::vector<TensorViews> files) {
  ModelWeights w;
  if (files.empty()) throw Error(ErrorKind::Internal, "ModelWeights::from_views: no file");
  w.source_ = files.front().path;
  for (TensorViews& f : files) w.files_.emplace_back(std::move(f));
  for (const WeightFile& f : w.files_) {
    for (const Tensor& t : f.tensors()) {
      if (!w.tensors_.emplace(t.name, &t).second) {
        throw Error(ErrorKind::Internal,
                    fmt::format("{}: tensor '{}' named twice", w.source_.string(), t.name));
      }
    }
  }
  return w;
}

ModelWeights ModelWeights::open_index(const std::filesystem::path& index_path) {
  const std::string where = index_path.string();
  auto fail = [&where](const std::string& what) {
    return Error(ErrorKind::CorruptFile, fmt::format("{}: {}", where, what));
  };
  const simdjson::padded_string text = [&] {
    const std::string raw = read_file(index_path);
    return simdjson::padded_string(raw);
  }();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const auto err = parser.parse(text).get(root); err != simdjson::SUCCESS) {
    throw fail(fmt::format("not valid JSON ({})", simdjson::error_message(err)));
  }
  simdjson::dom::object weight_map;
  if (root["weight_map"].get_object().get(weight_map) != simdjson::SUCCESS) {
    throw fail("missing or non-object \"weight_map\"");
  }

  // tensor -> shard, and the shards in first-mention order (so files_ is deterministic).
  std::vector<std::pair<std::string, std::string>> listed;
  std::set<std::string_view> seen;
  std::vector<std::string> shards;
  std::set<std::string> shard_set;
  for (const auto field : weight_map) {
    const std::string_view tensor = field.key;
    std::string_view shard;
    if (field.value.get_string().get(shard) != simdjson::SUCCESS) {
      throw fail(fmt::format("weight_map entry for tensor '{}' is not a string", tensor));
    }
    if (!seen.insert(tensor).second)
      throw fail(fmt::format("tensor '{}' is listed twice in weight_map", tensor));
    if (!is_plain_file_name(shard)) {
      throw fail(fmt::format("tensor '{}' maps to '{}', which is not a plain file name next to the index",
                             tensor, shard));
    }
    if (shard_set.emplace(shard).second) shards.emplace_back(shard);
    listed.emplace_back(std::string(tensor), std::string(shard));
  }

  ModelWeights w;
  w.source_ = index_path;
  w.files_.reserve(shards.size());
  std::map<std::string, std::size_t, std::less<>> shard_index;
  const auto dir = index_path.parent_path();
  for (const std::string& shard : shards) {
    const auto path = dir / shard;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw fail(
          fmt::format("shard '{}' is listed in weight_map but {} does not exist", shard, path.string()));
    }
    shard_index.emplace(shard, w.files_.size());
    w.files_.emplace_back(path);
  }
  for (const auto& [tensor, shard] : listed) {
    const WeightFile& file = w.files_[shard_index.find(shard)->second];
    const Tensor* t = file.find(tensor);
    if (t == nullptr) {
      throw fail(fmt::format("tensor '{}' is listed in shard '{}', but that file has no such tensor", tensor,
                             shard));
    }
    w.tensors_.emplace(tensor, t);
  }
  return w;
}

const Tensor* ModelWeights::find(std::string_view name) const noexcept {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}

void ModelWeights::alias(const std::string& name, std::string_view existing) {
  const Tensor* t = find(existing);
  if (t == nullptr || !tensors_.emplace(name, t).second) {
    throw Error(ErrorKind::Internal,
                fmt::format("{}: cannot name tensor '{}' '{}'", source_.string(), existing, name));
  }
}

const Tensor& ModelWeights::require(std::string_view name, std::span<const std::size_t> shape) const {
  return check(name, shape, false);
}

const Tensor& ModelWeights::require_weight(std::string_view name,
                                           std::initializer_list<std::size_t> shape) const {
  return check(name, std::span<const std::size_t>(shape.begin(), shape.size()), true);
}

const Tensor& ModelWeights::check(std::string_view name, std::span<const std::size_t> shape,
                                  bool int8_ok) const {
  const Tensor* t = find(name);
  if (t == nullptr) {
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: missing tensor '{}'", source_.string(), name));
  }
  if (!std::equal(t->shape.begin(), t->shape.end(), shape.begin(), shape.end())) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: tensor '{}' has shape [{}], the config implies [{}]", source_.string(), name,
                            fmt::join(t->shape, ", "), fmt::join(shape, ", ")));
  }
  if (t->dtype != Dtype::F32 && t->dtype != Dtype::F16 && t->dtype != Dtype::BF16 &&
      !(int8_ok && t->dtype == Dtype::I8)) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: tensor '{}' has dtype {}; weights must be F32, F16 or BF16{}", source_.string(),
                    name, dtype_name(t->dtype), int8_ok ? " (or I8 with per-row scales)" : ""));
  }
  return *t;
}

std::vector<std::string_view> ModelWeights::names() const {
  std::vector<std::string_view> out;
  out.reserve(tensors_.size());
  for (const auto& [name, t] : tensors_) out.emplace_back(name);
  return out;
}

}  // namespace warden::model::formats
