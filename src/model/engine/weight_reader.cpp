#include "model/engine/weight_reader.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"

namespace warden::model::engine {

namespace {

// "<base>.<leaf>", or the leaf alone for a layer saved on its own (a bare nn.Linear's state
// dict, as bge-m3's colbert_linear.pt, names its tensors "weight" and "bias").
std::string field(std::string_view base, std::string_view leaf) {
  if (base.empty()) return std::string(leaf);
  std::string name(base);
  name += '.';
  name += leaf;
  return name;
}

}  // namespace

std::vector<float> WeightReader::floats(std::string_view name,
                                        std::initializer_list<std::size_t> shape) const {
  return formats::to_float32(tensor(name, shape));
}

EmbeddingTable WeightReader::float_table(std::string_view name, std::size_t rows, std::size_t width) const {
  const formats::Tensor& t = tensor(name, {rows, width});
  if (formats::is_aligned_float32(t)) return EmbeddingTable::view(formats::as_float32(t), rows, width);
  return EmbeddingTable::make(Precision::Float32, formats::to_float32(t), rows, width);  // f16/bf16
}

std::size_t WeightReader::table_arena_bytes(std::string_view name, std::size_t rows,
                                            std::size_t width) const {
  const formats::Tensor& t = weights_.require_weight(prefix_ + std::string(name), {rows, width});
  if (precision_ == Precision::Float32 && formats::is_aligned_float32(t)) return 0;
  return EmbeddingTable::arena_bytes(precision_, rows, width);
}

EmbeddingTable WeightReader::table(std::string_view name, std::size_t rows, std::size_t width,
                                   Arena& arena) const {
  const std::string full = prefix_ + std::string(name);
  const formats::Tensor& t = weights_.require_weight(full, {rows, width});
  if (precision_ == Precision::Float32 && formats::is_aligned_float32(t)) {
    return EmbeddingTable::view(formats::as_float32(t), rows, width);
  }
  if (arena.prefilled()) return EmbeddingTable::prefilled(precision_, rows, width, arena);
  EmbeddingTable out;
  if (t.dtype == formats::Dtype::I8) {
    const kernels::QuantizedRows q = int8_rows(full, t, rows, width);
    out = precision_ == Precision::Int8
              ? EmbeddingTable::from_int8(q, rows, width, &arena)
              : EmbeddingTable::make(precision_, dequantize(q, width), rows, width, &arena);
  } else if (formats::is_aligned_float32(t)) {
    out = EmbeddingTable::make(precision_, formats::as_float32(t), rows, width, &arena);
  } else if (!t.transposed) {
    // Converted a block of rows at a time: never a float copy of the whole table.
    const std::size_t row_bytes = width * formats::dtype_size(t.dtype);
    out = EmbeddingTable::make_by_rows(
        precision_, rows, width,
        [&](std::size_t row0, std::span<float> floats) {
          const std::size_t count = floats.size() / width;
          const formats::Tensor block{
              t.name, t.dtype, {count, width}, t.data.subspan(row0 * row_bytes, count * row_bytes)};
          formats::to_float32(block, floats);
        },
        &arena);
  } else {
    out = EmbeddingTable::make(precision_, formats::to_float32(t), rows, width, &arena);
  }
  release_pages(t.data);  // converted: the mapping's copy is no longer read
  return out;
}

LayerNormWeights WeightReader::layer_norm(std::string_view base, std::size_t n, bool with_bias) const {
  const std::string b(base);
  if (!with_bias) return {floats(b + ".weight", {n}), std::vector<float>(n, 0.0F)};
  if (weights_.find(prefix_ + b + ".weight") == nullptr && weights_.find(prefix_ + b + ".gamma") != nullptr) {
    return {floats(b + ".gamma", {n}), floats(b + ".beta", {n})};
  }
  return {floats(b + ".weight", {n}), floats(b + ".bias", {n})};
}

kernels::DenseLayer WeightReader::dense(std::initializer_list<std::string_view> bases, std::size_t rows,
                                        std::size_t in, bool with_bias) const {
  std::vector<DenseRows> parts;
  parts.reserve(bases.size());
  for (const std::string_view base : bases) parts.push_back({base, rows});
  return dense(parts, in, with_bias);
}

kernels::DenseLayer WeightReader::dense(std::span<const DenseRows> parts, std::size_t in,
                                        bool with_bias) const {
  std::size_t n = 0;
  for (const DenseRows& part : parts) n += part.rows;
  if (arena_ != nullptr && arena_->prefilled()) {
    return kernels::DenseLayer::prefilled(precision_, n, in, isa_, *arena_);
  }
  std::vector<float> bias;
  bias.reserve(with_bias ? n : 0);
  for (const auto& [base, rows] : parts) {
    if (!with_bias) break;
    const std::vector<float> b = floats(field(base, "bias"), {rows});
    bias.insert(bias.end(), b.begin(), b.end());
  }
  switch (precision_) {
    case Precision::Float32: {
      kernels::PackedLinear packed(n, in, isa_, arena_);
      std::size_t row0 = 0;
      for (const auto& [base, rows] : parts) {
        std::vector<float> scratch;
        const formats::Tensor& w = weight(base, rows, in);
        packed.set_rows(
            row0, rows, weight_floats(base, w, rows, in, scratch),
            bias.empty() ? std::span<const float>() : std::span<const float>(bias).subspan(row0, rows));
        release_pages(w.data);
        row0 += rows;
      }
      return kernels::DenseLayer(std::move(packed));
    }
    case Precision::Int8: {
      kernels::QuantizedRows stacked;
      for (const auto& [base, rows] : parts) {
        const formats::Tensor& w = weight(base, rows, in);
        kernels::QuantizedRows q;
        if (w.dtype == formats::Dtype::I8) {
          q = int8_rows(prefix_ + field(base, "weight"), w, rows, in);
        } else {
          std::vector<float> scratch;
          q = kernels::quantize_rows(weight_floats(base, w, rows, in, scratch), rows, in);
        }
        stacked.values.insert(stacked.values.end(), q.values.begin(), q.values.end());
        stacked.scales.insert(stacked.scales.end(), q.scales.begin(), q.scales.end());
        release_pages(w.data);
      }
      kernels::QuantizedLinear layer(n, in, isa_, arena_);
      layer.set_rows(stacked, bias);
      return kernels::DenseLayer(std::move(layer));
    }
    case Precision::BFloat16:
      break;
  }
  std::vector<float> stacked;
  stacked.reserve(n * in);
  for (const auto& [base, rows] : parts) {
    std::vector<float> scratch;
    const formats::Tensor& w = weight(base, rows, in);
    const std::span<const float> v = weight_floats(base, w, rows, in, scratch);
    stacked.insert(stacked.end(), v.begin(), v.end());
    release_pages(w.data);
  }
  return kernels::DenseLayer::make(precision_, stacked, n, in, bias, isa_, arena_);
}

kernels::GatedDense WeightReader::gated(std::string_view base, std::size_t width, std::size_t in,
                                        bool activated_first) const {
  if (arena_ != nullptr && arena_->prefilled()) {
    return kernels::GatedDense::prefilled(precision_, width, in, isa_, *arena_);
  }
  std::vector<float> scratch;
  const formats::Tensor& w = weight(base, 2 * width, in);
  const std::span<const float> v = weight_floats(base, w, 2 * width, in, scratch);
  std::vector<float> bias;
  if (weights_.find(prefix_ + field(base, "bias")) != nullptr) {
    bias = floats(field(base, "bias"), {2 * width});
  }
  const std::span<const float> b(bias);
  const std::span<const float> first = v.first(width * in);
  const std::span<const float> second = v.subspan(width * in);
  const std::span<const float> b_first = b.empty() ? b : b.first(width);
  const std::span<const float> b_second = b.empty() ? b : b.subspan(width);
  kernels::GatedDense layer =
      activated_first
          ? kernels::GatedDense::make(precision_, first, second, width, in, b_first, b_second, isa_, arena_)
          : kernels::GatedDense::make(precision_, second, first, width, in, b_second, b_first, isa_, arena_);
  release_pages(w.data);
  return layer;
}

kernels::GatedDense WeightReader::gated_pair(std::string_view activated, std::string_view gate,
                                             std::size_t width, std::size_t in, bool with_bias) const {
  if (arena_ != nullptr && arena_->prefilled()) {
    return kernels::GatedDense::prefilled(precision_, width, in, isa_, *arena_);
  }
  std::vector<float> scratch_a;
  std::vector<float> scratch_g;
  const formats::Tensor& wa = weight(activated, width, in);
  const formats::Tensor& wg = weight(gate, width, in);
  std::vector<float> bias_a;
  std::vector<float> bias_g;
  if (with_bias) {
    bias_a = floats(field(activated, "bias"), {width});
    bias_g = floats(field(gate, "bias"), {width});
  }
  kernels::GatedDense layer = kernels::GatedDense::make(
      precision_, weight_floats(activated, wa, width, in, scratch_a),
      weight_floats(gate, wg, width, in, scratch_g), width, in, bias_a, bias_g, isa_, arena_);
  release_pages(wa.data);
  release_pages(wg.data);
  return layer;
}

std::vector<kernels::DenseLayer> WeightReader::experts(std::string_view name, std::size_t experts,
                                                       std::size_t rows, std::size_t in,
                                                       bool transposed) const {
  std::vector<kernels::DenseLayer> out;
  out.reserve(experts);
  const std::size_t n = transposed ? in : rows;
  const std::size_t k = transposed ? rows : in;
  if (arena_ != nullptr && arena_->prefilled()) {
    for (std::size_t e = 0; e < experts; ++e) {
      out.push_back(kernels::DenseLayer::prefilled(precision_, n, k, isa_, *arena_));
    }
    return out;
  }
  const std::string full = prefix_ + std::string(name);
  const formats::Tensor& t = weights_.require(full, {experts * rows, in});
  if (t.dtype == formats::Dtype::I8) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{}: tensor '{}' is int8; Warden reads a mixture of experts' matrices in float and "
                    "quantises them at load (--dtype int8)",
                    weights_.source().string(), full));
  }
  std::vector<float> scratch;
  const std::span<const float> all = formats::is_aligned_float32(t)
                                         ? formats::as_float32(t)
                                         : std::span<const float>(scratch = formats::to_float32(t));
  std::vector<float> turned;
  for (std::size_t e = 0; e < experts; ++e) {
    std::span<const float> slice = all.subspan(e * rows * in, rows * in);
    if (transposed) {
      turned.resize(rows * in);
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < in; ++c) turned[c * rows + r] = slice[r * in + c];
      }
      slice = turned;
    }
    out.push_back(kernels::DenseLayer::make(precision_, slice, n, k, {}, isa_, arena_));
  }
  release_pages(t.data);
  return out;
}

kernels::PackedLinear WeightReader::linear(std::string_view base, std::size_t out, std::size_t in,
                                           bool with_bias) const {
  std::vector<float> scratch;
  const formats::Tensor& w = weight(base, out, in);
  kernels::PackedLinear packed(weight_floats(base, w, out, in, scratch), out, in,
                               with_bias ? floats(field(base, "bias"), {out}) : std::vector<float>{}, isa_);
  release_pages(w.data);
  return packed;
}

const formats::Tensor& WeightReader::weight(std::string_view base, std::size_t rows, std::size_t in) const {
  return weights_.require_weight(prefix_ + field(base, "weight"), {rows, in});
}

std::span<const float> WeightReader::weight_floats(std::string_view base, const formats::Tensor& t,
                                                   std::size_t rows, std::size_t in,
                                                   std::vector<float>& scratch) const {
  if (t.dtype == formats::Dtype::I8) {
    scratch = dequantize(int8_rows(prefix_ + field(base, "weight"), t, rows, in), in);
    return scratch;
  }
  if (formats::is_aligned_float32(t)) return formats::as_float32(t);
  scratch = formats::to_float32(t);
  return scratch;
}

kernels::QuantizedRows WeightReader::int8_rows(const std::string& name, const formats::Tensor& t,
                                               std::size_t rows, std::size_t in) const {
  const formats::Tensor& scale = weights_.require(name + std::string(formats::kInt8ScaleSuffix), {rows});
  kernels::QuantizedRows q;
  q.values.resize(rows * in);
  if (t.transposed) {  // the values stored [in x rows]
    const auto* src = reinterpret_cast<const std::int8_t*>(t.data.data());
    for (std::size_t c = 0; c < in; ++c) {
      for (std::size_t r = 0; r < rows; ++r) q.values[r * in + c] = src[c * rows + r];
    }
  } else {
    std::memcpy(q.values.data(), t.data.data(), q.values.size());
  }
  q.scales = formats::to_float32(scale);
  for (std::size_t j = 0; j < rows; ++j) {
    if (!std::isfinite(q.scales[j]) || q.scales[j] < 0.0F) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: tensor '{}{}' holds an invalid scale {}", weights_.source().string(), name,
                              formats::kInt8ScaleSuffix, q.scales[j]));
    }
  }
  return q;
}

std::vector<float> WeightReader::dequantize(const kernels::QuantizedRows& q, std::size_t in) {
  std::vector<float> out(q.values.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(q.values[i]) * q.scales[i / in];
  }
  return out;
}

}  // namespace warden::model::engine
