// `warden embed`: texts from arguments or stdin (one per line) to JSON lines or .npy; with
// --input, a bulk job over a whole corpus (docs/bulk.md).

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bulk/retrieval_writer.hpp"
#include "bulk/scorers.hpp"
#include "bulk/vector_writer.hpp"
#include "catalog/open_model.hpp"
#include "cli/bulk_run.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "serving/results.hpp"

namespace warden::cli {

namespace {

struct EmbedOptions {
  std::string model;
  std::string model_dir;
  std::size_t threads = 0;  // 0: from the CPUs available
  std::string format;       // "": jsonl, or by the output's extension in a bulk job
  std::string output;       // empty: stdout
  std::string dtype = "float32";
  std::string pooling;                // overrides the folder's (TEI's --pooling)
  std::string output_kind = "dense";  // a bulk job's: dense, sparse or multi
  std::string input_type = "document";
  std::string prompt_name;  // a prompt by name (a task adapter with it); empty: the model's default
  std::vector<std::string> texts;
  BulkFlags bulk;
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

// `warden embed --input FILE --output-kind sparse|multi`: each record's sparse vector (JSON
// lines) or token vectors (.npy + offsets), as /embed_hybrid gives them.
int run_bulk_retrieval(const EmbedOptions& options, const embed::Embedder& embedder, const std::string& model,
                       ThreadPool* pool) {
  const bool sparse = options.output_kind == "sparse";
  const bulk::OutputFormat format = options.format.empty() ? bulk::detect_output_format(options.output)
                                                           : *bulk::parse_output_format(options.format);
  if (sparse && format != bulk::OutputFormat::Jsonl) {
    throw Error(ErrorKind::InvalidArgument, "--output-kind sparse writes JSON lines (--format jsonl)");
  }
  if (!sparse && (format != bulk::OutputFormat::Npy || options.output.empty())) {
    throw Error(ErrorKind::InvalidArgument,
                "--output-kind multi writes a .npy file (--format npy --output FILE)");
  }
  const bulk::RetrievalScorer scorer(embedder,
                                     sparse ? bulk::RetrievalKind::Sparse : bulk::RetrievalKind::Multi,
                                     options.input_type == "query");
  BulkJob job;
  job.output = options.output;
  job.binary = !sparse;
  job.fingerprint = {{"command", "embed"},
                     {"model", model},
                     {"output_kind", options.output_kind},
                     {"input_type", options.input_type},
                     {"dim", std::to_string(sparse ? 0 : embedder.multi_vector_dim())},
                     {"dtype", options.dtype},
                     {"format", std::string(bulk::output_format_name(format))}};
  bulk::SinkOptions sink;
  sink.path = job.output.empty() ? std::filesystem::path("-") : std::filesystem::path(job.output);
  sink.format = format;
  sink.dim = embedder.multi_vector_dim();
  sink.model = model;
  job.files = sparse ? std::vector<std::filesystem::path>{sink.path} : bulk::multi_vector_files(sink.path);
  job.make_sink = [sink, sparse](bool resume, std::uint64_t rows) mutable {
    sink.resume = resume;
    sink.rows = rows;
    return sparse ? bulk::make_sparse_sink(sink) : bulk::make_multi_vector_sink(sink);
  };
  job.pool = pool;
  return run_bulk(options.bulk, reader_options(options.bulk), job, scorer);
}

// `warden embed --input FILE --output FILE`: the corpus through the bulk runner.
int run_bulk_embed(const EmbedOptions& options, const embed::Embedder& embedder, const std::string& model,
                   const embed::InputOptions& input, ThreadPool* pool) {
  if (!options.texts.empty()) throw Error(ErrorKind::InvalidArgument, "give texts or --input, not both");
  if (options.output_kind != "dense") return run_bulk_retrieval(options, embedder, model, pool);
  if (!embedder.retrieval_outputs().dense) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{} has no dense vector: use --output-kind {}", model,
                            embedder.retrieval_outputs().multi ? "multi" : "sparse"));
  }
  const bulk::OutputFormat format = options.format.empty() ? bulk::detect_output_format(options.output)
                                                           : *bulk::parse_output_format(options.format);
  BulkJob job;
  job.output = options.output;
  job.binary = format != bulk::OutputFormat::Jsonl;
  job.fingerprint = {{"command", "embed"},
                     {"model", model},
                     {"dim", std::to_string(embedder.dim())},
                     {"prompt", std::string(input.prompt)},
                     {"task", std::string(input.task)},
                     {"dtype", options.dtype},
                     {"format", std::string(bulk::output_format_name(format))}};
  bulk::SinkOptions sink;
  sink.path = job.output.empty() ? std::filesystem::path("-") : std::filesystem::path(job.output);
  sink.format = format;
  sink.dim = embedder.dim();
  sink.model = model;
  job.files = bulk::sink_files(sink);
  job.make_sink = [sink](bool resume, std::uint64_t rows) mutable {
    sink.resume = resume;
    sink.rows = rows;
    return bulk::make_vector_sink(sink);
  };
  job.pool = pool;
  const bulk::EmbedScorer scorer(embedder, input);
  return run_bulk(options.bulk, reader_options(options.bulk), job, scorer);
}

int run_embed(const EmbedOptions& options) {
  if (!options.model.empty() && !options.model_dir.empty()) {
    throw Error(ErrorKind::InvalidArgument, "give --model or --model-dir, not both");
  }
  (void)parse_dtype_flag(options.dtype);  // a bad --dtype is named as the flag's
  ThreadPool pool(options.threads);
  catalog::CatalogOptions catalog_options = command_catalog_options(&pool, options.dtype);
  catalog_options.pooling = options.pooling;
  const catalog::OpenModel opened =
      catalog::open_model(options.model_dir.empty() ? options.model : options.model_dir, catalog_options,
                          ModelKind::Embedding, "embed");
  // The lexical fallback is never silent: say which embedder this is and why.
  if (!opened.fallback_reason.empty()) {
    fmt::print(stderr, "warden: warning: embedding with {} (lexical, semantic = false) because {}\n",
               opened.model.spec.name, opened.fallback_reason);
  }
  const embed::Embedder* embedder = opened.loaded->embedder.get();
  // The prompt as the server picks it: by name, else the model's default; a task of that name too.
  const embed::InputOptions input = serving::input_options(
      *embedder, true, embed::TruncationSide::Right,
      options.prompt_name.empty() ? std::nullopt : std::optional<std::string>(options.prompt_name));
  if (!options.bulk.input.empty())
    return run_bulk_embed(options, *embedder, catalog::model_identity(opened), input, &pool);
  if (options.output_kind != "dense") {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("--output-kind {} needs a bulk job (--input)", options.output_kind));
  }
  if (options.format == "float32" || options.format == "float16") {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("--format {} needs a bulk job (--input)", options.format));
  }
  const std::vector<std::string> texts = options.texts.empty() ? read_stdin_lines() : options.texts;
  const std::vector<std::string_view> views(texts.begin(), texts.end());

  const Embeddings embeddings = embedder->embed(views, input);
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
  CLI::App* app = root.add_subcommand(
      "embed", "Embed texts (arguments, or stdin one per line), or a corpus with --input (docs/bulk.md)");
  app->add_option("--model,-m", options->model,
                  "The embedding model, as `warden serve --model` takes it: a built-in (use-lite, "
                  "hashing-ngram-256), a HuggingFace folder, or a HuggingFace id ORG/NAME[@REVISION] "
                  "(default: use-lite when converted, else hashing-ngram-256)");
  app->add_option("--model-dir", options->model_dir, "A HuggingFace model folder (the same as --model DIR)");
  app->add_option("--threads", options->threads, "Compute threads (default: the CPUs available)");
  app->add_option(
         "--dtype", options->dtype,
         "Precision of the model's dense layers: float32, bfloat16, int8 or auto (docs/precision.md)")
      ->capture_default_str();
  app->add_option("--format,-f", options->format,
                  "Output format: jsonl or npy; a bulk job also float32 or float16 (default: jsonl, or by "
                  "the --output extension in a bulk job)")
      ->check(CLI::IsMember({"jsonl", "npy", "float32", "float16"}));
  app->add_option("--output,-o", options->output, "Write here instead of stdout");
  app->add_option("--pooling", options->pooling,
                  "Pool otherwise than the model folder says: cls, mean, max, lasttoken, or splade (a "
                  "*ForMaskedLM repo without a SpladePooling module as a SPLADE model)")
      ->check(CLI::IsMember({"cls", "mean", "max", "lasttoken", "last-token", "splade"}));
  app->add_option(
         "--output-kind", options->output_kind,
         "A bulk job's output: dense (one vector per record), sparse (JSON lines of indices and "
         "values: bge-m3, SPLADE) or multi (token vectors in a .npy with OUTPUT.offsets.npy: ColBERT, "
         "bge-m3)")
      ->check(CLI::IsMember({"dense", "sparse", "multi"}))
      ->capture_default_str();
  app->add_option("--input-type", options->input_type,
                  "Encode the records as documents or queries (a ColBERT encodes them differently)")
      ->check(CLI::IsMember({"document", "query"}))
      ->capture_default_str();
  app->add_option("--prompt-name,--task", options->prompt_name,
                  "A prompt of the model's by name (config_sentence_transformers.json), prepended to every "
                  "text; a task adapter of that name too (jina-embeddings-v3: retrieval.query, "
                  "retrieval.passage, separation, classification, text-matching). Default: the model's "
                  "default prompt, if any");
  add_bulk_flags(*app, options->bulk);
  app->add_option("texts", options->texts, "Texts to embed; none reads stdin");
  return {app, [options] { return run_embed(*options); }};
}

}  // namespace warden::cli
