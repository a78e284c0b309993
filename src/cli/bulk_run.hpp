#pragma once
// What `warden embed --input` and `warden rerank` share (docs/bulk.md): the bulk flags,
// the start/resume/overwrite rules, SIGINT/SIGTERM handling and the run itself.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bulk/checkpoint.hpp"
#include "bulk/job.hpp"
#include "bulk/record_reader.hpp"
#include "bulk/vector_writer.hpp"

namespace warden::cli {

struct BulkFlags {
  std::string input;  // "" : not a bulk run
  std::string input_format;
  std::string text_field = "text";
  std::string id_field;  // "": "id" when present
  std::size_t batch_size = 32;
  bool resume = false;
  bool overwrite = false;
  std::string progress = "auto";
  double progress_interval = 10.0;
};

// --input, --input-format, --text-field, --id-field, --batch-size, --resume, --overwrite,
// --progress, --progress-interval.
void add_bulk_flags(CLI::App& app, BulkFlags& flags);

// The reader options the flags ask for (format from the flag or the input's extension).
bulk::ReaderOptions reader_options(const BulkFlags& flags);

struct BulkJob {
  std::string output;                        // a file, or "" / "-" for stdout (JSON lines, not resumable)
  bool binary = false;                       // the output format needs a file
  bulk::Fingerprint fingerprint;             // the command's part (model, format, ...)
  std::vector<std::filesystem::path> files;  // every file the sink writes
  // Creates the sink: fresh, or to resume with `rows` records already written.
  std::function<std::unique_ptr<bulk::Sink>(bool resume, std::uint64_t rows)> make_sink;
  ThreadPool* pool = nullptr;  // the model's pool, lent to tokenization between forward passes
};

// Runs the job; returns the exit code (0, or 130 when interrupted by SIGINT/SIGTERM).
int run_bulk(const BulkFlags& flags, const bulk::ReaderOptions& reader, const BulkJob& job,
             const bulk::Scorer& scorer);

}  // namespace warden::cli
