#pragma once
// The resume state of a bulk job, OUTPUT.progress.json (docs/bulk.md). It is written
// atomically (temporary file, fsync, rename) and only after the data it describes was
// flushed and fsynced, so after any crash it describes a prefix of what is on disk: a
// resumed job cuts each output file back to the recorded length and carries on from the
// recorded input offset.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bulk/record_reader.hpp"

namespace warden::bulk {

// What makes two runs the same job: (name, value) pairs, compared in full on --resume.
using Fingerprint = std::vector<std::pair<std::string, std::string>>;

// The input file's identity for a fingerprint: its absolute path, size and mtime.
void add_input_identity(Fingerprint& fingerprint, const std::filesystem::path& input);

struct Checkpoint {
  Fingerprint fingerprint;
  std::uint64_t records = 0;                                           // complete records in the outputs
  ReaderPosition input;                                                // where the next record starts
  std::vector<std::pair<std::filesystem::path, std::uint64_t>> files;  // output file, its length
};

std::filesystem::path progress_path(const std::filesystem::path& output);

// Atomic and durable (see above); throws Error(Io).
void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
// nullopt when there is no file; Error(CorruptFile) when it cannot be read back.
std::optional<Checkpoint> load_checkpoint(const std::filesystem::path& path);

// Throws Error(InvalidArgument) naming the first difference when `saved` is another job.
void require_same_job(const Fingerprint& saved, const Fingerprint& now, const std::filesystem::path& state);

// Cuts each file back to its recorded length (dropping whatever was written after the
// checkpoint, e.g. before a kill -9). Error(CorruptFile) when a file is missing or shorter.
void truncate_to_checkpoint(const Checkpoint& checkpoint);

}  // namespace warden::bulk

namespace warden::bulk {

// How a job with these outputs starts (docs/bulk.md), checking the files already there:
//   a state file:   --resume loads it (the same job, else Error(InvalidArgument)), cuts the
//                   outputs back to it and returns it; --overwrite starts again; otherwise
//                   Error(InvalidArgument) "unfinished job; pass --resume or --overwrite";
//   outputs only:   a finished job or not ours: Error(InvalidArgument) unless --overwrite;
//   nothing:        a fresh start (also with --resume).
// nullopt means start fresh (the caller creates the outputs anew).
std::optional<Checkpoint> start_job(const std::filesystem::path& state,
                                    const std::vector<std::filesystem::path>& outputs,
                                    const Fingerprint& fingerprint, bool resume, bool overwrite);

}  // namespace warden::bulk
