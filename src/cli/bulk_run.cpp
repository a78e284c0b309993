#include "cli/bulk_run.hpp"

#include <atomic>
#include <csignal>
#include <optional>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "core/error.hpp"

namespace warden::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int /*signal*/) {
  g_stop.store(true);
}

// Installs the SIGINT/SIGTERM handler for its lifetime; a second signal kills as usual.
class StopSignals {
 public:
  StopSignals() {
    g_stop.store(false);
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_RESTART;  // reads resume; the job checks the flag
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace

void add_bulk_flags(CLI::App& app, BulkFlags& flags) {
  app.add_option("--input,-i", flags.input,
                 "Bulk job: read records from this file ('-': stdin) (docs/bulk.md)");
  app.add_option("--input-format", flags.input_format, "jsonl, csv, tsv or lines (default: by extension)")
      ->check(CLI::IsMember({"jsonl", "csv", "tsv", "lines"}));
  app.add_option("--text-field", flags.text_field, "JSONL key / CSV column of the text")
      ->capture_default_str();
  app.add_option("--id-field", flags.id_field,
                 "JSONL key / CSV column of the id (default: 'id' when present)");
  app.add_option("--batch-size", flags.batch_size, "Inputs per forward pass")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  auto* resume = app.add_flag("--resume", flags.resume, "Continue an interrupted job from its checkpoint");
  app.add_flag("--overwrite", flags.overwrite, "Replace an existing output (or unfinished job)")
      ->excludes(resume);
  app.add_option("--progress", flags.progress, "auto (a bar on a terminal, else lines), bar, lines or none")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  app.add_option("--progress-interval", flags.progress_interval, "Seconds between progress lines")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

bulk::ReaderOptions reader_options(const BulkFlags& flags) {
  bulk::ReaderOptions r;
  r.format = flags.input_format.empty() ? bulk::detect_input_format(flags.input)
                                        : *bulk::parse_input_format(flags.input_format);
  r.text_field = flags.text_field;
  r.id_field = flags.id_field.empty() ? "id" : flags.id_field;
  r.id_required = !flags.id_field.empty();
  return r;
}

int run_bulk(const BulkFlags& flags, const bulk::ReaderOptions& reader_opts, const BulkJob& job,
             const bulk::Scorer& scorer) {
  const bool to_stdout = job.output.empty() || job.output == "-";
  if (to_stdout && (job.binary || flags.resume)) {
    throw Error(ErrorKind::InvalidArgument,
                "this bulk job needs --output FILE (binary formats and --resume cannot use stdout)");
  }
  const bool from_stdin = flags.input == "-";
  if (from_stdin && flags.resume) throw Error(ErrorKind::InvalidArgument, "--resume cannot read stdin");

  // From before the outputs are touched: a signal from now on stops the job cleanly.
  const StopSignals signals;
  std::optional<bulk::Checkpointing> checkpointing;
  std::optional<bulk::Checkpoint> resumed;
  if (!to_stdout) {
    bulk::Fingerprint fingerprint = job.fingerprint;
    if (!from_stdin) bulk::add_input_identity(fingerprint, flags.input);
    fingerprint.emplace_back("input_format", bulk::input_format_name(reader_opts.format));
    fingerprint.emplace_back("text_field", reader_opts.text_field);
    fingerprint.emplace_back("id_field", flags.id_field);
    fingerprint.emplace_back("output", std::filesystem::absolute(job.output).lexically_normal().string());
    const auto state = bulk::progress_path(job.output);
    resumed = bulk::start_job(state, job.files, fingerprint, flags.resume, flags.overwrite);
    // Reading from stdin cannot resume, so no state file is kept for it.
    if (!from_stdin) checkpointing = bulk::Checkpointing{state, std::move(fingerprint)};
  }

  bulk::ReaderPosition start;
  std::uint64_t records = 0;
  if (resumed) {
    start = resumed->input;
    records = resumed->records;
  }
  bulk::RecordReader reader(flags.input, reader_opts, start);
  std::unique_ptr<bulk::Sink> sink = job.make_sink(resumed.has_value(), records);
  bulk::Progress progress(*bulk::parse_progress_mode(flags.progress), reader.size(), flags.progress_interval,
                          records, start.offset);
  if (resumed) fmt::print(stderr, "warden: resuming after {} records\n", records);

  bulk::JobOptions options;
  options.batch_size = flags.batch_size;
  options.stop = &g_stop;
  options.pool = job.pool;
  const bulk::JobResult result =
      bulk::run_job(reader, scorer, *sink, options, checkpointing, &progress, records);
  if (result.interrupted) {
    fmt::print(stderr, "warden: interrupted after {} records{}\n", result.records,
               checkpointing ? "; rerun with --resume to continue" : "");
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace warden::cli
