#include "model/onnx/onnx_encoder.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/onnx_files.hpp"
#include "model/formats/safetensors.hpp"

namespace warden::model::onnx {

namespace {

// What the tensors view: the mapped file, the constants the passes made (dequantised tables,
// folded values) and the bytes made here (a token type table, int8 scales).
struct Holder {
  explicit Holder(const std::filesystem::path& path) : file(path) {}
  onnx::ModelFile file;
  std::vector<std::shared_ptr<const void>> folded;
  std::vector<std::vector<std::byte>> made;
};

formats::Dtype dtype_of(const onnx::Tensor& t, const std::string& name, const std::filesystem::path& file) {
  switch (t.type) {
    case onnx::DataType::Float:
      return formats::Dtype::F32;
    case onnx::DataType::Float16:
      return formats::Dtype::F16;
    case onnx::DataType::Bfloat16:
      return formats::Dtype::BF16;
    case onnx::DataType::Int8:  // a quantised dense layer's weight (with its scale beside it)
      return formats::Dtype::I8;
    default:
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: initializer '{}' (for {}) is {}, not a float type Warden reads",
                              file.string(), t.name, name, onnx::data_type_name(t.type)));
  }
}

formats::Tensor view(const onnx::Tensor& t, std::string name, const std::filesystem::path& file,
                     bool transposed = false) {
  formats::Tensor out;
  out.dtype = dtype_of(t, name, file);
  out.name = std::move(name);
  for (const std::int64_t d : t.dims) out.shape.push_back(static_cast<std::size_t>(d));
  if (transposed) std::swap(out.shape[0], out.shape[1]);
  out.transposed = transposed;
  out.data = t.data;
  return out;
}

}  // namespace

std::optional<std::filesystem::path> find_onnx_file(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const std::string_view name : kOnnxGraphFiles) {
    if (std::filesystem::is_regular_file(dir / name, ec)) return dir / name;
  }
  return std::nullopt;
}

void check_onnx_encoder(const onnx::EncoderTensors& graph, const engine::EncoderDims& dims,
                        const std::filesystem::path& file) {
  const auto disagree = [&](const std::string& what) {
    return Error(ErrorKind::CorruptFile,
                 fmt::format("{}: the graph and config.json disagree: {}", file.string(), what));
  };
  if (graph.layers.size() != dims.layers) {
    throw disagree(
        fmt::format("{} layers in the graph, num_hidden_layers {}", graph.layers.size(), dims.layers));
  }
  // A float16 file (weights stored as FLOAT16 or BFLOAT16) holds its constants rounded too, and
  // onnxconverter's conversion first clamps them to magnitudes in [1e-7, 1e4]: its epsilon of
  // 1e-12 is float16(1e-7) = 1.19e-7, and its 1/√d has 11 bits. Warden computes with the config's
  // values, which differ from the file's by that rounding only.
  const bool f16 = graph.word.type == onnx::DataType::Float16;
  const bool bf16 = graph.word.type == onnx::DataType::Bfloat16;
  const double step = f16 ? 0x1p-11 : bf16 ? 0x1p-8 : 1e-6;
  const auto same_eps = [&](float eps) {
    const float want = dims.layer_norm_eps;
    return eps == want ||
           (f16 && eps == formats::f16_to_float(formats::float_to_f16(std::max(want, 1e-7F)))) ||
           (bf16 && std::abs(static_cast<double>(eps - want)) <= step * static_cast<double>(want));
  };
  if (!same_eps(graph.embedding_norm.epsilon)) {
    throw disagree(fmt::format("the embeddings' LayerNorm epsilon is {}, layer_norm_eps {}",
                               graph.embedding_norm.epsilon, dims.layer_norm_eps));
  }
  const std::string activation = dims.ffn_activation == kernels::Activation::Gelu   ? "gelu"
                                 : dims.ffn_activation == kernels::Activation::Relu ? "relu"
                                                                                    : "another";
  const double head_dim =
      static_cast<double>(dims.hidden) / static_cast<double>(std::max<std::size_t>(dims.heads, 1));
  const double scale = 1.0 / std::sqrt(head_dim);
  for (std::size_t i = 0; i < graph.layers.size(); ++i) {
    const onnx::EncoderLayerTensors& l = graph.layers[i];
    if (l.heads != static_cast<std::int64_t>(dims.heads)) {
      throw disagree(
          fmt::format("layer {} has {} attention heads, num_attention_heads {}", i, l.heads, dims.heads));
    }
    if (std::abs(static_cast<double>(l.scale) - scale) > step * scale) {
      throw disagree(fmt::format("layer {} scales the attention scores by {}, not 1/√{} (the heads' size)", i,
                                 l.scale, head_dim));
    }
    if (!same_eps(l.attention_norm.epsilon) || !same_eps(l.ffn_norm.epsilon)) {
      throw disagree(fmt::format("layer {}'s LayerNorm epsilons are {} and {}, layer_norm_eps {}", i,
                                 l.attention_norm.epsilon, l.ffn_norm.epsilon, dims.layer_norm_eps));
    }
    if (l.activation != activation) {
      throw disagree(
          fmt::format("layer {}'s activation is {}, the config's {}", i, l.activation, activation));
    }
  }
  const std::int64_t padding_idx = dims.padding_idx ? static_cast<std::int64_t>(*dims.padding_idx) : -1;
  if (graph.padding_idx != padding_idx) {
    throw disagree(fmt::format(
        "the graph's positions are {}, the model's {}",
        graph.padding_idx < 0 ? "absolute" : fmt::format("counted from padding index {}", graph.padding_idx),
        padding_idx < 0 ? "absolute" : fmt::format("counted from padding index {}", padding_idx)));
  }
  if (graph.type.has_value() != (dims.type_vocab > 0)) {
    throw disagree(fmt::format("the graph {} token type embeddings, type_vocab_size is {}",
                               graph.type ? "has" : "has no", dims.type_vocab));
  }
}

OnnxEncoder open_onnx_encoder(const std::filesystem::path& file, const engine::LayerNames& names,
                              std::size_t type_rows, const HeadNames* head) {
  auto holder = std::make_shared<Holder>(file);
  onnx::EncoderTensors graph = onnx::read_encoder_graph(holder->file.model(), file.string());
  std::vector<formats::Tensor> tensors;
  const auto add = [&](const onnx::Tensor& t, std::string name, bool transposed = false) {
    tensors.push_back(view(t, std::move(name), file, transposed));
    if (t.owner) holder->folded.push_back(t.owner);
  };
  const auto norm = [&](const onnx::NormTensors& n, const std::string& base) {
    add(n.gamma, base + ".weight");
    add(n.beta, base + ".bias");
  };
  add(graph.word, std::string(names.word_embeddings));
  add(graph.position, "embeddings.position_embeddings.weight");
  if (graph.type) {
    const std::string type_name = "embeddings.token_type_embeddings.weight";
    if (!graph.zero_types) {
      add(*graph.type, type_name);
    } else {
      // Every row is row 0, so that whatever types the tokenizer gives, the sum is the graph's.
      if (graph.type->owner) holder->folded.push_back(graph.type->owner);
      formats::Tensor row0 = view(*graph.type, type_name, file);
      const std::size_t row_bytes = row0.data.size() / std::max<std::size_t>(row0.shape[0], 1);
      auto& bytes = holder->made.emplace_back(row_bytes * type_rows);
      for (std::size_t r = 0; r < type_rows; ++r) {
        std::copy_n(row0.data.begin(), row_bytes, bytes.begin() + static_cast<std::ptrdiff_t>(r * row_bytes));
      }
      row0.shape[0] = type_rows;
      row0.data = bytes;
      tensors.push_back(std::move(row0));
    }
  }
  norm(graph.embedding_norm, std::string(names.embedding_norm));
  // A dense layer as "<base>.weight" ([out x in], viewed transposed when the file holds
  // [in x out]) and "<base>.bias".
  const auto dense = [&](const onnx::DenseTensors& d, const std::string& base) {
    const std::string weight = base + ".weight";
    add(d.weight, weight, !d.out_in);
    if (d.bias) add(*d.bias, base + ".bias");
    if (d.scale) {
      // An int8 weight's per-row scales, as `warden quantize` writes them beside it: the file's
      // one scale (per tensor) or its scale per output column.
      const std::vector<float> given = d.scale->to_floats();
      const auto rows = static_cast<std::size_t>(d.outputs());
      std::vector<float> scales(rows, given.front());
      if (given.size() == rows) scales = given;
      auto& bytes = holder->made.emplace_back(rows * sizeof(float));
      std::memcpy(bytes.data(), scales.data(), bytes.size());
      formats::Tensor s;
      s.name = weight + std::string(formats::kInt8ScaleSuffix);
      s.dtype = formats::Dtype::F32;
      s.shape = {rows};
      s.data = bytes;
      tensors.push_back(std::move(s));
    }
  };
  const bool stacked = !graph.layers.empty() && graph.layers.front().qkv.has_value();
  for (std::size_t i = 0; i < graph.layers.size(); ++i) {
    const onnx::EncoderLayerTensors& l = graph.layers[i];
    if (l.qkv.has_value() != stacked) {
      throw Error(
          ErrorKind::Unsupported,
          fmt::format("{}: some layers' attention is ORT's fused Attention and others' not", file.string()));
    }
    const std::string p = fmt::format("{}{}.", names.layer_prefix, i);
    if (l.qkv) {  // Q, K and V stacked under the query's name (read_encoder's packed form)
      dense(*l.qkv, p + std::string(names.q));
    } else {
      dense(l.query, p + std::string(names.q));
      dense(l.key, p + std::string(names.k));
      dense(l.value, p + std::string(names.v));
    }
    dense(l.attention_out, p + std::string(names.attn_out));
    norm(l.attention_norm, p + std::string(names.attn_norm));
    dense(l.ffn_in, p + std::string(names.ffn_in));
    dense(l.ffn_out, p + std::string(names.ffn_out));
    norm(l.ffn_norm, p + std::string(names.ffn_norm));
  }
  if (graph.classifier) {
    if (head == nullptr) {
      throw Error(
          ErrorKind::CorruptFile,
          fmt::format(
              "{}: the graph and config.json disagree: the graph ends in a classification head ('{}'), "
              "config.json names no *ForSequenceClassification class",
              file.string(), graph.classifier->logits));
    }
    dense(graph.classifier->dense, std::string(head->dense));
    dense(graph.classifier->out, std::string(head->out));
  } else if (head != nullptr) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: the graph and config.json disagree: config.json names a classifier, the graph has "
                    "no classification head (its output is '{}')",
                    file.string(), graph.hidden_state));
  }
  std::vector<formats::TensorViews> files;
  files.push_back({file, holder->file.bytes(), std::move(tensors), holder});
  for (const auto& [path, bytes] : holder->file.external_files()) files.push_back({path, bytes, {}, holder});
  return OnnxEncoder{formats::ModelWeights::from_views(std::move(files)), std::move(graph), stacked};
}

}  // namespace warden::model::onnx
