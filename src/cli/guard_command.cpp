// `warden guard` (decide per input: one JSON line each), `warden guard-eval` (the field's
// figures for the configured guard on labelled JSONL) and `warden guard fit` (fit a probe on
// the user's own labelled data and save it). guard and guard-eval build the same Guard: the
// embedder (default: use-lite when converted), the bank (--guard-bank, default the shipped
// one) and the probe fitted on the bank's train split, or the probe a `guard fit` saved
// (--guard-probe); or, with --guard-model, the classifier method over that model (the bank
// then only supplies guard-eval's test split).

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "catalog/open_model.hpp"
#include "classify/sequence_classifier.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/json_writer.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"
#include "embed/neural_embedder.hpp"
#include "embed/registry.hpp"
#include "guard/bank.hpp"
#include "guard/eval.hpp"
#include "guard/guard.hpp"
#include "guard/language.hpp"
#include "guard/probe_file.hpp"

namespace warden::cli {

namespace {

struct GuardCliOptions {
  std::string model;
  std::string model_dir;
  std::size_t threads = 0;
  std::string bank;
  std::optional<float> threshold;
  double fpr = 0.01;
  std::string guard_model;
  std::string positive_label;
  std::string probe;      // --guard-probe: a saved fit
  std::string languages;  // --guard-languages: "en,de", "any"; empty: the embedder's own
  bool no_cache = false;
  std::vector<std::string> texts;  // guard
  std::string file;                // guard-eval
  std::string scores;              // guard-eval --scores: one line per scored text
  std::string data;                // guard fit
  std::string out;                 // guard fit
};

// The embedder, the pool it runs on and the guard, built once per command.
struct Built {
  std::unique_ptr<ThreadPool> pool;
  catalog::OpenModel model;  // the embedder, or the classifier method's model
  guard::Bank bank;
  std::unique_ptr<guard::Guard> guard;
};

// `need_bank`: guard-eval reads the bank's test split even when the classifier decides;
// `warden guard --guard-model` needs no bank at all.
Built build(const GuardCliOptions& options, bool need_bank) {
  if (!options.model.empty() && !options.model_dir.empty()) {
    throw Error(ErrorKind::InvalidArgument, "give --model or --model-dir, not both");
  }
  Built b;
  const auto load_bank = [&] {
    b.bank = guard::load_bank(options.bank.empty() ? guard::default_bank_path()
                                                   : std::filesystem::path(options.bank));
  };
  guard::GuardOptions guard_options;
  guard_options.threshold = options.threshold;
  guard_options.target_fpr = options.fpr;
  guard_options.use_cache = !options.no_cache;
  guard_options.positive_label = options.positive_label;
  if (!options.languages.empty()) {
    guard_options.languages = guard::parse_language_list(options.languages);
  }
  if (!options.guard_model.empty() && !options.probe.empty()) {
    throw Error(ErrorKind::InvalidArgument, "give --guard-model or --guard-probe, not both");
  }
  if (!options.guard_model.empty()) {
    if (!options.model.empty() || !options.model_dir.empty()) {
      throw Error(ErrorKind::InvalidArgument,
                  "--guard-model decides by itself: give it without --model or --model-dir");
    }
    b.pool = std::make_unique<ThreadPool>(options.threads);
    b.model = catalog::open_model(options.guard_model, command_catalog_options(b.pool.get(), "float32"),
                                  ModelKind::Classifier, "guard --guard-model");
    b.guard = std::make_unique<guard::Guard>(*b.model.loaded->classifier, guard_options);
    if (need_bank) load_bank();
    return b;
  }
  if (!options.positive_label.empty()) {
    throw Error(ErrorKind::InvalidArgument, "--guard-positive-label needs --guard-model");
  }
  b.pool = std::make_unique<ThreadPool>(options.threads);
  b.model =
      catalog::open_model(options.model_dir.empty() ? options.model : options.model_dir,
                          command_catalog_options(b.pool.get(), "float32"), ModelKind::Embedding, "guard");
  if (!b.model.fallback_reason.empty()) {
    fmt::print(stderr, "warning: guarding with {} (lexical: every input will be abstained on) because {}\n",
               b.model.model.spec.name, b.model.fallback_reason);
  }
  if (!options.probe.empty()) {
    b.guard = std::make_unique<guard::Guard>(*b.model.loaded->embedder, guard::load_probe(options.probe),
                                             guard_options);
    if (need_bank) load_bank();
    return b;
  }
  load_bank();
  b.guard = std::make_unique<guard::Guard>(*b.model.loaded->embedder, b.bank, guard_options);
  const std::string& cache = b.guard->probe_info().cache;
  if (cache.rfind("refit", 0) == 0) {
    fmt::print(stderr, "warning: the guard's cached probe {} was rejected and refitted ({})\n",
               b.guard->probe_info().cache_file, cache);
  }
  return b;
}

std::vector<std::string> read_stdin_lines() {
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

int run_guard(const GuardCliOptions& options) {
  const Built b = build(options, false);
  const std::vector<std::string> texts = options.texts.empty() ? read_stdin_lines() : options.texts;
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  const std::vector<guard::GuardResult> results = b.guard->decide_texts(views);
  for (std::size_t i = 0; i < results.size(); ++i) fmt::print("{}\n", results[i].to_json(views[i]));
  return kExitOk;
}

int run_guard_eval(const GuardCliOptions& options) {
  const Built b = build(options, options.file.empty());
  std::vector<guard::BankEntry> labelled;
  if (options.file.empty()) {
    labelled = b.bank.split(true);
    if (labelled.empty()) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("{} has no test split: pass --file LABELLED.jsonl", b.bank.source));
    }
  } else {
    labelled = guard::load_bank(options.file).entries;
  }
  std::vector<guard::GuardResult> verdicts;
  const guard::EvalReport report =
      guard::evaluate(*b.guard, labelled, options.scores.empty() ? nullptr : &verdicts);
  if (!options.scores.empty()) {
    std::string lines;
    for (std::size_t i = 0; i < labelled.size(); ++i) {
      JsonWriter w;
      w.begin_object().key("index").value(static_cast<std::uint64_t>(i));
      w.key("line").value(static_cast<std::uint64_t>(labelled[i].line));
      w.key("label")
          .value(labelled[i].attack ? "attack" : "benign")
          .key("category")
          .value(labelled[i].category);
      w.key("score");
      verdicts[i].score ? w.value(*verdicts[i].score) : w.value(nullptr);
      w.key("flagged");
      verdicts[i].flagged ? w.value(*verdicts[i].flagged) : w.value(nullptr);
      w.key("method").value(verdicts[i].method).end_object();
      lines += w.take() + "\n";
    }
    write_file_atomic(options.scores, lines);
  }
  fmt::print("{}\n", report.to_json(2));
  return kExitOk;
}

// `warden guard fit`: the probe on the user's embedder and labelled data, saved to --out with
// its cross-validated figures (and, when the data has a test split, the figures on it).
int run_guard_fit(GuardCliOptions options) {
  options.bank = options.data;
  options.no_cache = true;  // the saved folder is the result; the cache is for the shipped bank
  const Built b = build(options, true);
  if (b.guard->abstains_always()) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{} is lexical (semantic = false): a probe on it cannot judge meaning; fit on a "
                            "semantic embedder",
                            b.model.model.spec.name));
  }
  const guard::FittedProbe& probe = b.guard->fitted_probe();
  JsonWriter w(JsonWriter::Options{.indent = 2});
  w.begin_object();
  w.key("embedder").value(probe.embedder);
  w.key("data").value(options.data);
  w.key("exemplars").value(static_cast<std::uint64_t>(probe.texts.size()));
  w.key("l2").value(probe.l2);
  w.key("threshold").value(probe.threshold);
  w.key("target_fpr").value(options.fpr);
  w.key("cross_validated").begin_object();
  w.key("texts").value(static_cast<std::uint64_t>(probe.cv.texts));
  w.key("attacks").value(static_cast<std::uint64_t>(probe.cv.attacks));
  w.key("roc_auc");
  probe.cv.auc ? w.value(*probe.cv.auc) : w.value(nullptr);
  w.key("recall").value(probe.cv.recall);
  w.key("false_positive_rate").value(probe.cv.false_positive_rate);
  w.end_object();
  const std::vector<guard::BankEntry> test = b.bank.split(true);
  w.key("test");
  if (test.empty()) {
    w.value(nullptr);
  } else {
    w.raw(guard::evaluate(*b.guard, test).to_json());
  }
  w.end_object();
  const std::string report = w.take();
  const std::filesystem::path out(options.out);
  std::filesystem::create_directories(out);
  write_file_atomic(out / guard::kProbeFileName, guard::serialise_probe(probe));
  write_file_atomic(out / "fit_report.json", report + "\n");
  fmt::print("{}\n", report);
  fmt::print(stderr, "saved the probe to {}: serve it with --guard-probe {}\n",
             (out / guard::kProbeFileName).string(), out.string());
  return kExitOk;
}

void add_common(CLI::App* app, GuardCliOptions& o) {
  app->add_option(
      "--model,-m", o.model,
      "The embedder, as `warden serve --model` takes it: a built-in (use-lite, hashing-ngram-256), a "
      "HuggingFace folder or id (default: use-lite when converted, else hashing-ngram-256, which "
      "abstains)");
  app->add_option("--model-dir", o.model_dir,
                  "A HuggingFace model folder to embed with (the same as --model DIR)");
  app->add_option("--threads", o.threads, "Compute threads (default: the CPUs available)");
  app->add_option("--guard-bank", o.bank,
                  "Labelled bank (JSONL {\"text\",\"label\"}; default: the shipped one)");
  app->add_option("--guard-threshold", o.threshold,
                  "Flag when score >= this (default: chosen on train folds; 0.5 with --guard-model)")
      ->check(CLI::Range(0.0F, 1.0F));
  app->add_option("--guard-fpr", o.fpr,
                  "The probe's threshold flags at most this fraction of the bank's benign train texts "
                  "(out of fold)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.5));
  app->add_option(
      "--guard-model", o.guard_model,
      "A *ForSequenceClassification folder or HuggingFace id that decides instead of the probe (the "
      "classifier method)");
  app->add_option("--guard-positive-label", o.positive_label,
                  "The --guard-model label whose probability is the score (default: the first naming "
                  "INJECTION, ATTACK, JAILBREAK or UNSAFE)");
  app->add_option("--guard-languages", o.languages,
                  "Languages the probe's embedder reads, as ISO 639-1 codes (en,de,fr), or \"any\"; text "
                  "in another abstains (default: what the embedder declares; use-lite: en)");
}

void add_probe_source(CLI::App* app, GuardCliOptions& o) {
  app->add_option("--guard-probe", o.probe,
                  "A probe saved by `warden guard fit` (its --out folder, or the file): judge with it "
                  "instead of fitting on the bank");
  app->add_flag("--no-cache", o.no_cache, "Fit the probe even when a cached fit exists, and do not cache it");
}

}  // namespace

Command add_guard_command(CLI::App& root) {
  auto options = std::make_shared<GuardCliOptions>();
  CLI::App* app =
      root.add_subcommand("guard", "Judge texts for prompt injection (arguments, or stdin one per line)");
  add_common(app, *options);
  add_probe_source(app, *options);
  app->add_option("texts", options->texts, "Texts to judge; none reads stdin (a text \"fit\" goes after --)");

  // `warden guard fit`: runs instead of `guard` when given.
  auto fit_options = std::make_shared<GuardCliOptions>();
  CLI::App* fit = app->add_subcommand(
      "fit",
      "Fit the guard's probe on your embedder and labelled JSONL, report its figures, save it to --out");
  add_common(fit, *fit_options);
  fit->add_option("--data", fit_options->data,
                  "Labelled JSONL: {\"text\", \"label\": \"attack\"|\"benign\", \"category\"?, \"split\"?: "
                  "\"train\"|\"test\"} per line; fitted on train, figures on test")
      ->required();
  fit->add_option("--out", fit_options->out, "Folder to save the probe and its report in")->required();
  return {app, [options, fit_options, fit] {
            return fit->parsed() ? run_guard_fit(*fit_options) : run_guard(*options);
          }};
}

Command add_guard_eval_command(CLI::App& root) {
  auto options = std::make_shared<GuardCliOptions>();
  CLI::App* app =
      root.add_subcommand("guard-eval", "Precision, recall, F1 and ROC AUC of the guard on labelled JSONL");
  add_common(app, *options);
  add_probe_source(app, *options);
  app->add_option("--file", options->file, "Labelled JSONL to score (default: the bank's test split)");
  app->add_option("--scores", options->scores,
                  "Also write each scored text's verdict to this JSONL file (index, line, label, category, "
                  "score, flagged, method)");
  return {app, [options] { return run_guard_eval(*options); }};
}

}  // namespace warden::cli
