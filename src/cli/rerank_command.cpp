// `warden rerank`: a cross-encoder's relevance scores over a whole corpus (docs/bulk.md),
// for (query, passage) pairs in the input, one --query against every passage, or every
// query of a --queries file against every passage. A bulk job: streaming and resumable.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bulk/record_reader.hpp"
#include "bulk/score_writer.hpp"
#include "bulk/scorers.hpp"
#include "catalog/open_model.hpp"
#include "classify/sequence_classifier.hpp"
#include "cli/bulk_run.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"

namespace warden::cli {

namespace {

constexpr std::size_t kMaxQueries = 10000;

struct RerankOptions {
  std::string model;
  std::string model_dir;
  std::string dtype = "float32";
  std::size_t threads = 0;
  std::string output;
  std::string query;
  std::string queries;
  std::string query_field = "query";
  std::string instruction;
  std::string rerank_template;  // a causal LM's reranker template (name or .json)
  bool raw_scores = false;
  BulkFlags bulk;
};

struct Queries {
  std::vector<std::string> texts;
  std::vector<std::string> ids;  // as JSON
};

// The --queries file, whole: JSONL ("text", "id"), CSV/TSV (same columns) or lines.
Queries read_queries(const std::string& path) {
  bulk::ReaderOptions options;
  options.format = bulk::detect_input_format(path);
  bulk::RecordReader reader(path, options);
  Queries q;
  bulk::Record r;
  while (reader.next(r)) {
    if (q.texts.size() == kMaxQueries) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{}: more than {} queries; split the job", path, kMaxQueries));
    }
    q.texts.push_back(std::move(r.text));
    q.ids.push_back(std::move(r.id));
  }
  if (q.texts.empty()) throw Error(ErrorKind::InvalidArgument, fmt::format("{}: no queries", path));
  return q;
}

int run_rerank(const RerankOptions& options) {
  if (options.bulk.input.empty()) throw Error(ErrorKind::InvalidArgument, "--input is required");
  if (!options.query.empty() && !options.queries.empty()) {
    throw Error(ErrorKind::InvalidArgument, "give --query or --queries, not both");
  }
  if (options.model.empty() == options.model_dir.empty()) {
    throw Error(ErrorKind::InvalidArgument, "give --model or --model-dir (one of them)");
  }
  (void)parse_dtype_flag(options.dtype);  // a bad --dtype is named as the flag's
  bulk::ReaderOptions reader = reader_options(options.bulk);
  BulkJob job;
  job.output = options.output;
  // The model's identity is filled in once it is opened (after the cheap checks below).
  job.fingerprint = {{"command", "rerank"},
                     {"model", ""},
                     {"dtype", options.dtype},
                     {"raw_scores", options.raw_scores ? "true" : "false"}};
  if (!options.instruction.empty()) job.fingerprint.emplace_back("instruction", options.instruction);
  if (!options.rerank_template.empty())
    job.fingerprint.emplace_back("rerank_template", options.rerank_template);
  Queries queries;
  bulk::ScoreSinkOptions sink;
  if (!options.queries.empty()) {
    queries = read_queries(options.queries);
    job.fingerprint.emplace_back("mode", "queries");
    bulk::add_input_identity(job.fingerprint, options.queries);
    // The queries file's identity, under names of their own.
    for (std::size_t i = job.fingerprint.size() - 3; i < job.fingerprint.size(); ++i)
      job.fingerprint[i].first = "queries_" + job.fingerprint[i].first;
    sink.query_ids = queries.ids;
  } else if (!options.query.empty()) {
    queries.texts.push_back(options.query);
    job.fingerprint.emplace_back("mode", "query");
    job.fingerprint.emplace_back("query", options.query);
    sink.query_ids = {""};
  } else {
    reader.pair_field = options.query_field;
    reader.pair_id_field = "query_id";
    job.fingerprint.emplace_back("mode", "pairs");
    job.fingerprint.emplace_back("query_field", options.query_field);
  }

  if (!options.output.empty() && bulk::detect_output_format(options.output) != bulk::OutputFormat::Jsonl) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("--output {}: rerank writes JSON lines (.jsonl)", options.output));
  }
  ThreadPool pool(options.threads);
  catalog::CatalogOptions catalog_options = command_catalog_options(&pool, options.dtype);
  catalog_options.rerank_template = options.rerank_template;
  const catalog::OpenModel opened =
      catalog::open_model(options.model_dir.empty() ? options.model : options.model_dir, catalog_options,
                          ModelKind::Reranker, "rerank");
  const classify::SequenceClassifier& classifier = *opened.loaded->classifier;
  job.fingerprint[1].second = catalog::model_identity(opened);
  const bulk::RerankScorer scorer(classifier, queries.texts, options.raw_scores, options.instruction);

  sink.path = job.output.empty() ? std::filesystem::path("-") : std::filesystem::path(job.output);
  job.files = {sink.path};
  job.pool = &pool;
  job.make_sink = [sink](bool resume, std::uint64_t /*rows*/) mutable {
    sink.resume = resume;
    return bulk::make_score_sink(sink);
  };
  return run_bulk(options.bulk, reader, job, scorer);
}

}  // namespace

Command add_rerank_command(CLI::App& root) {
  auto options = std::make_shared<RerankOptions>();
  CLI::App* app =
      root.add_subcommand("rerank", "Score (query, passage) pairs of a corpus with a cross-encoder");
  app->add_option(
      "--model,-m", options->model,
      "The cross-encoder, as `warden serve --model` takes it: a *ForSequenceClassification folder "
      "(one label) or a HuggingFace id ORG/NAME[@REVISION]");
  app->add_option("--model-dir", options->model_dir,
                  "A *ForSequenceClassification folder (the same as --model DIR)");
  app->add_option("--dtype", options->dtype, "float32, bfloat16, int8 or auto (docs/precision.md)")
      ->capture_default_str();
  app->add_option("--threads", options->threads, "Compute threads (default: the CPUs available)");
  app->add_option("--output,-o", options->output, "JSON lines output (default: stdout, not resumable)");
  app->add_option("--query", options->query, "Score this query against every record");
  app->add_option("--instruction", options->instruction,
                  "An LLM reranker's task instruction (Qwen3-Reranker, mxbai-rerank-v2; default: its "
                  "template's)");
  app->add_option("--rerank-template", options->rerank_template,
                  "Score a causal LM's folder (no Pooling module) as an LLM reranker with this template: "
                  "qwen3-reranker, mxbai-rerank-v2, bge-reranker-v2-gemma, or a .json file "
                  "(docs/model-files.md); default: the family's own (Qwen3, Gemma)");
  app->add_option("--queries", options->queries,
                  "Score every query of this file (JSONL/CSV/TSV with text and id, or lines; at most 10000) "
                  "against every record");
  app->add_option("--query-field", options->query_field, "Pairs mode: the field holding each record's query")
      ->capture_default_str();
  app->add_flag("--raw-scores", options->raw_scores, "Report logits instead of sigmoid scores");
  add_bulk_flags(*app, options->bulk);
  return {app, [options] { return run_rerank(*options); }};
}

}  // namespace warden::cli
