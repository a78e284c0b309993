#include "model/families/common.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::model::families {

std::string config_path(const std::filesystem::path& dir) {
  return (dir / "config.json").string();
}

kernels::Activation activation_named(const std::string& name, std::string_view field,
                                     const std::filesystem::path& dir) {
  if (name == "gelu") return kernels::Activation::Gelu;
  if (name == "relu") return kernels::Activation::Relu;
  if (name == "tanh") return kernels::Activation::Tanh;
  if (name == "silu" || name == "swish") return kernels::Activation::Silu;
  // transformers' PytorchGELUTanh and NewGELUActivation: the same tanh approximation.
  if (name == "gelu_pytorch_tanh" || name == "gelu_new") return kernels::Activation::GeluTanh;
  throw Error(ErrorKind::Unsupported,
              fmt::format("{}: {} '{}' is not supported (supported: gelu, gelu_pytorch_tanh, gelu_new, relu, "
                          "tanh, silu)",
                          config_path(dir), field, name));
}

heads::ClassifierHead dense_head(const HeadSource& s, const engine::WeightReader& dense_from,
                                 std::string_view dense, kernels::Activation activation,
                                 std::string_view out) {
  const std::size_t h = s.dims.hidden;
  heads::ClassifierHead c;
  c.dense = dense_from.linear(dense, h, h);
  c.activation = activation;
  c.out = s.root.linear(out, s.config.num_labels(), h);
  return c;
}

heads::ClassifierHead pooler_classifier(const HeadSource& s) {
  return dense_head(s, s.encoder, "pooler.dense", kernels::Activation::Tanh, "classifier");
}

heads::ClassifierHead roberta_classifier(const HeadSource& s) {
  return dense_head(s, s.root, "classifier.dense", kernels::Activation::Tanh, "classifier.out_proj");
}

void count_positions_after_padding(EncoderPlan& plan, std::uint32_t padding_idx) {
  plan.dims.padding_idx = padding_idx;
  plan.dims.position_offset = std::size_t{padding_idx} + 1;
}

}  // namespace warden::model::families
