#include "bulk/record_reader.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/utf8.hpp"

namespace warden::bulk {

namespace {

constexpr std::size_t kReadSize = std::size_t{1} << 16;

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

// A JSON id (string or number) as the JSON text the output carries; nullopt for other types.
std::optional<std::string> id_json(simdjson::dom::element value) {
  switch (value.type()) {
    case simdjson::dom::element_type::STRING: {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
      return json_string(s);
    }
    case simdjson::dom::element_type::INT64: {
      std::int64_t v = 0;
      if (value.get_int64().get(v) != simdjson::SUCCESS) return std::nullopt;
      return std::to_string(v);
    }
    case simdjson::dom::element_type::UINT64: {
      std::uint64_t v = 0;
      if (value.get_uint64().get(v) != simdjson::SUCCESS) return std::nullopt;
      return std::to_string(v);
    }
    case simdjson::dom::element_type::DOUBLE: {
      double v = 0;
      if (value.get_double().get(v) != simdjson::SUCCESS) return std::nullopt;
      JsonWriter w;
      w.value(v);
      return w.take();
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<InputFormat> parse_input_format(std::string_view name) noexcept {
  if (name == "jsonl") return InputFormat::Jsonl;
  if (name == "csv") return InputFormat::Csv;
  if (name == "tsv") return InputFormat::Tsv;
  if (name == "lines") return InputFormat::Lines;
  return std::nullopt;
}

std::string_view input_format_name(InputFormat format) noexcept {
  switch (format) {
    case InputFormat::Jsonl:
      return "jsonl";
    case InputFormat::Csv:
      return "csv";
    case InputFormat::Tsv:
      return "tsv";
    case InputFormat::Lines:
      break;
  }
  return "lines";
}

InputFormat detect_input_format(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".jsonl" || ext == ".ndjson") return InputFormat::Jsonl;
  if (ext == ".csv") return InputFormat::Csv;
  if (ext == ".tsv") return InputFormat::Tsv;
  return InputFormat::Lines;
}

RecordReader::RecordReader(const std::string& path, ReaderOptions options, ReaderPosition start)
    : options_(std::move(options)), name_(path == "-" ? "stdin" : path) {
  if (path == "-") {
    if (start.offset != 0) throw Error(ErrorKind::InvalidArgument, "stdin cannot be resumed");
    file_ = stdin;
  } else {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) {
      throw Error(errno == ENOENT ? ErrorKind::NotFound : ErrorKind::Io,
                  fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    }
    owns_file_ = true;
    struct stat st {};
    if (::fstat(::fileno(file_), &st) == 0 && S_ISREG(st.st_mode))
      size_ = static_cast<std::uint64_t>(st.st_size);
  }
  try {
    open_at(start);
  } catch (...) {
    // No destructor runs for a constructor that throws.
    if (owns_file_) std::fclose(file_);
    throw;
  }
}

RecordReader::RecordReader(std::string_view data, std::string name, ReaderOptions options,
                           ReaderPosition start)
    : options_(std::move(options)), name_(std::move(name)), memory_(true), size_(data.size()) {
  memory_all_ = data;
  data_ = data;
  open_at(start);
}

RecordReader::~RecordReader() {
  if (owns_file_) std::fclose(file_);
}

void RecordReader::open_at(ReaderPosition start) {
  delimiter_ = options_.format == InputFormat::Tsv ? '\t' : ',';
  // The UTF-8 byte order mark is not part of the first record.
  if (peek() == 0xEF && data_.size() >= 3 && data_.substr(0, 3) == "\xEF\xBB\xBF") {
    data_.remove_prefix(3);
    offset_ = 3;
  }
  if (options_.format == InputFormat::Csv || options_.format == InputFormat::Tsv) {
    if (!read_csv_row(header_)) fail(1, "no header row (CSV and TSV inputs need one)");
    auto column = [&](const std::string& name) {
      for (std::size_t i = 0; i < header_.size(); ++i)
        if (header_[i] == name) return static_cast<int>(i);
      return -1;
    };
    text_column_ = column(options_.text_field);
    if (text_column_ < 0) fail(1, fmt::format("the header has no '{}' column", options_.text_field));
    id_column_ = options_.id_field.empty() ? -1 : column(options_.id_field);
    if (id_column_ < 0 && options_.id_required)
      fail(1, fmt::format("the header has no '{}' column", options_.id_field));
    if (!options_.pair_field.empty()) {
      pair_column_ = column(options_.pair_field);
      if (pair_column_ < 0) fail(1, fmt::format("the header has no '{}' column", options_.pair_field));
    }
    if (!options_.pair_id_field.empty()) pair_id_column_ = column(options_.pair_id_field);
  }
  if (start.offset == 0) return;
  if (size_ && start.offset > *size_) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{}: cannot resume at byte {}: the input has only {}",
                                                     name_, start.offset, *size_));
  }
  if (memory_) {
    data_ = memory_all_.substr(start.offset);
  } else {
    if (std::fseek(file_, static_cast<long>(start.offset), SEEK_SET) != 0) {
      throw Error(ErrorKind::Io, fmt::format("cannot seek {}: {}", name_, std::strerror(errno)));
    }
    buffer_.clear();
    data_ = {};
    eof_ = false;
  }
  offset_ = start.offset;
  index_ = start.index;
  line_ = start.line;
}

bool RecordReader::fill() {
  if (memory_ || eof_) return false;
  buffer_.resize(kReadSize);
  const std::size_t n = std::fread(buffer_.data(), 1, buffer_.size(), file_);
  if (n < buffer_.size()) {
    if (std::ferror(file_) != 0) throw Error(ErrorKind::Io, fmt::format("cannot read {}", name_));
    eof_ = true;
  }
  buffer_.resize(n);
  data_ = buffer_;
  return n > 0;
}

int RecordReader::peek() {
  if (data_.empty() && !fill()) return -1;
  return static_cast<unsigned char>(data_.front());
}

int RecordReader::get() {
  if (data_.empty() && !fill()) return -1;
  const auto c = static_cast<unsigned char>(data_.front());
  data_.remove_prefix(1);
  ++offset_;
  return c;
}

void RecordReader::fail(std::uint64_t line, std::string_view problem) const {
  throw Error(ErrorKind::InvalidInput, fmt::format("{}: line {}: {}", name_, line, problem));
}

bool RecordReader::read_line(std::string& line) {
  line.clear();
  if (peek() < 0) return false;
  for (;;) {
    if (data_.empty() && !fill()) break;
    const std::size_t nl = data_.find('\n');
    const std::size_t take = nl == std::string_view::npos ? data_.size() : nl;
    if (line.size() + take > options_.max_record_bytes) {
      fail(line_, fmt::format("the line is longer than {} bytes", options_.max_record_bytes));
    }
    line.append(data_.substr(0, take));
    offset_ += take;
    data_.remove_prefix(take);
    if (nl != std::string_view::npos) {
      data_.remove_prefix(1);
      ++offset_;
      break;
    }
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

// One RFC 4180 row: quoted fields may hold the delimiter, newlines and "" for a quote;
// rows end with LF or CRLF. An empty line is no row. False at the end of the input.
bool RecordReader::read_csv_row(std::vector<std::string>& fields) {
  fields.clear();
  for (;;) {
    const int c = peek();
    if (c < 0) return false;
    if (c == '\n') {
      get();
      ++line_;
      continue;
    }
    if (c == '\r') {
      get();
      if (peek() == '\n') continue;
      fail(line_, "a carriage return outside quotes that does not end the row");
    }
    break;
  }
  const std::uint64_t start_line = row_line_ = line_;
  std::size_t bytes = 0;
  fields.emplace_back();
  for (;;) {
    std::string& field = fields.back();
    int c = get();
    if (c == '"' && field.empty()) {
      // Quoted field.
      for (;;) {
        c = get();
        if (c < 0) fail(start_line, "unterminated quoted field");
        if (c == '\n') ++line_;
        if (c == '"') {
          if (peek() == '"') {
            get();
          } else {
            break;
          }
        }
        if (++bytes > options_.max_record_bytes)
          fail(start_line, fmt::format("the record is longer than {} bytes", options_.max_record_bytes));
        field.push_back(static_cast<char>(c));
      }
      c = get();
      if (c == '\r' && peek() == '\n') c = get();
      if (c != delimiter_ && c != '\n' && c >= 0) {
        fail(line_, "unexpected character after a closing quote");
      }
    } else {
      while (c >= 0 && c != delimiter_ && c != '\n') {
        if (c == '\r' && peek() == '\n') {
          c = get();
          break;
        }
        if (++bytes > options_.max_record_bytes)
          fail(start_line, fmt::format("the record is longer than {} bytes", options_.max_record_bytes));
        field.push_back(static_cast<char>(c));
        c = get();
      }
    }
    if (c == delimiter_) {
      fields.emplace_back();
      continue;
    }
    if (c == '\n') ++line_;
    return true;
  }
}

bool RecordReader::next(Record& out) {
  switch (options_.format) {
    case InputFormat::Jsonl:
      return next_jsonl(out);
    case InputFormat::Csv:
    case InputFormat::Tsv:
      return next_csv(out);
    case InputFormat::Lines:
      break;
  }
  return next_lines(out);
}

bool RecordReader::next_lines(Record& out) {
  const std::uint64_t line = line_;
  if (!read_line(out.text)) return false;
  ++line_;
  utf8::require_valid(out.text, fmt::format("{}: line {}", name_, line));
  out.index = index_++;
  out.line = line;
  out.id = std::to_string(out.index);
  out.pair.clear();
  out.pair_id.clear();
  out.end_offset = offset_;
  out.next_line = line_;
  return true;
}

bool RecordReader::next_csv(Record& out) {
  if (!read_csv_row(fields_)) return false;
  const std::uint64_t start_line = row_line_;
  if (fields_.size() != header_.size()) {
    fail(start_line, fmt::format("{} fields where the header has {}", fields_.size(), header_.size()));
  }
  out.index = index_++;
  out.line = start_line;
  out.text = std::move(fields_[static_cast<std::size_t>(text_column_)]);
  utf8::require_valid(out.text, fmt::format("{}: line {}", name_, start_line));
  if (id_column_ >= 0) {
    const std::string& id = fields_[static_cast<std::size_t>(id_column_)];
    utf8::require_valid(id, fmt::format("{}: line {}: id", name_, start_line));
    out.id = json_string(id);
  } else {
    out.id = std::to_string(out.index);
  }
  out.pair.clear();
  out.pair_id.clear();
  if (pair_column_ >= 0) {
    out.pair = std::move(fields_[static_cast<std::size_t>(pair_column_)]);
    utf8::require_valid(out.pair, fmt::format("{}: line {}", name_, start_line));
  }
  if (pair_id_column_ >= 0) {
    const std::string& id = fields_[static_cast<std::size_t>(pair_id_column_)];
    utf8::require_valid(id, fmt::format("{}: line {}: id", name_, start_line));
    out.pair_id = json_string(id);
  }
  out.end_offset = offset_;
  out.next_line = line_;
  return true;
}

bool RecordReader::next_jsonl(Record& out) {
  std::uint64_t line = 0;
  for (;;) {
    line = line_;
    if (!read_line(scratch_)) return false;
    ++line_;
    if (scratch_.find_first_not_of(" \t\r") != std::string::npos) break;  // blank lines are no records
  }
  if (!json_) json_ = std::make_unique<simdjson::dom::parser>();
  const simdjson::padded_string padded(scratch_);
  simdjson::dom::element doc;
  if (const auto err = json_->parse(padded).get(doc); err != simdjson::SUCCESS) {
    fail(line, fmt::format("invalid JSON ({})", simdjson::error_message(err)));
  }
  simdjson::dom::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) fail(line, "not a JSON object");
  auto text_of = [&](const std::string& key, std::string& dest) {
    simdjson::dom::element value;
    if (object.at_key(key).get(value) != simdjson::SUCCESS) fail(line, fmt::format("no \"{}\" field", key));
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS)
      fail(line, fmt::format("\"{}\" is not a string", key));
    dest.assign(s);
  };
  auto id_of = [&](const std::string& key, bool required, std::string& dest) {
    dest.clear();
    simdjson::dom::element value;
    if (key.empty() || object.at_key(key).get(value) != simdjson::SUCCESS) {
      if (required) fail(line, fmt::format("no \"{}\" field", key));
      return false;
    }
    std::optional<std::string> id = id_json(value);
    if (!id) fail(line, fmt::format("\"{}\" is neither a string nor a number", key));
    dest = std::move(*id);
    return true;
  };
  text_of(options_.text_field, out.text);
  out.index = index_++;
  out.line = line;
  if (!id_of(options_.id_field, options_.id_required, out.id)) out.id = std::to_string(out.index);
  out.pair.clear();
  if (!options_.pair_field.empty()) text_of(options_.pair_field, out.pair);
  id_of(options_.pair_id_field, false, out.pair_id);
  out.end_offset = offset_;
  out.next_line = line_;
  return true;
}

}  // namespace warden::bulk
