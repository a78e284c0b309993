#include "model/heads/dense_modules.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/engine/weight_reader.hpp"
#include "model/formats/weights.hpp"

namespace warden::model::heads {

namespace {

kernels::Activation kernel_activation(metadata::DenseActivation a) noexcept {
  switch (a) {
    case metadata::DenseActivation::Identity:
      return kernels::Activation::None;
    case metadata::DenseActivation::Tanh:
      return kernels::Activation::Tanh;
    case metadata::DenseActivation::Relu:
      return kernels::Activation::Relu;
    case metadata::DenseActivation::Gelu:
      return kernels::Activation::Gelu;
    case metadata::DenseActivation::Silu:
      return kernels::Activation::Silu;
  }
  return kernels::Activation::None;
}

}  // namespace

std::vector<DenseModule> read_pooled_dense_modules(const std::filesystem::path& dir,
                                                   const metadata::StModules& modules, std::size_t pooled,
                                                   Isa isa) {
  static constexpr std::string_view kRun[] = {"Transformer",   "MLMTransformer", "Pooling",
                                              "SpladePooling", "Dense",          "Normalize"};
  std::vector<DenseModule> chain;
  bool after_pooling = false;
  std::size_t width = pooled;
  for (const metadata::StModule& m : modules.modules) {
    const std::string_view kind = m.kind();
    if (std::find(std::begin(kRun), std::end(kRun), kind) == std::end(kRun)) {
      throw Error(
          ErrorKind::Unsupported,
          fmt::format("{}: module {} is {}; Warden runs Transformer, Pooling, Dense and Normalize modules",
                      (dir / "modules.json").string(), m.idx, m.type));
    }
    if (kind == "Pooling") after_pooling = true;
    if (kind != "Dense") continue;
    if (!after_pooling) {
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: the Dense module {} comes before the Pooling module (it would project "
                              "every token)",
                              (dir / "modules.json").string(), m.idx));
    }
    const std::filesystem::path module_dir = dir / m.path;
    const auto config_path = module_dir / "config.json";
    const metadata::DenseModuleConfig config = metadata::read_dense_module_config(config_path);
    if (config.in_features != width) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: in_features is {}; the vector before it has {} values",
                              config_path.string(), config.in_features, width));
    }
    const formats::ModelWeights weights = formats::ModelWeights::open_dir(module_dir);
    chain.push_back(
        {engine::WeightReader(weights, "", isa).linear("linear", config.out_features, width, config.bias),
         kernel_activation(config.activation)});
    width = config.out_features;
  }
  return chain;
}

std::size_t dense_modules_width(std::span<const DenseModule> chain, std::size_t pooled) noexcept {
  return chain.empty() ? pooled : chain.back().linear.n();
}

void apply_dense_modules(std::span<const DenseModule> chain, std::span<const float> in, std::size_t rows,
                         std::span<float> out, ThreadPool* pool) {
  if (chain.empty() || rows == 0) return;
  std::size_t width = chain.front().linear.k();
  if (in.size() != rows * width || out.size() != rows * chain.back().linear.n()) {
    throw Error(ErrorKind::Internal, "dense modules: the buffers do not match the chain");
  }
  std::vector<float> a;
  std::vector<float> b;
  const float* from = in.data();
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const DenseModule& d = chain[i];
    const std::size_t n = d.linear.n();
    float* to = out.data();
    if (i + 1 < chain.size()) {
      std::vector<float>& next = from == a.data() ? b : a;
      next.resize(rows * n);
      to = next.data();
    }
    kernels::linear(from, width, rows, d.linear, to, n, {d.activation}, pool);
    from = to;
    width = n;
  }
}

}  // namespace warden::model::heads
