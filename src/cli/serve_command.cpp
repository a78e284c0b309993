// `warden serve`: one model (an embedder, or a reranker/classifier) behind the HTTP API (src/http/). Defaults
// are sized from the CPUs and memory this process may use (cgroup quotas and affinity included); every one
// can be overridden by a flag or a WARDEN_* variable, and the configuration in effect is
// printed at start-up, so what a server runs with is never a guess.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"
#include "embed/neural_embedder.hpp"
#include "embed/registry.hpp"
#include "embed/sequence_classifier.hpp"
#include "guard/bank.hpp"
#include "guard/guard.hpp"
#include "http/server.hpp"
#include "http/service.hpp"
#include "serving/metrics.hpp"
#include "serving/system_resources.hpp"

namespace warden::cli {

namespace {

struct ServeOptions {
  std::string model;
  std::string model_dir;
  // Unset values come from the machine (serving/system_resources.hpp).
  std::optional<std::size_t> threads;
  std::optional<std::size_t> tokenization_workers;
  std::optional<std::size_t> max_batch_tokens;
  std::optional<std::size_t> max_batch_requests;
  std::optional<std::size_t> max_concurrent_requests;
  std::optional<std::size_t> max_queue;
  std::size_t queue_timeout_ms = 10'000;
  std::size_t shutdown_grace_ms = 10'000;
  std::size_t request_timeout_ms = 30'000;
  std::size_t idle_timeout_ms = 75'000;
  http::RouterOptions router;
  http::ServerOptions server;
  std::optional<std::size_t> io_threads;
  bool no_guard = false;
  std::string guard_bank;
  std::optional<float> guard_threshold;
  std::string guard_model;
  std::string guard_positive_label;
};

// The guard over the served embedder (POST /guard). Fitting it embeds the bank's train
// split once (milliseconds with use-lite; cached after the first start). A bank that
// cannot be loaded leaves the server up without a guard, loudly: /guard then answers 424.
std::unique_ptr<guard::Guard> make_guard(const ServeOptions& options, const Embedder& embedder,
                                         guard::Bank& bank) {
  if (options.no_guard) return nullptr;
  try {
    bank = guard::load_bank(options.guard_bank.empty() ? guard::default_bank_path()
                                                       : std::filesystem::path(options.guard_bank));
    guard::GuardOptions guard_options;
    guard_options.threshold = options.guard_threshold;
    auto g = std::make_unique<guard::Guard>(embedder, bank, guard_options);
    if (g->abstains_always()) {
      fmt::print(stderr, "warden serve: guard: {} is lexical, so /guard abstains on every input\n",
                 embedder.id());
    } else {
      fmt::print(stderr, "warden serve: guard: probe on {} ({} bank rows, threshold {:.3f}, cache {})\n",
                 embedder.id(), bank.entries.size(), g->threshold(), g->probe_info().cache);
    }
    return g;
  } catch (const Error& e) {
    if (!options.guard_bank.empty()) throw;  // a bank the user named must load
    fmt::print(stderr, "warden serve: warning: no guard (/guard answers 424): {}\n", e.what());
    return nullptr;
  }
}

// The classifier method (--guard-model): the guard decides with its own model, whatever kind
// the served model is. Unlike the probe's bank, a model the user named must load: any
// failure stops the server.
std::unique_ptr<guard::Guard> make_classifier_guard(const ServeOptions& options,
                                                    const SequenceClassifier& classifier) {
  guard::GuardOptions guard_options;
  guard_options.threshold = options.guard_threshold;
  guard_options.positive_label = options.guard_positive_label;
  auto g = std::make_unique<guard::Guard>(classifier, guard_options);
  fmt::print(stderr, "warden serve: guard: classifier {} (positive label {}, threshold {:.3f})\n",
             classifier.id(), classifier.labels()[g->positive_label()], g->threshold());
  return g;
}

struct Loaded {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Embedder> embedder;            // or
  std::unique_ptr<NeuralClassifier> classifier;  // when the folder has a classification head
  std::string tier;
  std::string tier_reason;
};

// Chosen as `warden embed` chooses, so both commands answer the same with the same flags.
Loaded load_embedder(const ServeOptions& options, std::size_t compute_threads) {
  if (!options.model.empty() && !options.model_dir.empty()) {
    throw Error(ErrorKind::InvalidArgument, "give --model or --model-dir, not both");
  }
  Loaded l;
  if (!options.model_dir.empty()) {
    l.pool = std::make_unique<ThreadPool>(compute_threads);
    // The folder's architecture decides what it serves: a *ForSequenceClassification head
    // answers /rerank and /predict, anything else is an embedder. (Without a config.json the
    // embedder's loader reports what is missing.)
    const std::filesystem::path dir(options.model_dir);
    if (std::filesystem::is_regular_file(dir / "config.json") && has_classification_head(dir)) {
      l.classifier = std::make_unique<NeuralClassifier>(dir, l.pool.get());
    } else {
      l.embedder = std::make_unique<NeuralEmbedder>(dir, l.pool.get());
    }
    l.tier = "model-dir";
    return l;
  }
  std::string name = options.model;
  if (name.empty()) {
    const DefaultEmbedder fallback = default_embedder();
    name = fallback.name;
    if (!fallback.fallback_reason.empty()) {
      fmt::print(stderr, "warden: warning: serving {} (lexical, semantic = false) because {}\n", name,
                 fallback.fallback_reason);
      l.tier = "lexical-fallback";
      l.tier_reason = fallback.fallback_reason;
    } else {
      l.tier = "semantic-default";
    }
  } else {
    l.tier = "builtin";
  }
  if (name != HashingEmbedder::kId) l.pool = std::make_unique<ThreadPool>(compute_threads);
  l.embedder = make_builtin_embedder(name, l.pool.get());
  return l;
}

int run_serve(ServeOptions options) {
  const serving::SystemResources resources = serving::detect();
  const std::size_t compute_threads = options.threads.value_or(resources.cpus);
  if (!options.guard_model.empty() && options.no_guard) {
    throw Error(ErrorKind::InvalidArgument, "give --guard-model or --no-guard, not both");
  }
  if (!options.guard_positive_label.empty() && options.guard_model.empty()) {
    throw Error(ErrorKind::InvalidArgument, "--guard-positive-label needs --guard-model");
  }
  Loaded loaded = load_embedder(options, compute_threads);
  guard::Bank bank;
  std::unique_ptr<ThreadPool> guard_pool;
  std::unique_ptr<NeuralClassifier> guard_classifier;
  std::unique_ptr<guard::Guard> guard;
  if (!options.guard_model.empty()) {
    // The scheduler runs one batch at a time, so the guard model may share the served
    // model's pool; the hashing embedder has none.
    ThreadPool* pool = loaded.pool.get();
    if (pool == nullptr) pool = (guard_pool = std::make_unique<ThreadPool>(compute_threads)).get();
    guard_classifier = std::make_unique<NeuralClassifier>(options.guard_model, pool);
    guard = make_classifier_guard(options, *guard_classifier);
    if (!options.guard_bank.empty()) {
      fmt::print(stderr,
                 "warden serve: warning: --guard-bank is not used: the classifier method needs no bank\n");
    }
  } else if (loaded.embedder) {
    guard = make_guard(options, *loaded.embedder, bank);
  }
  const http::ServedModel served{loaded.embedder.get(), loaded.classifier.get(), guard.get()};
  std::size_t width = loaded.embedder ? loaded.embedder->dim() : loaded.classifier->hidden_size();
  // The guard model's batches go through the same scheduler: size for the wider of the two.
  if (guard_classifier) width = std::max(width, guard_classifier->hidden_size());

  // Batch limits from the memory there is, for this model's width.
  const serving::ServingSizing sizing =
      serving::derive_sizing(resources, serving::activation_bytes_per_token(width));
  http::ServiceOptions service;
  service.scheduler.max_batch_tokens = options.max_batch_tokens.value_or(sizing.max_batch_tokens);
  service.scheduler.max_batch_inputs = options.max_batch_requests.value_or(sizing.max_batch_requests);
  service.scheduler.max_concurrent = options.max_concurrent_requests.value_or(sizing.max_concurrent_inputs);
  service.scheduler.max_queue = options.max_queue.value_or(sizing.max_queue_requests);
  service.scheduler.queue_timeout = std::chrono::milliseconds(options.queue_timeout_ms);
  service.workers = options.tokenization_workers.value_or(sizing.tokenization_workers);
  service.router = options.router;
  service.router.tier = loaded.tier;
  service.router.tier_reason = loaded.tier_reason;
  options.server.io_threads = options.io_threads.value_or(sizing.io_threads);
  options.server.handle_signals = true;
  options.server.request_timeout = std::chrono::milliseconds(options.request_timeout_ms);
  options.server.idle_timeout = std::chrono::milliseconds(options.idle_timeout_ms);
  options.server.shutdown_grace = std::chrono::milliseconds(options.shutdown_grace_ms);

  serving::MetricsRegistry metrics;
  metrics.enable_process_metrics();
  http::Service app(served, service, &metrics);
  http::Server server(options.server, app.handler());
  metrics.gauge_callback("warden_open_connections", "HTTP connections open now",
                         [&server] { return static_cast<double>(server.open_connections()); });

  fmt::print(stderr, "warden serve: {}\n", resources.describe());
  fmt::print(stderr, "warden serve: sized for this machine: {}\n", sizing.describe());
  if (loaded.embedder) {
    const Embedder& embedder = *loaded.embedder;
    fmt::print(stderr,
               "warden serve: model={} kind=embedding dim={} semantic={} tier={} max_input_tokens={} "
               "listening=http://{}:{}\n",
               embedder.id(), embedder.dim(), embedder.semantic(), loaded.tier, embedder.max_input_tokens(),
               options.server.hostname, server.port());
  } else {
    const SequenceClassifier& classifier = *loaded.classifier;
    std::string labels;
    for (const std::string& l : classifier.labels()) labels += (labels.empty() ? "" : ",") + l;
    fmt::print(stderr,
               "warden serve: model={} kind={} labels={} semantic=true tier={} max_input_tokens={} "
               "listening=http://{}:{}\n",
               classifier.id(), classifier_kind_name(classifier.kind()), labels, loaded.tier,
               classifier.max_input_tokens(), options.server.hostname, server.port());
  }
  fmt::print(
      stderr,
      "warden serve: compute_threads={} io_threads={} tokenization_workers={} max_batch_tokens={} "
      "max_batch_requests={} max_concurrent_requests={} max_queue={} queue_timeout_ms={} "
      "max_client_batch_size={} auto_truncate={} payload_limit={} header_limit={} request_timeout_ms={} "
      "idle_timeout_ms={} max_connections={} api_key={}\n",
      loaded.pool ? loaded.pool->size() : 1, options.server.io_threads, service.workers,
      service.scheduler.max_batch_tokens, service.scheduler.max_batch_inputs,
      service.scheduler.max_concurrent, service.scheduler.max_queue, options.queue_timeout_ms,
      service.router.max_client_batch_size, service.router.auto_truncate, options.server.payload_limit,
      options.server.header_limit, options.request_timeout_ms, options.idle_timeout_ms,
      server.max_connections(), service.router.api_key.empty() ? "off" : "on");
  std::fflush(stderr);
  server.run();
  // The server has stopped accepting and drained its connections; answer what is queued.
  app.shutdown(std::chrono::milliseconds(options.shutdown_grace_ms));
  fmt::print(stderr, "warden serve: stopped\n");
  return kExitOk;
}

}  // namespace

Command add_serve_command(CLI::App& root) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* app = root.add_subcommand(
      "serve", "Serve embeddings, reranking or classification over HTTP (TEI, OpenAI, Cohere routes)");
  // Every flag can also come from a WARDEN_* variable (a container's usual way); a flag on
  // the command line wins.
  app->add_option("--model,-m", o->model,
                  "Built-in embedder: use-lite, hashing-ngram-256 (default: use-lite when converted, else "
                  "hashing-ngram-256)")
      ->envname("WARDEN_MODEL");
  app->add_option(
         "--model-dir", o->model_dir,
         "A HuggingFace model folder (config.json, model.safetensors, ...); a *ForSequenceClassification "
         "folder is served as a reranker (one label) or classifier")
      ->envname("WARDEN_MODEL_DIR");
  app->add_option("--hostname", o->server.hostname, "IP address to listen on")
      ->capture_default_str()
      ->envname("WARDEN_HOSTNAME");
  app->add_option("--port,-p", o->server.port, "TCP port (0: any free port)")
      ->capture_default_str()
      ->envname("WARDEN_PORT");
  app->add_option("--payload-limit", o->server.payload_limit, "Largest request body, bytes (more: 413)")
      ->capture_default_str()
      ->envname("WARDEN_PAYLOAD_LIMIT");
  app->add_option("--threads", o->threads, "Compute threads for the engine (default: the CPUs available)")
      ->envname("WARDEN_THREADS");
  app->add_option("--io-threads", o->io_threads, "HTTP I/O threads (default: from the CPUs)")
      ->envname("WARDEN_IO_THREADS");
  app->add_option("--tokenization-workers", o->tokenization_workers,
                  "Threads that tokenize requests and write responses (default: from the CPUs)")
      ->envname("WARDEN_TOKENIZATION_WORKERS");
  app->add_option("--max-batch-tokens", o->max_batch_tokens,
                  "Most tokens in one engine batch (default 16384, less when memory is short)")
      ->envname("WARDEN_MAX_BATCH_TOKENS");
  app->add_option("--max-batch-requests", o->max_batch_requests, "Most inputs in one engine batch")
      ->envname("WARDEN_MAX_BATCH_REQUESTS");
  app->add_option("--max-concurrent-requests", o->max_concurrent_requests,
                  "Most inputs admitted at once (queued for or in the engine); more wait in the queue")
      ->envname("WARDEN_MAX_CONCURRENT_REQUESTS");
  app->add_option("--max-queue", o->max_queue,
                  "Most requests waiting for admission; more get 429 (default 1024)")
      ->envname("WARDEN_MAX_QUEUE");
  app->add_option("--queue-timeout-ms", o->queue_timeout_ms,
                  "A request not started within this gets 504 without being computed (0: no limit)")
      ->capture_default_str()
      ->envname("WARDEN_QUEUE_TIMEOUT_MS");
  app->add_option("--max-client-batch-size", o->router.max_client_batch_size,
                  "Most inputs in one request (more: 422)")
      ->capture_default_str()
      ->envname("WARDEN_MAX_CLIENT_BATCH_SIZE");
  app->add_option("--auto-truncate", o->router.auto_truncate,
                  "Truncate over-long inputs when a request does not say (false: 422 for them)")
      ->capture_default_str()
      ->envname("WARDEN_AUTO_TRUNCATE");
  app->add_option("--api-key", o->router.api_key,
                  "Require Authorization: Bearer <key> on every route but /health and /metrics")
      ->envname("WARDEN_API_KEY");
  app->add_option("--shutdown-grace-ms", o->shutdown_grace_ms,
                  "On SIGTERM/SIGINT, how long requests in flight and queued work may still finish")
      ->capture_default_str()
      ->envname("WARDEN_SHUTDOWN_GRACE_MS");
  app->add_option("--header-limit", o->server.header_limit,
                  "Largest request line + headers, bytes (more: 431)")
      ->capture_default_str()
      ->envname("WARDEN_HEADER_LIMIT");
  app->add_option("--request-timeout-ms", o->request_timeout_ms,
                  "A started request must arrive whole within this (slow clients are cut off)")
      ->capture_default_str()
      ->envname("WARDEN_REQUEST_TIMEOUT_MS");
  app->add_option("--idle-timeout-ms", o->idle_timeout_ms,
                  "Idle keep-alive connections are closed after this")
      ->capture_default_str()
      ->envname("WARDEN_IDLE_TIMEOUT_MS");
  app->add_option("--max-connections", o->server.max_connections,
                  "Open connections at most; more are closed at once (0: from the file-descriptor limit)")
      ->capture_default_str()
      ->envname("WARDEN_MAX_CONNECTIONS");
  app->add_flag("--no-guard", o->no_guard,
                "Do not fit the prompt-injection guard (POST /guard then answers 424)")
      ->envname("WARDEN_NO_GUARD");
  app->add_option("--guard-bank", o->guard_bank,
                  "The guard's labelled bank (JSONL {\"text\",\"label\"}; default: the shipped one)")
      ->envname("WARDEN_GUARD_BANK");
  app->add_option("--guard-threshold", o->guard_threshold,
                  "Score at which /guard flags an input (default: chosen on the bank's train folds; 0.5 "
                  "with --guard-model)")
      ->check(CLI::Range(0.0F, 1.0F))
      ->envname("WARDEN_GUARD_THRESHOLD");
  app->add_option("--guard-model", o->guard_model,
                  "A *ForSequenceClassification folder that /guard decides with (the classifier method) "
                  "instead of the probe over the served embedder; the served model may then be any kind")
      ->envname("WARDEN_GUARD_MODEL");
  app->add_option("--guard-positive-label", o->guard_positive_label,
                  "The --guard-model label whose probability is the score (default: the first naming "
                  "INJECTION, ATTACK, JAILBREAK or UNSAFE)")
      ->envname("WARDEN_GUARD_POSITIVE_LABEL");
  return {app, [o] { return run_serve(*o); }};
}

}  // namespace warden::cli
