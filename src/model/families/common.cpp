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
  throw Error(ErrorKind::Unsupported,
              fmt::format("{}: {} '{}' is not supported (supported: gelu, relu, tanh, silu)",
                          config_path(dir), field, name));
}

ClassifierHead pooler_classifier(const HeadSource& s) {
  const std::size_t h = s.dims.hidden;
  ClassifierHead c;
  c.dense = s.encoder.linear("pooler.dense", h, h);
  c.activation = kernels::Activation::Tanh;
  c.out = s.root.linear("classifier", s.config.num_labels(), h);
  return c;
}

ClassifierHead roberta_classifier(const HeadSource& s) {
  const std::size_t h = s.dims.hidden;
  ClassifierHead c;
  c.dense = s.root.linear("classifier.dense", h, h);
  c.activation = kernels::Activation::Tanh;
  c.out = s.root.linear("classifier.out_proj", s.config.num_labels(), h);
  return c;
}

void count_positions_after_padding(EncoderPlan& plan, std::uint32_t padding_idx) {
  plan.dims.padding_idx = padding_idx;
  plan.dims.position_offset = std::size_t{padding_idx} + 1;
}

}  // namespace warden::model::families
