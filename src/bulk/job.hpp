#pragma once
// The bulk job runner (docs/bulk.md): streams records from a reader through a Scorer into a
// Sink in bounded memory. It reads a chunk of records, prepares (tokenizes) them, sorts the
// chunk's model inputs by token count and cuts batches of similar length (less padding),
// computes, puts the rows back in input order, writes them and checkpoints: after every
// chunk, at least every few seconds, and when asked to stop (then after the current batch).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "bulk/checkpoint.hpp"
#include "bulk/progress.hpp"
#include "bulk/record_reader.hpp"
#include "bulk/vector_writer.hpp"
#include "embed/embedder.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::bulk {

// What a job computes: each record becomes units_per_record() model inputs, each giving
// unit_width() floats; finish() turns a record's raw floats into its final row.
class Scorer {
 public:
  virtual ~Scorer() = default;
  [[nodiscard]] virtual std::size_t units_per_record() const noexcept = 0;
  [[nodiscard]] virtual std::size_t unit_width() const noexcept = 0;
  // Thread-safe. Throws Error(InvalidInput) for a record the model cannot take.
  virtual void prepare(const Record& record, std::span<embed::PreparedInput> out) const = 0;
  // inputs.size() x unit_width() raw floats; a row never depends on its batch-mates.
  virtual void compute(std::span<const embed::PreparedInput* const> inputs, std::span<float> out) const = 0;
  // In place, on units_per_record() x unit_width() floats.
  virtual void finish(std::span<float> row) const = 0;
  // A scorer whose outputs vary in size per record (sparse vectors, token vectors) says so and
  // gives them through compute_outputs (one model input per record; units_per_record() 1)
  // instead of compute and finish; its sink takes them through Sink::write_outputs.
  [[nodiscard]] virtual bool variable_outputs() const noexcept { return false; }
  [[nodiscard]] virtual std::vector<embed::RetrievalVectors> compute_outputs(
      std::span<const embed::PreparedInput* const> inputs) const;
};

struct JobOptions {
  std::size_t batch_size = 32;     // model inputs per forward pass
  std::size_t chunk_units = 2048;  // model inputs read, sorted and held at a time
  double checkpoint_seconds = 5.0;
  const std::atomic<bool>* stop = nullptr;  // set (by a signal handler): stop after this batch
  std::function<double()> clock;            // monotonic seconds; default steady_clock
  ThreadPool* pool = nullptr;               // prepares (tokenizes) a chunk's records in parallel
};

// Where and what to checkpoint; absent for outputs that cannot be resumed (stdout).
struct Checkpointing {
  std::filesystem::path state;  // OUTPUT.progress.json
  Fingerprint fingerprint;
};

struct JobResult {
  std::uint64_t records = 0;  // in the outputs, earlier runs included
  bool interrupted = false;
};

// Runs until the reader is exhausted or options.stop is set. `records_before`: records
// already in the sink (a resumed job). On success the sink is finished and the state file
// removed. Errors propagate (Error naming the input, line and problem); the last
// checkpoint stays valid.
JobResult run_job(RecordReader& reader, const Scorer& scorer, Sink& sink, const JobOptions& options,
                  const std::optional<Checkpointing>& checkpointing, Progress* progress,
                  std::uint64_t records_before = 0);

}  // namespace warden::bulk
