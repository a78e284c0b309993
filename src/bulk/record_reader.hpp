#pragma once
// Streaming reader of a bulk job's input records (docs/bulk.md): JSON lines, CSV, TSV or
// plain lines, read in bounded memory, one record at a time. Each record knows its index
// and the input byte offset just after it, so a job can resume from a checkpoint.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simdjson::dom {
class parser;
}

namespace warden::bulk {

enum class InputFormat { Jsonl, Csv, Tsv, Lines };

// "jsonl", "csv", "tsv", "lines"; nullopt for anything else.
std::optional<InputFormat> parse_input_format(std::string_view name) noexcept;
std::string_view input_format_name(InputFormat format) noexcept;
// By extension: .jsonl/.ndjson, .csv, .tsv, else plain lines.
InputFormat detect_input_format(const std::filesystem::path& path);

struct ReaderOptions {
  InputFormat format = InputFormat::Lines;
  std::string text_field = "text";  // JSONL key / CSV column of the text
  std::string id_field = "id";      // used when present; the record index otherwise
  bool id_required = false;         // true: a record without id_field is an error
  std::string pair_field;           // a second required text (rerank's query); "" for none
  std::string pair_id_field;        // the second text's optional id (rerank's query_id)
  std::size_t max_record_bytes = std::size_t{16} << 20;
};

struct Record {
  std::uint64_t index = 0;  // 0-based record number in the input
  std::uint64_t line = 0;   // 1-based input line where the record starts
  std::string id;           // the id as JSON: a string literal or a number
  std::string text;
  std::string pair;              // pair_field's text ("" without one)
  std::string pair_id;           // pair_id_field's value as JSON; "" when absent
  std::uint64_t end_offset = 0;  // input byte offset just after the record
  std::uint64_t next_line = 0;   // the line after the record
};

// Where to start reading: the beginning, or a checkpoint's position.
struct ReaderPosition {
  std::uint64_t offset = 0;  // byte offset of the next record (0: the start, header and BOM)
  std::uint64_t index = 0;   // its record index
  std::uint64_t line = 1;    // its 1-based line number
};

class RecordReader {
 public:
  // `path` "-" reads stdin (which cannot seek: `start` must be the beginning). Throws
  // Error(NotFound/Io) for a file that cannot be opened, Error(InvalidInput) for a bad
  // CSV/TSV header.
  RecordReader(const std::string& path, ReaderOptions options, ReaderPosition start = {});
  // Reads from memory (tests, fuzzing); `name` is what errors call it.
  RecordReader(std::string_view data, std::string name, ReaderOptions options, ReaderPosition start = {});
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;
  ~RecordReader();

  // The next record into `out`; false at the end. Throws Error(InvalidInput) naming the
  // file, the line and the problem for malformed input, and Error(Io) for read errors.
  bool next(Record& out);

  // Size of the input in bytes when known (a regular file), for progress.
  [[nodiscard]] std::optional<std::uint64_t> size() const noexcept { return size_; }
  // Where the next record starts.
  [[nodiscard]] ReaderPosition position() const noexcept { return {offset_, index_, line_}; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  int get();   // next byte, -1 at the end
  int peek();  // the same without consuming it
  bool fill();
  void open_at(ReaderPosition start);
  [[noreturn]] void fail(std::uint64_t line, std::string_view problem) const;
  bool read_line(std::string& line);
  bool read_csv_row(std::vector<std::string>& fields);
  bool next_jsonl(Record& out);
  bool next_csv(Record& out);
  bool next_lines(Record& out);

  ReaderOptions options_;
  std::string name_;
  std::FILE* file_ = nullptr;
  bool owns_file_ = false;
  std::string buffer_;
  std::string_view data_;  // unread part of buffer_ (or of the caller's memory)
  bool memory_ = false;
  bool eof_ = false;
  std::optional<std::uint64_t> size_;
  std::uint64_t offset_ = 0;
  std::uint64_t index_ = 0;
  std::uint64_t line_ = 1;
  std::string_view memory_all_;
  char delimiter_ = ',';
  std::vector<std::string> header_;
  std::vector<std::string> fields_;
  std::string scratch_;
  std::uint64_t row_line_ = 0;  // where the last CSV row started
  std::unique_ptr<simdjson::dom::parser> json_;
  int text_column_ = -1, id_column_ = -1, pair_column_ = -1, pair_id_column_ = -1;
};

}  // namespace warden::bulk
