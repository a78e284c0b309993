// `warden quantize IN OUT [--dtype int8|bfloat16]`: saves a model folder with its encoder in
// a reduced precision (model/quantize.hpp), so that `warden serve --model OUT --dtype int8`
// starts without converting and the folder shrinks on disk.

#include <memory>
#include <string>

#include <fmt/format.h>

#include "catalog/model_catalog.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/precision.hpp"
#include "model/quantize.hpp"

namespace warden::cli {

namespace {

struct QuantizeOptions {
  std::string in;
  std::string out;
  std::string dtype = "int8";
};

int run_quantize(const QuantizeOptions& options) {
  const auto precision = parse_precision(options.dtype);
  if (!precision || *precision == Precision::Float32) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("--dtype '{}': choose int8 or bfloat16", options.dtype));
  }
  // IN as --model takes it; only a HuggingFace folder (or an id fetched into one) has an encoder
  // folder to rewrite.
  const catalog::CatalogModel m = catalog::make_model_spec(catalog::ModelArg{{}, options.in, {}},
                                                           command_catalog_options(nullptr, "float32"));
  if (m.spec.tier != "model-dir" && m.spec.tier != "hub") {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{} is a built-in model: quantize takes a HuggingFace folder or id", options.in));
  }
  const model::QuantizeReport r = model::quantize_model_folder(m.dir, options.out, *precision);
  const double mib = 1024.0 * 1024.0;
  fmt::print(stderr, "warden quantize: {} tensors in {}, {} copied; weights {:.1f} MiB -> {:.1f} MiB\n",
             r.converted, precision_name(*precision), r.copied, static_cast<double>(r.bytes_in) / mib,
             static_cast<double>(r.bytes_out) / mib);
  fmt::print("{}\n", options.out);
  return kExitOk;
}

}  // namespace

Command add_quantize_command(CLI::App& root) {
  auto o = std::make_shared<QuantizeOptions>();
  CLI::App* app = root.add_subcommand(
      "quantize",
      "Save a HuggingFace encoder folder with its weights already in int8 or bfloat16 (serve it with the "
      "same --dtype: start-up skips the conversion; docs/precision.md)");
  app->add_option(
         "in", o->in,
         "The model, as `warden serve --model` takes it: a folder or a HuggingFace id ORG/NAME[@REVISION] "
         "(BERT, RoBERTa, XLM-R, DistilBERT)")
      ->required();
  app->add_option("out", o->out, "The folder to write (must not exist, or be empty)")->required();
  app->add_option("--dtype", o->dtype, "int8 (symmetric per row; Warden only) or bfloat16 (standard BF16)")
      ->capture_default_str();
  return {app, [o] { return run_quantize(*o); }};
}

}  // namespace warden::cli
