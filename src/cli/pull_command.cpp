// `warden pull ORG/NAME[@REV]`: fetches a model from the HuggingFace hub into the shared
// HuggingFace cache (or finds it there) and prints its snapshot folder, so that
// `warden serve --model "$(warden pull ORG/NAME)"` works in scripts.

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "hub/hub.hpp"

namespace warden::cli {

namespace {

struct PullOptions {
  std::string id;
  std::string endpoint;
  std::string cache_dir;
  bool offline = false;
  std::string format = "auto";
};

std::string human_size(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  if (bytes < 1024ULL * 1024 * 1024)
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024 * 1024));
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

// "model.safetensors 43% 57.3/133.5 MiB" while it runs; "config.json 100% 1.2 KiB" at the end.
std::string progress_line(const hub::Progress& p) {
  if (p.cached) return fmt::format("{} cached {}", p.file, human_size(p.done));
  if (p.total == 0) return fmt::format("{} {}", p.file, human_size(p.done));
  const auto percent = static_cast<unsigned>(p.done * 100 / p.total);
  if (p.done >= p.total) return fmt::format("{} 100% {}", p.file, human_size(p.total));
  const double mib = 1024.0 * 1024.0;
  return fmt::format("{} {}% {:.1f}/{:.1f} MiB", p.file, percent, static_cast<double>(p.done) / mib,
                     static_cast<double>(p.total) / mib);
}

// A terminal gets one line rewritten in place; a log gets one line per finished file.
hub::ProgressFn progress_printer() {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  return [tty](const hub::Progress& p) {
    const bool finished = p.cached || (p.total > 0 && p.done >= p.total);
    if (tty) {
      fmt::print(stderr, "\r\033[K{}", progress_line(p));
      if (finished) fmt::print(stderr, "\n");
    } else if (finished) {
      fmt::print(stderr, "{}\n", progress_line(p));
    }
  };
}

int run_pull(const PullOptions& options) {
  const auto id = hub::ModelId::parse(options.id);
  if (!id) {
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("\"{}\" is not a model id: expected ORG/NAME or ORG/NAME@REVISION (letters, digits, "
                    "'.', '_', '-')",
                    options.id));
  }
  auto hub_options = hub::HubOptions::from_environment();
  if (!options.endpoint.empty()) {
    hub_options.endpoint = options.endpoint;
    while (hub_options.endpoint.ends_with('/')) hub_options.endpoint.pop_back();
  }
  if (!options.cache_dir.empty()) hub_options.cache_dir = options.cache_dir;
  if (options.offline) hub_options.offline = true;
  hub_options.format = options.format == "onnx"          ? hub::WeightFormat::Onnx
                       : options.format == "safetensors" ? hub::WeightFormat::Safetensors
                                                         : hub::WeightFormat::Auto;
  const auto snapshot = hub::fetch_model(*id, hub_options, progress_printer());
  if (!snapshot.offline_reason.empty()) {
    fmt::print(stderr, "warden pull: warning: using the cached copy ({}); it may be out of date\n",
               snapshot.offline_reason);
  }
  fmt::print("{}\n", snapshot.dir.string());
  return kExitOk;
}

}  // namespace

Command add_pull_command(CLI::App& root) {
  auto options = std::make_shared<PullOptions>();
  CLI::App* app = root.add_subcommand(
      "pull", "Download a model by HuggingFace id into the HuggingFace cache and print its folder");
  app->add_option("id", options->id, "ORG/NAME or ORG/NAME@REVISION (branch, tag or commit)")->required();
  app->add_option("--endpoint", options->endpoint,
                  "The hub or a mirror (default: $HF_ENDPOINT or huggingface.co)");
  app->add_option("--cache-dir", options->cache_dir,
                  "The HuggingFace cache (default: $HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub)");
  app->add_flag("--offline", options->offline, "Use the cache only (as HF_HUB_OFFLINE=1 does)");
  app->add_option(
         "--format", options->format,
         "Which weights to fetch: safetensors (or pytorch_model.bin), onnx (the repo's ONNX graph: "
         "model.onnx, onnx/model.onnx, model_optimized.onnx, ...), or auto: safetensors when the repo has "
         "them, else ONNX")
      ->check(CLI::IsMember({"auto", "safetensors", "onnx"}));
  return {app, [options] { return run_pull(*options); }};
}

}  // namespace warden::cli
