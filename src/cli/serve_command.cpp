// `warden serve`: one embedder behind the HTTP API (src/http/). The configuration in effect
// is printed at start-up, so what a server runs with is never a guess.

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"
#include "embed/neural_embedder.hpp"
#include "embed/registry.hpp"
#include "http/router.hpp"
#include "http/server.hpp"

namespace warden::cli {

namespace {

struct ServeOptions {
  std::string model;
  std::string model_dir;
  std::size_t threads = 0;  // 0: from the CPUs available
  http::ServerOptions server;
};

int run_serve(ServeOptions options) {
  if (!options.model.empty() && !options.model_dir.empty()) {
    throw Error(ErrorKind::InvalidArgument, "give --model or --model-dir, not both");
  }
  // Chosen as `warden embed` chooses, so both commands answer the same with the same flags.
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Embedder> embedder;
  if (!options.model_dir.empty()) {
    pool = std::make_unique<ThreadPool>(options.threads);
    embedder = std::make_unique<NeuralEmbedder>(options.model_dir, pool.get());
  } else {
    std::string name = options.model;
    if (name.empty()) {
      const DefaultEmbedder fallback = default_embedder();
      name = fallback.name;
      if (!fallback.fallback_reason.empty()) {
        fmt::print(stderr, "warden: warning: serving {} (lexical, semantic = false) because {}\n", name,
                   fallback.fallback_reason);
      }
    }
    if (name != HashingEmbedder::kId) pool = std::make_unique<ThreadPool>(options.threads);
    embedder = make_builtin_embedder(name, pool.get());
  }

  http::Router router(*embedder);
  options.server.handle_signals = true;
  http::Server server(options.server, router);
  fmt::print(stderr,
             "warden serve: model={} dim={} semantic={} compute_threads={} listening=http://{}:{} "
             "payload_limit={}\n",
             embedder->id(), embedder->dim(), embedder->semantic(), pool ? pool->size() : 1,
             options.server.hostname, server.port(), options.server.payload_limit);
  std::fflush(stderr);
  server.run();
  fmt::print(stderr, "warden serve: stopped\n");
  return kExitOk;
}

}  // namespace

Command add_serve_command(CLI::App& root) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* app = root.add_subcommand("serve", "Serve embeddings over HTTP (TEI and OpenAI routes)");
  // Every flag can also come from a WARDEN_* variable (a container's usual way); a flag on
  // the command line wins.
  app->add_option("--model,-m", options->model,
                  "Built-in embedder: use-lite, hashing-ngram-256 (default: use-lite when converted, else "
                  "hashing-ngram-256)")
      ->envname("WARDEN_MODEL");
  app->add_option("--model-dir", options->model_dir,
                  "A HuggingFace model folder (config.json, model.safetensors, ...)")
      ->envname("WARDEN_MODEL_DIR");
  app->add_option("--hostname", options->server.hostname, "IP address to listen on")
      ->capture_default_str()
      ->envname("WARDEN_HOSTNAME");
  app->add_option("--port,-p", options->server.port, "TCP port (0: any free port)")
      ->capture_default_str()
      ->envname("WARDEN_PORT");
  app->add_option("--payload-limit", options->server.payload_limit, "Largest request body, bytes (more: 413)")
      ->capture_default_str()
      ->envname("WARDEN_PAYLOAD_LIMIT");
  app->add_option("--threads", options->threads, "Compute threads (default: the CPUs available)")
      ->envname("WARDEN_THREADS");
  return {app, [options] { return run_serve(*options); }};
}

}  // namespace warden::cli
