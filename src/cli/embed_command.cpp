// `warden embed`: texts from arguments or stdin (one per line) to JSON lines or .npy.

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"
#include "embed/neural_embedder.hpp"
#include "embed/registry.hpp"

namespace warden::cli {

namespace {

struct EmbedOptions {
  std::string model;
  std::string model_dir;
  std::size_t threads = 0;  // 0: from the CPUs available
  std::string format = "jsonl";
  std::string output;  // empty: stdout
  std::string dtype = "float32";
  std::vector<std::string> texts;
};

std::vector<std::string> read_stdin_lines() {
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

int run_embed(const EmbedOptions& options) {
  if (!options.model.empty() && !options.model_dir.empty()) {
    throw Error(ErrorKind::InvalidArgument, "give --model or --model-dir, not both");
  }
  std::optional<kernels::Precision> precision = kernels::parse_precision(options.dtype);
  if (options.dtype == "auto") precision = kernels::fastest_precision();
  if (!precision) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("--dtype '{}': choose float32, bfloat16, int8 or auto", options.dtype));
  }
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Embedder> embedder;
  if (!options.model_dir.empty()) {
    pool = std::make_unique<ThreadPool>(options.threads);
    embedder = std::make_unique<NeuralEmbedder>(options.model_dir, pool.get(), *precision);
  } else {
    std::string name = options.model;
    if (name.empty()) {
      const DefaultEmbedder fallback = default_embedder();
      name = fallback.name;
      // The lexical fallback is never silent: say which embedder this is and why.
      if (!fallback.fallback_reason.empty()) {
        fmt::print(stderr, "warden: warning: embedding with {} (lexical, semantic = false) because {}\n",
                   name, fallback.fallback_reason);
      }
    }
    if (name != HashingEmbedder::kId) pool = std::make_unique<ThreadPool>(options.threads);
    embedder = make_builtin_embedder(name, pool.get(), *precision);
  }
  const std::vector<std::string> texts = options.texts.empty() ? read_stdin_lines() : options.texts;
  const std::vector<std::string_view> views(texts.begin(), texts.end());

  const Embeddings embeddings = embedder->embed(views);
  OutputFile out(options.output);
  if (options.format == "npy") {
    write_npy(out, embeddings);
  } else {
    write_jsonl(out, views, embeddings);
  }
  out.close();
  return kExitOk;
}

}  // namespace

Command add_embed_command(CLI::App& root) {
  auto options = std::make_shared<EmbedOptions>();
  CLI::App* app = root.add_subcommand("embed", "Embed texts (arguments, or stdin one per line)");
  app->add_option("--model,-m", options->model,
                  "Built-in embedder: use-lite, hashing-ngram-256 (default: use-lite when converted, else "
                  "hashing-ngram-256)");
  app->add_option("--model-dir", options->model_dir,
                  "A HuggingFace model folder (config.json, model.safetensors, ...)");
  app->add_option("--threads", options->threads, "Compute threads (default: the CPUs available)");
  app->add_option(
         "--dtype", options->dtype,
         "Precision of the model's dense layers: float32, bfloat16, int8 or auto (docs/precision.md)")
      ->capture_default_str();
  app->add_option("--format,-f", options->format, "Output format")->check(CLI::IsMember({"jsonl", "npy"}));
  app->add_option("--output,-o", options->output, "Write here instead of stdout");
  app->add_option("texts", options->texts, "Texts to embed; none reads stdin");
  return {app, [options] { return run_embed(*options); }};
}

}  // namespace warden::cli
