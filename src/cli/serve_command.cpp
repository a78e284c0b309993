// `warden serve`: models (embedders, rerankers, classifiers) behind the HTTP API (src/http/). Defaults
// are sized from the CPUs and memory this process may use (cgroup quotas and affinity included); every one
// can be overridden by a flag or a WARDEN_* variable, and the configuration in effect is
// printed at start-up, so what a server runs with is never a guess.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "catalog/model_catalog.hpp"
#include "classify/rerank_template.hpp"
#include "classify/sequence_classifier.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"
#include "embed/neural_embedder.hpp"
#include "embed/registry.hpp"
#include "grpc/grpc_server.hpp"
#include "guard/bank.hpp"
#include "guard/guard.hpp"
#include "guard/language.hpp"
#include "guard/probe_file.hpp"
#include "http/server.hpp"
#include "http/service.hpp"
#include "model/encoder_model.hpp"
#include "serving/metrics.hpp"
#include "serving/model_manager.hpp"
#include "serving/pipeline.hpp"
#include "serving/readiness.hpp"
#include "serving/system_resources.hpp"
#include "serving/tasks/task_error.hpp"
#include "trace/span_exporter.hpp"

namespace warden::cli {

namespace {

// A log line is never fatal: stderr may be a pipe whose reader has gone (a restarted log
// shipper, `warden serve 2>&1 | tee` after tee died). The write then fails with EPIPE
// (SIGPIPE is ignored, see run_serve) and the server goes on; fmt::print would throw.
template <typename... Args>
void log_line(fmt::format_string<Args...> format, Args&&... args) {
  const std::string line = fmt::format(format, std::forward<Args>(args)...);
  if (std::fwrite(line.data(), 1, line.size(), stderr) != line.size()) std::clearerr(stderr);
}

struct ServeOptions {
  std::vector<std::string> models;  // [ALIAS=]SOURCE, in order: the first of each kind is its default
  std::string model_dir;            // one more folder (the older flag)
  bool preload = false;
  std::size_t max_loaded_models = 0;
  std::string memory_budget;  // "0", "512MiB", "2G", ...
  std::string on_model_error = "exit";
  std::vector<std::string> dtypes;            // [NAME=]DTYPE: the default precision, or one model's
  std::string pooling;                        // TEI's --pooling: overrides the embedding folders'
  std::vector<std::string> rerank_templates;  // [NAME=]TEMPLATE: every causal LM's, or one model's
  // Unset values come from the machine (serving/system_resources.hpp).
  std::optional<std::size_t> threads;
  std::optional<std::size_t> tokenization_workers;
  std::optional<std::size_t> max_batch_tokens;
  std::optional<std::size_t> max_batch_requests;
  std::optional<std::size_t> max_concurrent_requests;
  std::optional<std::size_t> max_queue;
  std::size_t queue_timeout_ms = 10'000;
  std::size_t shutdown_grace_ms = 10'000;
  std::size_t header_timeout_ms = 10'000;
  std::size_t request_timeout_ms = 30'000;
  std::size_t idle_timeout_ms = 75'000;
  http::RouterOptions router;
  http::ServerOptions server;
  std::optional<std::size_t> io_threads;
  bool no_guard = false;
  std::string guard_bank;
  std::optional<float> guard_threshold;
  double guard_fpr = 0.01;
  std::string guard_model;
  std::string guard_positive_label;
  std::string guard_probe;      // a saved `warden guard fit`
  std::string guard_languages;  // "en,de" | "any"; empty: the embedder's own
  std::string cache_bytes;      // the result cache's bound ("0": off, "64MiB", ...)
  double cache_ttl = 0;         // seconds; 0: entries never expire
  std::string warmup_file;      // one text per line, embedded into the cache before /health is ready
  std::string otlp_endpoint;    // spans over OTLP/HTTP; empty: no tracing
  std::string otlp_service_name = "warden";
  std::optional<int> grpc_port;  // set: serve TEI's gRPC protocol too (0: any free port)
};

// The guard over the served embedder (POST /guard). Fitting it embeds the bank's train
// split once (milliseconds with use-lite; cached after the first start). A bank that
// cannot be loaded leaves the server up without a guard, loudly: /guard then answers 424.
std::unique_ptr<guard::Guard> make_guard(const ServeOptions& options, const embed::Embedder& embedder,
                                         guard::Bank& bank, std::stop_token stop = {}) {
  if (options.no_guard) return nullptr;
  guard::GuardOptions guard_options;
  guard_options.stop = std::move(stop);
  guard_options.threshold = options.guard_threshold;
  guard_options.target_fpr = options.guard_fpr;
  if (!options.guard_languages.empty()) {
    guard_options.languages = guard::parse_language_list(options.guard_languages);
  }
  if (!options.guard_probe.empty()) {  // a probe the user named must load, for this embedder
    auto g = std::make_unique<guard::Guard>(embedder, guard::load_probe(options.guard_probe), guard_options);
    log_line("warden serve: guard: probe from {} on {} (threshold {:.3f})\n", options.guard_probe,
             embedder.id(), g->threshold());
    return g;
  }
  try {
    bank = guard::load_bank(options.guard_bank.empty() ? guard::default_bank_path()
                                                       : std::filesystem::path(options.guard_bank));
    auto g = std::make_unique<guard::Guard>(embedder, bank, guard_options);
    if (g->abstains_always()) {
      log_line("warden serve: guard: {} is lexical, so /guard abstains on every input\n", embedder.id());
    } else {
      log_line("warden serve: guard: probe on {} ({} bank rows, threshold {:.3f}, cache {})\n", embedder.id(),
               bank.entries.size(), g->threshold(), g->probe_info().cache);
    }
    return g;
  } catch (const Error& e) {
    if (!options.guard_bank.empty()) throw;  // a bank the user named must load
    log_line("warden serve: warning: no guard (/guard answers 424): {}\n", e.what());
    return nullptr;
  }
}

// The classifier method (--guard-model): the guard decides with its own model, whatever kind
// the served model is. Unlike the probe's bank, a model the user named must load: any
// failure stops the server.
std::unique_ptr<guard::Guard> make_classifier_guard(const ServeOptions& options,
                                                    const classify::SequenceClassifier& classifier) {
  guard::GuardOptions guard_options;
  guard_options.threshold = options.guard_threshold;
  guard_options.positive_label = options.guard_positive_label;
  auto g = std::make_unique<guard::Guard>(classifier, guard_options);
  log_line("warden serve: guard: classifier {} (positive label {}, threshold {:.3f})\n", classifier.id(),
           g->positive_label_names(), g->threshold());
  return g;
}

// "1073741824", "512MiB", "2G", "1.5GB": bytes (K/M/G/T binary with or without "iB"/"B",
// as memory sizes usually are meant); "0" or "": no budget.
std::size_t parse_bytes(const std::string& text, std::string_view flag = "--memory-budget") {
  if (text.empty()) return 0;
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  std::string unit = text.substr(pos);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = -1;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "K" || unit == "KB" || unit == "KIB") scale = 1024.0;
  if (unit == "M" || unit == "MB" || unit == "MIB") scale = 1024.0 * 1024;
  if (unit == "G" || unit == "GB" || unit == "GIB") scale = 1024.0 * 1024 * 1024;
  if (unit == "T" || unit == "TB" || unit == "TIB") scale = 1024.0 * 1024 * 1024 * 1024;
  if (pos == 0 || scale < 0 || !(value >= 0) || value * scale > 1e18) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{} '{}': expected a size such as 2GiB, 512M or 1073741824", flag, text));
  }
  return static_cast<std::size_t>(value * scale);
}

// --warmup-file: its texts, one a line (blank lines skipped, a trailing \r dropped).
std::vector<std::string> read_warmup_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::InvalidArgument, fmt::format("--warmup-file {}: cannot be read", path));
  std::vector<std::string> texts;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) texts.push_back(std::move(line));
  }
  if (in.bad()) throw Error(ErrorKind::InvalidArgument, fmt::format("--warmup-file {}: read error", path));
  return texts;
}

// --warmup-file: the texts go through the Embed task as /embed's would with default options,
// on the default embedding model, so that their vectors wait in the result cache under the
// keys /embed (and gRPC's Embed) look up. Throws Error(InvalidArgument) when a chunk fails (no
// embedding model, a bad text).
void warm_up(serving::tasks::Tasks& tasks, const std::vector<std::string>& texts) {
  if (!tasks.pipeline().models().default_for({ModelKind::Embedding})) {
    throw Error(ErrorKind::InvalidArgument, "--warmup-file: no embedding model is served");
  }
  // Texts per task: batches like a client's, within the server's batch limit.
  const std::size_t chunk = std::min<std::size_t>(32, std::max<std::size_t>(1, tasks.limits().max_batch));
  for (std::size_t begin = 0; begin < texts.size(); begin += chunk) {
    const std::size_t end = std::min(texts.size(), begin + chunk);
    serving::tasks::Embed task;
    for (std::size_t i = begin; i < end; ++i) task.inputs.push_back({texts[i], {}, false});
    std::promise<std::exception_ptr> answer;
    try {
      tasks.embed({}, std::move(task),
                  [&answer](serving::tasks::Finished<Embeddings>& f) { answer.set_value(f.error); });
    } catch (...) {
      answer.set_value(std::current_exception());
    }
    if (const std::exception_ptr error = answer.get_future().get()) {
      std::string why = "unknown error";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& ex) {
        why = ex.what();
      }
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("--warmup-file: embedding texts {}..{} failed: {}", begin + 1, end, why));
    }
  }
}

// The engine's self-check once the preloaded models are in memory: one text through the
// whole path (tokenizer, scheduler, encoder, kernels) of every preloaded embedder, whose
// vector must be finite and not zero — a kernel that misbehaves on this CPU, or weights that
// decode to NaN, are caught before the server reports ready. Models without a dense output
// (sparse-only, classifiers) are not checked. Returns why it failed; empty when it passed.
std::string self_check(serving::tasks::Tasks& tasks, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const auto status = tasks.pipeline().models().status(name);
    if (!status || status->kind != ModelKind::Embedding) continue;
    serving::tasks::Embed task;
    task.inputs.push_back({"Warden self-check: the quick brown fox jumps over the lazy dog.", {}, false});
    serving::tasks::Context context;
    context.model.exact = name;
    context.cache_lookup = false;
    context.cache_store = false;
    std::promise<std::string> answer;
    try {
      tasks.embed(std::move(context), std::move(task), [&answer](serving::tasks::Finished<Embeddings>& f) {
        if (f.error) {
          try {
            std::rethrow_exception(f.error);
          } catch (const serving::tasks::TaskError& e) {
            answer.set_value(e.fault() == serving::tasks::Fault::ModelCannot ? "" : e.what());
          } catch (const std::exception& e) {
            answer.set_value(e.what());
          }
          return;
        }
        const std::span<const float> v = f.value->values();
        const bool finite = std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
        const bool zero = std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0F; });
        answer.set_value(!finite ? "its vector is not finite" : zero ? "its vector is all zeros" : "");
      });
    } catch (const std::exception& e) {
      answer.set_value(e.what());
    }
    const std::string why = answer.get_future().get();
    if (!why.empty()) return fmt::format("self-check of model {} failed: {}", name, why);
  }
  return {};
}

// Every model the server answers for, resolved and checked (hub ids fetched) before it
// listens: a model that cannot be used stops it here, with exit code 2 and one line naming
// the model and the cause (or, with --on-model-error fallback, is replaced by the hashing
// embedder, loudly). A plain --dtype becomes catalog_options' default (POST /admin/models
// uses it too).
std::vector<catalog::CatalogModel> resolve_models(const ServeOptions& options,
                                                  catalog::CatalogOptions& catalog_options) {
  std::vector<catalog::CatalogModel> models;
  std::vector<catalog::ModelArg> args;
  for (const std::string& a : options.models) args.push_back(catalog::parse_model_arg(a));
  if (!options.model_dir.empty()) args.push_back(catalog::parse_model_arg(options.model_dir));
  // --dtype DTYPE sets every model's precision; --dtype NAME=DTYPE one model's, NAME being
  // its alias or its source as given. --rerank-template the same for the reranker template.
  const auto per_model = [&](std::string_view flag, const std::vector<std::string>& values,
                             std::string& every, std::string catalog::ModelArg::*one, const auto& check) {
    for (const std::string& d : values) {
      const auto eq = d.find('=');
      if (eq == std::string::npos) {
        check(d);  // checked here, with the flag's name in the message
        every = d;
        continue;
      }
      const std::string name = d.substr(0, eq);
      const std::string value = d.substr(eq + 1);
      check(value);
      bool found = false;
      for (catalog::ModelArg& a : args) {
        if (a.alias == name || (a.alias.empty() && a.source == name)) {
          a.*one = value;
          found = true;
        }
      }
      if (!found) {
        throw Error(ErrorKind::InvalidArgument, fmt::format("{} {}: no --model is called {}", flag, d, name));
      }
    }
  };
  per_model("--dtype", options.dtypes, catalog_options.dtype, &catalog::ModelArg::dtype,
            [](const std::string& d) { (void)catalog::resolve_precision(d); });
  per_model("--rerank-template", options.rerank_templates, catalog_options.rerank_template,
            &catalog::ModelArg::rerank_template, [](const std::string& t) {
              try {
                (void)classify::rerank_template(t);
              } catch (const Error& e) {
                throw Error(e.kind(), fmt::format("--rerank-template: {}", e.what()));
              }
            });
  if (args.empty()) {
    catalog::CatalogModel m = catalog::default_model(catalog_options);
    if (!m.spec.tier_reason.empty()) {
      log_line("warden: warning: serving {} (lexical, semantic = false) because {}\n", m.spec.name,
               m.spec.tier_reason);
    }
    models.push_back(std::move(m));
    return models;
  }
  for (const catalog::ModelArg& a : args) {
    catalog::CatalogModel m = catalog::make_model_spec(a, catalog_options);
    if (!m.spec.fallback_reason.empty()) {
      log_line(
          "warden serve: warning: {}; serving {} under the name {} instead (lexical, semantic = false)\n",
          m.spec.fallback_reason, embed::HashingEmbedder::kId, m.spec.name);
    }
    for (const catalog::CatalogModel& other : models) {
      if (other.spec.name == m.spec.name) {
        throw Error(
            ErrorKind::InvalidArgument,
            fmt::format("two models are called {}: give one an alias (--model ALIAS=SOURCE)", m.spec.name));
      }
    }
    models.push_back(std::move(m));
  }
  return models;
}

int run_serve(ServeOptions options) {
  // Process-wide: a write to a pipe whose reader has gone (stderr to a dead log shipper, a
  // socket a client closed) must fail with EPIPE, never kill the server.
  std::signal(SIGPIPE, SIG_IGN);
  const serving::SystemResources resources = serving::detect();
  const std::size_t compute_threads = options.threads.value_or(resources.cpus);
  if (!options.guard_model.empty() && options.no_guard) {
    throw Error(ErrorKind::InvalidArgument, "give --guard-model or --no-guard, not both");
  }
  if (!options.guard_positive_label.empty() && options.guard_model.empty()) {
    throw Error(ErrorKind::InvalidArgument, "--guard-positive-label needs --guard-model");
  }
  if (!options.guard_probe.empty() &&
      (options.no_guard || !options.guard_model.empty() || !options.guard_bank.empty())) {
    throw Error(
        ErrorKind::InvalidArgument,
        "--guard-probe is the whole guard: give it without --no-guard, --guard-model or --guard-bank");
  }
  if (!options.guard_languages.empty()) (void)guard::parse_language_list(options.guard_languages);
  const std::size_t cache_bytes = parse_bytes(options.cache_bytes, "--cache-bytes");
  if (!(options.cache_ttl >= 0) || options.cache_ttl > 1e9) {
    throw Error(ErrorKind::InvalidArgument, "--cache-ttl must be a number of seconds, 0 or more");
  }
  std::vector<std::string> warmup_texts;
  if (!options.warmup_file.empty()) {
    if (cache_bytes == 0) throw Error(ErrorKind::InvalidArgument, "--warmup-file needs --cache-bytes");
    warmup_texts = read_warmup_file(options.warmup_file);
  }
  if (options.on_model_error != "exit" && options.on_model_error != "fallback") {
    throw Error(ErrorKind::InvalidArgument, "--on-model-error must be exit or fallback");
  }
  // One compute pool for every model: the scheduler runs one batch at a time.
  auto pool = std::make_unique<ThreadPool>(compute_threads);
  catalog::CatalogOptions catalog_options;
  catalog_options.pool = pool.get();
  catalog_options.hub = hub::HubOptions::from_environment();
  catalog_options.pooling = options.pooling;
  catalog_options.on_error =
      options.on_model_error == "fallback" ? catalog::OnModelError::Fallback : catalog::OnModelError::Exit;
  catalog_options.progress = [](const hub::Progress& p) {
    if (p.cached || (p.total != 0 && p.done != p.total)) return;
    log_line("warden serve: downloaded {} ({} bytes)\n", p.file, p.done);
  };
  std::vector<catalog::CatalogModel> resolved;
  try {
    resolved = resolve_models(options, catalog_options);
  } catch (const Error& e) {
    // Start-up checks: whatever the cause (missing folder, bad file, download), exit code 2.
    log_line("warden serve: error: {}\n", e.what());
    return kExitUsage;
  }

  serving::MetricsRegistry metrics;
  metrics.enable_process_metrics();
  serving::ModelManagerOptions manager_options;
  manager_options.max_loaded = options.max_loaded_models;
  manager_options.memory_budget = parse_bytes(options.memory_budget);
  // A request waits for its model's load as long as it would wait in the queue.
  manager_options.load_wait = std::chrono::milliseconds(options.queue_timeout_ms);
  serving::ModelManager models(manager_options, &metrics);

  // The guard's probe embeds with the first embedding model, which stays in memory for it.
  std::string guard_model_name;
  if (options.guard_model.empty() && !options.no_guard) {
    for (catalog::CatalogModel& m : resolved) {
      if (m.spec.kind == ModelKind::Embedding) {
        m.spec.pinned = true;
        guard_model_name = m.spec.name;
        break;
      }
    }
  }
  std::size_t width = 0;
  std::vector<std::string> names;
  for (catalog::CatalogModel& m : resolved) {
    width = std::max(width, m.width);
    names.push_back(m.spec.name);
    models.add(std::move(m.spec));
  }
  // Start-up checks went as far as they can without the weights. The guard's model loads
  // before the server listens (the guard is built on it); --preload's others load once it
  // listens, with /health answering 503 until they are in (and a model that fails to load
  // then stops the server, as it would have before listening).
  try {
    if (!guard_model_name.empty()) models.preload({guard_model_name});
  } catch (const std::exception& e) {
    log_line("warden serve: error: a model failed to load: {}\n", e.what());
    return kExitUsage;
  }

  guard::Bank bank;
  std::unique_ptr<classify::NeuralClassifier> guard_classifier;
  std::unique_ptr<guard::Guard> guard;
  serving::LeasePtr guard_lease;  // keeps the probe's model in memory while the server runs
  // The probe on the shipped bank is fitted (or its cached fit checked, tens of milliseconds)
  // while the server already listens and embeds: no start waits for the guard. /guard waits
  // for it. A bank or probe the user named must load, so those are fitted first, as before.
  serving::tasks::GuardSlot guard_pending;
  std::unique_ptr<guard::Guard> fitted_guard;  // the background fit's, once guard_pending is filled
  std::jthread guard_fit;
  if (!options.guard_model.empty()) {
    guard_classifier = std::make_unique<classify::NeuralClassifier>(options.guard_model, pool.get());
    guard = make_classifier_guard(options, *guard_classifier);
    if (!options.guard_bank.empty()) {
      log_line("warden serve: warning: --guard-bank is not used: the classifier method needs no bank\n");
    }
    width = std::max(width, guard_classifier->hidden_size());
  } else if (!guard_model_name.empty()) {
    guard_lease = models.hold(guard_model_name);
    if (options.guard_probe.empty() && options.guard_bank.empty()) {
      guard_fit = std::jthread([&options, &bank, &fitted_guard, &guard_pending,
                                embedder = guard_lease->model().embedder.get()](const std::stop_token& stop) {
        try {
          fitted_guard = make_guard(options, *embedder, bank, stop);
        } catch (const guard::FitStopped&) {
          log_line("warden serve: the guard's fit was stopped: the server is stopping\n");
        } catch (const std::exception& e) {
          log_line("warden serve: warning: no guard (/guard answers 424): {}\n", e.what());
        }
        guard_pending.fill(fitted_guard.get());
      });
    } else {
      guard = make_guard(options, *guard_lease->model().embedder, bank);
    }
  }

  // Batch limits from the memory there is, for the widest model's activations.
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
  service.router.guard_model = guard_model_name;
  serving::Readiness readiness("loading models");
  service.router.readiness = &readiness;
  std::unique_ptr<trace::SpanExporter> tracer;
  if (!options.otlp_endpoint.empty()) {
    trace::ExporterOptions t;
    t.endpoint = options.otlp_endpoint;
    t.service_name = options.otlp_service_name;
    tracer = std::make_unique<trace::SpanExporter>(std::move(t));
    service.router.tracer = tracer.get();
    const trace::SpanExporter* exporter = tracer.get();
    metrics.counter_callback("warden_trace_spans_exported_total", "Spans the OTLP collector accepted",
                             [exporter] { return static_cast<double>(exporter->counts().exported); });
    metrics.counter_callback("warden_trace_spans_dropped_total",
                             "Spans dropped: the export queue was full, or their export failed", [exporter] {
                               const trace::ExporterCounts c = exporter->counts();
                               return static_cast<double>(c.dropped + c.failed_spans);
                             });
    metrics.counter_callback("warden_trace_export_failures_total",
                             "OTLP export requests that failed (collector unreachable, slow or refusing)",
                             [exporter] { return static_cast<double>(exporter->counts().failed_exports); });
  }
  service.cache.max_bytes = cache_bytes;
  if (guard_fit.joinable()) service.guard_pending = &guard_pending;
  service.cache.ttl =
      std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(options.cache_ttl * 1000.0)));
  // POST /admin/models: the same resolution as --model, but a bad source is the caller's
  // error, never a silent fallback.
  service.router.make_spec = [catalog_options](const std::string& name, const std::string& source,
                                               const std::string& dtype) {
    catalog::CatalogOptions o = catalog_options;
    o.on_error = catalog::OnModelError::Exit;
    o.progress = {};
    return catalog::make_model_spec(catalog::ModelArg{name, source, dtype}, o).spec;
  };
  options.server.io_threads = options.io_threads.value_or(sizing.io_threads);
  options.server.handle_signals = true;
  options.server.header_timeout = std::chrono::milliseconds(options.header_timeout_ms);
  options.server.request_timeout = std::chrono::milliseconds(options.request_timeout_ms);
  options.server.idle_timeout = std::chrono::milliseconds(options.idle_timeout_ms);
  options.server.shutdown_grace = std::chrono::milliseconds(options.shutdown_grace_ms);

  http::Service app(models, guard.get(), service, &metrics);
  http::Server server(options.server, app.handler());
  // gRPC on the same pipeline, host and key as HTTP.
  std::unique_ptr<grpc::GrpcServer> grpc_server;
  if (options.grpc_port) {
    grpc::GrpcOptions g;
    g.hostname = options.server.hostname;
    g.port = *options.grpc_port;
    g.api_key = service.router.api_key;
    g.max_message_bytes = options.server.payload_limit;
    try {
      grpc_server = std::make_unique<grpc::GrpcServer>(app.runtime().tasks(), g, &metrics);
    } catch (const Error& e) {
      log_line("warden serve: error: {}\n", e.what());
      return kExitUsage;
    }
  }
  metrics.gauge_callback("warden_open_connections", "HTTP connections open now",
                         [&server] { return static_cast<double>(server.open_connections()); });

  log_line("warden serve: {}\n", resources.describe());
  log_line("warden serve: sized for this machine: {}\n", sizing.describe());
  for (const serving::ModelStatus& st : models.list()) {
    log_line("warden serve: model={} source={} kind={} semantic={} state={}{}{}\n", st.name, st.source,
             model_kind_name(st.kind), st.semantic, serving::model_state_name(st.state),
             st.dim != 0 ? fmt::format(" dim={}", st.dim) : std::string(), st.pinned ? " pinned" : "");
  }
  log_line(
      "warden serve: max_loaded_models={} memory_budget={} preload={} on_model_error={} "
      "listening=http://{}:{}{}\n",
      manager_options.max_loaded, manager_options.memory_budget, options.preload, options.on_model_error,
      options.server.hostname, server.port(),
      grpc_server ? fmt::format(" grpc={}:{}", options.server.hostname, grpc_server->port()) : std::string());
  log_line(
      "warden serve: compute_threads={} io_threads={} tokenization_workers={} max_batch_tokens={} "
      "max_batch_requests={} max_concurrent_requests={} max_queue={} queue_timeout_ms={} "
      "max_client_batch_size={} max_response_floats={} auto_truncate={} payload_limit={} "
      "header_limit={} header_timeout_ms={} "
      "request_timeout_ms={} idle_timeout_ms={} max_connections={} api_key={}\n",
      pool->size(), options.server.io_threads, service.workers, service.scheduler.max_batch_tokens,
      service.scheduler.max_batch_inputs, service.scheduler.max_concurrent, service.scheduler.max_queue,
      options.queue_timeout_ms, service.router.max_client_batch_size, service.router.max_response_floats,
      service.router.auto_truncate, options.server.payload_limit, options.server.header_limit,
      options.header_timeout_ms, options.request_timeout_ms, options.idle_timeout_ms,
      server.max_connections(), service.router.api_key.empty() ? "off" : "on");
  log_line("warden serve: cache_bytes={} cache_ttl_s={}\n", cache_bytes, options.cache_ttl);
  std::fflush(stderr);
  // Bring-up, while the server already answers (/health 503 with what it is doing): the
  // preloaded models, the warm-up texts, the self-check. A model that fails to load or a
  // warm-up that fails stops the server (exit 2, as before it listened); a failed
  // self-check leaves it running, not ready, saying why.
  std::atomic<bool> bring_up_failed = false;
  const bool bring_up_work = options.preload || !options.warmup_file.empty();
  // gRPC's health service follows /health's readiness (not the lazy-load failures /health
  // also reports: those are read when /health is asked, and nothing asks for gRPC's).
  const auto mark_ready = [&] {
    readiness.ready();
    if (grpc_server) grpc_server->set_serving(true);
    log_line("warden serve: ready\n");
  };
  if (!bring_up_work) {
    // Nothing to wait for: ready before the first request can ask.
    mark_ready();
  } else if (grpc_server) {
    grpc_server->set_serving(false);
  }
  std::jthread bring_up;
  if (bring_up_work) {
    bring_up = std::jthread([&] {
      bool loading = options.preload;
      try {
        if (options.preload) {
          readiness.starting(fmt::format("loading {} model(s)", names.size()));
          models.preload(names);
          loading = false;
        }
        if (!options.warmup_file.empty()) {
          readiness.starting("warming the result cache");
          const auto start = std::chrono::steady_clock::now();
          warm_up(app.runtime().tasks(), warmup_texts);
          const double seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          log_line("warden serve: warmed the result cache with {} texts from {} in {:.3f} s\n",
                   warmup_texts.size(), options.warmup_file, seconds);
        }
      } catch (const std::exception& e) {
        readiness.failed(e.what());
        log_line("warden serve: error: {}{}\n", loading ? "a model failed to load: " : "", e.what());
        bring_up_failed = true;
        server.stop();
        return;
      }
      if (options.preload) {
        readiness.starting("self-check");
        const std::string failure = self_check(app.runtime().tasks(), names);
        if (!failure.empty()) {
          readiness.failed(failure);  // before the log line that says so (a test reads it)
          log_line("warden serve: error: {}; /health answers 503 until it is restarted\n", failure);
          return;
        }
      }
      mark_ready();
    });
  }
  server.run();
  if (bring_up.joinable()) bring_up.join();
  // The server has stopped accepting and drained its connections; gRPC's calls finish (or
  // are cancelled past the grace) while the scheduler still runs; then answer what is queued.
  if (grpc_server) grpc_server->shutdown(std::chrono::milliseconds(options.shutdown_grace_ms));
  // A fit still running (a first start's) stops at its next chunk rather than delaying the
  // exit by seconds; guard requests that waited for it are answered (424) before the shutdown.
  if (guard_fit.joinable()) {
    guard_fit.request_stop();
    guard_fit.join();
  }
  app.shutdown(std::chrono::milliseconds(options.shutdown_grace_ms));
  log_line("warden serve: stopped\n");
  return bring_up_failed ? kExitUsage : kExitOk;
}

}  // namespace

Command add_serve_command(CLI::App& root) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* app = root.add_subcommand(
      "serve", "Serve embeddings, reranking or classification over HTTP (TEI, OpenAI, Cohere routes)");
  // Every flag can also come from a WARDEN_* variable (a container's usual way); a flag on
  // the command line wins.
  app->add_option("--model,-m", o->models,
                  "A model to serve, [ALIAS=]SOURCE; give it several times. SOURCE: a built-in (use-lite, "
                  "hashing-ngram-256), a HuggingFace folder, or a HuggingFace id ORG/NAME[@REVISION] "
                  "(downloaded into the HF cache). Requests pick one with `model` or /models/{name}/...; the "
                  "first of each kind is the default (none given: use-lite when converted, else "
                  "hashing-ngram-256)")
      ->delimiter(',')
      ->envname("WARDEN_MODEL");
  app->add_option(
         "--model-dir", o->model_dir,
         fmt::format("A HuggingFace model folder (the same as --model DIR); a *ForSequenceClassification "
                     "folder is served as a reranker (one label) or classifier. Architectures: {}",
                     model::supported_architectures()))
      ->envname("WARDEN_MODEL_DIR");
  app->add_flag("--preload", o->preload,
                "Load every model at start-up (default: on first use; the guard's model always at start-up)")
      ->envname("WARDEN_PRELOAD");
  app->add_option(
         "--max-loaded-models", o->max_loaded_models,
         "Models in memory at most; the least recently used idle one is unloaded first (0: no bound)")
      ->capture_default_str()
      ->envname("WARDEN_MAX_LOADED_MODELS");
  app->add_option("--memory-budget", o->memory_budget,
                  "Memory the loaded models may hold, e.g. 2GiB (estimated from their files; 0: no bound)")
      ->envname("WARDEN_MEMORY_BUDGET");
  app->add_option("--dtype", o->dtypes,
                  "Precision of the models' dense layers: float32 (default, exact), bfloat16, int8, or auto "
                  "(the fastest this CPU runs within the accuracy bar of docs/precision.md). NAME=DTYPE sets "
                  "one model's (NAME: its alias or source); give it several times")
      ->delimiter(',')
      ->envname("WARDEN_DTYPE");
  app->add_option(
         "--pooling", o->pooling,
         "Pool the embedding models otherwise than their folders say, as TEI's --pooling: cls, mean, "
         "max, lasttoken, or splade (a *ForMaskedLM repo without sentence-transformers' SpladePooling "
         "module, e.g. naver/splade-cocondenser-ensembledistil, as a SPLADE model)")
      ->check(CLI::IsMember({"cls", "mean", "max", "lasttoken", "last-token", "splade"}))
      ->envname("WARDEN_POOLING");
  app->add_option(
         "--rerank-template", o->rerank_templates,
         "Serve the causal-LM folders without a Pooling module (mxbai-rerank-v2's Qwen2, ...) as LLM "
         "rerankers with this template: qwen3-reranker, mxbai-rerank-v2, bge-reranker-v2-gemma, or a "
         ".json file (docs/model-files.md). Default: the family's own (Qwen3, Gemma). NAME=TEMPLATE "
         "sets one model's; give it several times")
      ->envname("WARDEN_RERANK_TEMPLATE");
  app->add_option("--on-model-error", o->on_model_error,
                  "A model that cannot be used at start-up: exit (code 2), or fallback (serve the lexical "
                  "hashing embedder under its name, marked semantic=false)")
      ->capture_default_str()
      ->envname("WARDEN_ON_MODEL_ERROR");
  app->add_option("--hostname", o->server.hostname, "IP address to listen on")
      ->capture_default_str()
      ->envname("WARDEN_HOSTNAME");
  app->add_option("--port,-p", o->server.port, "TCP port (0: any free port)")
      ->capture_default_str()
      ->envname("WARDEN_PORT");
  app->add_option(
         "--grpc-port", o->grpc_port,
         "Also serve TEI's gRPC protocol (tei.v1) on this port, same host, key and queue (0: any free "
         "port; default: off)")
      ->envname("WARDEN_GRPC_PORT");
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
  app->add_option(
         "--max-response-floats", o->router.max_response_floats,
         "Most vector values one answer may hold (/embed_all: tokens x dim); more: 413 before computing")
      ->capture_default_str()
      ->envname("WARDEN_MAX_RESPONSE_FLOATS");
  app->add_option("--max-client-batch-size", o->router.max_client_batch_size,
                  "Most inputs in one request (more: 422)")
      ->capture_default_str()
      ->envname("WARDEN_MAX_CLIENT_BATCH_SIZE");
  app->add_option("--auto-truncate", o->router.auto_truncate,
                  "Truncate over-long inputs when a request does not say (false: 422 for them)")
      ->capture_default_str()
      ->envname("WARDEN_AUTO_TRUNCATE");
  app->add_option("--api-key", o->router.api_key,
                  "Require Authorization: Bearer <key> on every route but /health (and /metrics with "
                  "--public-metrics)")
      ->envname("WARDEN_API_KEY");
  app->add_flag("--strict-model-names", o->router.strict_model_names,
                "A request's `model` that no served model has is 404 (default: the route's default model "
                "answers, and X-Warden-Requested-Model names what was asked)")
      ->envname("WARDEN_STRICT_MODEL_NAMES");
  app->add_flag("--public-metrics", o->router.public_metrics,
                "With --api-key: /metrics answers without the key (a scraper that cannot send one)")
      ->envname("WARDEN_PUBLIC_METRICS");
  app->add_option("--shutdown-grace-ms", o->shutdown_grace_ms,
                  "On SIGTERM/SIGINT/SIGHUP, how long requests in flight and queued work may still finish")
      ->capture_default_str()
      ->envname("WARDEN_SHUTDOWN_GRACE_MS");
  app->add_option("--header-limit", o->server.header_limit,
                  "Largest request line + headers, bytes (more: 431)")
      ->capture_default_str()
      ->envname("WARDEN_HEADER_LIMIT");
  app->add_option("--header-timeout-ms", o->header_timeout_ms,
                  "A request's head must arrive within this (a new connection's first one: from the connect)")
      ->capture_default_str()
      ->envname("WARDEN_HEADER_TIMEOUT_MS");
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
  app->add_option("--guard-fpr", o->guard_fpr,
                  "The probe's threshold flags at most this fraction of the bank's benign train texts "
                  "(out of fold)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.5))
      ->envname("WARDEN_GUARD_FPR");
  app->add_option("--guard-probe", o->guard_probe,
                  "A probe saved by `warden guard fit` (its --out folder, or the file) that /guard judges "
                  "with, over the served embedder it was fitted on, instead of fitting on the bank")
      ->envname("WARDEN_GUARD_PROBE");
  app->add_option("--guard-languages", o->guard_languages,
                  "Languages the probe's embedder reads (ISO 639-1 codes: en,de,fr; or \"any\"); /guard "
                  "abstains on text in others (default: what the embedder declares; use-lite: en)")
      ->envname("WARDEN_GUARD_LANGUAGES");
  app->add_option("--guard-model", o->guard_model,
                  "A *ForSequenceClassification folder that /guard decides with (the classifier method) "
                  "instead of the probe over the served embedder; the served model may then be any kind")
      ->envname("WARDEN_GUARD_MODEL");
  app->add_option("--guard-positive-label", o->guard_positive_label,
                  "The --guard-model label whose probability is the score (default: the first naming "
                  "INJECTION, ATTACK, JAILBREAK or UNSAFE)")
      ->envname("WARDEN_GUARD_POSITIVE_LABEL");
  app->add_option("--cache-bytes", o->cache_bytes,
                  "Result cache bound (e.g. 64MiB): repeated inputs are answered from memory; 0: off")
      ->envname("WARDEN_CACHE_BYTES");
  app->add_option("--cache-ttl", o->cache_ttl, "Seconds a cached result lives (0: until evicted)")
      ->envname("WARDEN_CACHE_TTL");
  app->add_option("--warmup-file", o->warmup_file,
                  "Texts (one a line) embedded into the result cache at start-up (/health answers 503 "
                  "until they are in); needs --cache-bytes")
      ->envname("WARDEN_WARMUP_FILE");
  app->add_option("--otlp-endpoint", o->otlp_endpoint,
                  "An OpenTelemetry collector's OTLP/HTTP URL (http://HOST:4318): every request's spans "
                  "(request, tokenize, queue, inference, response) are exported there, continuing the "
                  "request's W3C traceparent")
      ->envname("WARDEN_OTLP_ENDPOINT");
  app->add_option("--otlp-service-name", o->otlp_service_name, "The spans' service.name")
      ->capture_default_str()
      ->envname("WARDEN_OTLP_SERVICE_NAME");
  return {app, [o] { return run_serve(*o); }};
}

}  // namespace warden::cli
