#pragma once
// Output sinks of a bulk job (docs/bulk.md): what a record's row of floats becomes on disk.
//   JSON lines   {"id": ..., "embedding": [...]} (or a rerank score per pair, score_writer)
//   .npy         float32 (rows, dim) whose fixed-size header is rewritten at every sync,
//                so the file is always a valid array of the complete rows
//   raw          float32 or float16 little-endian rows with a JSON sidecar OUTPUT.json
// The binary formats keep the ids in OUTPUT.ids.jsonl, one JSON id per line.
// A sink opened to resume appends to files already cut back to a checkpoint's lengths.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulk/record_reader.hpp"
#include "embed/embedder.hpp"

namespace warden::bulk {

enum class OutputFormat { Jsonl, Npy, Float32, Float16 };

std::optional<OutputFormat> parse_output_format(std::string_view name) noexcept;
std::string_view output_format_name(OutputFormat format) noexcept;
// By extension: .jsonl/.ndjson, .npy, .f32/.bin (float32), .f16 (float16); else JSON lines.
OutputFormat detect_output_format(const std::filesystem::path& path);

// IEEE binary16 bits of f, rounded to nearest even (overflow to infinity, subnormals kept).
std::uint16_t float_to_half(float f) noexcept;

// An output file: stdout ("-"), or a path opened to create or to append.
class OutputStream {
 public:
  OutputStream(const std::filesystem::path& path, bool append);
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  ~OutputStream();
  void write(std::string_view bytes);
  // Overwrites bytes at `offset` and returns to the end.
  void write_at(std::uint64_t offset, std::string_view bytes);
  // fflush + fsync (fsync skipped for stdout and pipes); throws Error(Io).
  void sync();
  void close();
  [[nodiscard]] std::uint64_t length() const noexcept { return length_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::string name_;
  std::uint64_t length_ = 0;
};

class Sink {
 public:
  virtual ~Sink() = default;
  // One record's row (the scorer's floats, already final).
  virtual void write(const Record& record, std::span<const float> row) = 0;
  // One record's variable-size outputs (a scorer with variable_outputs()); the row sinks
  // throw Error(Internal).
  virtual void write_outputs(const Record& record, const embed::RetrievalVectors& outputs);
  // Makes everything written so far durable and self-describing (headers, sidecar).
  virtual void sync() = 0;
  // Syncs and closes; throws Error(Io) on failure.
  virtual void finish() = 0;
  // The data files a checkpoint records the lengths of (the sidecar, rewritten whole, is not one).
  [[nodiscard]] virtual std::vector<std::filesystem::path> files() const = 0;
  [[nodiscard]] virtual std::vector<std::uint64_t> lengths() const = 0;
};

// A sink of JSON lines in one file (the JSONL vectors, the rerank scores): it owns the file;
// a subclass's write() builds each line and hands it to write_line().
class JsonLinesSink : public Sink {
 public:
  JsonLinesSink(const std::filesystem::path& path, bool resume) : out_(path, resume) {}
  void sync() override { out_.sync(); }
  void finish() override { out_.close(); }
  [[nodiscard]] std::vector<std::filesystem::path> files() const override { return {out_.name()}; }
  [[nodiscard]] std::vector<std::uint64_t> lengths() const override { return {out_.length()}; }

 protected:
  // Appends `line` and a newline.
  void write_line(std::string line) {
    line.push_back('\n');
    out_.write(line);
  }

 private:
  OutputStream out_;
};

struct SinkOptions {
  std::filesystem::path path;  // "-": stdout (JSON lines only)
  OutputFormat format = OutputFormat::Jsonl;
  std::size_t dim = 0;
  std::string model;       // named in the raw formats' sidecar
  bool resume = false;     // append to files already cut to a checkpoint
  std::uint64_t rows = 0;  // rows already in the files when resuming
};

// Every file a sink of these options writes (data, ids, sidecar), for the overwrite checks.
std::vector<std::filesystem::path> sink_files(const SinkOptions& options);
std::filesystem::path ids_path(const std::filesystem::path& output);
std::filesystem::path sidecar_path(const std::filesystem::path& output);

std::unique_ptr<Sink> make_vector_sink(const SinkOptions& options);

// The .npy header (magic to newline) of a float32 (rows, dim) array, always kNpyHeaderBytes
// long so that it can be rewritten in place as rows are added.
inline constexpr std::size_t kNpyHeaderBytes = 128;
std::string npy_header(std::uint64_t rows, std::size_t dim);
// The same for a one-dimensional int64 array of n values.
std::string npy_header_int64(std::uint64_t n);

}  // namespace warden::bulk
