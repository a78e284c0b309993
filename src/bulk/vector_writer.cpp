#include "bulk/vector_writer.hpp"

#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/json_writer.hpp"

namespace warden::bulk {

std::optional<OutputFormat> parse_output_format(std::string_view name) noexcept {
  if (name == "jsonl") return OutputFormat::Jsonl;
  if (name == "npy") return OutputFormat::Npy;
  if (name == "float32") return OutputFormat::Float32;
  if (name == "float16") return OutputFormat::Float16;
  return std::nullopt;
}

std::string_view output_format_name(OutputFormat format) noexcept {
  switch (format) {
    case OutputFormat::Npy:
      return "npy";
    case OutputFormat::Float32:
      return "float32";
    case OutputFormat::Float16:
      return "float16";
    case OutputFormat::Jsonl:
      break;
  }
  return "jsonl";
}

OutputFormat detect_output_format(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".npy") return OutputFormat::Npy;
  if (ext == ".f32" || ext == ".bin") return OutputFormat::Float32;
  if (ext == ".f16") return OutputFormat::Float16;
  return OutputFormat::Jsonl;
}

std::uint16_t float_to_half(float f) noexcept {
  const auto x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000U);
  const std::uint32_t exponent = (x >> 23) & 0xFFU;
  std::uint32_t mantissa = x & 0x7FFFFFU;
  if (exponent == 0xFFU) {  // infinity, or NaN (kept quiet and non-zero)
    return static_cast<std::uint16_t>(sign | 0x7C00U | (mantissa != 0 ? 0x200U | (mantissa >> 13) : 0U));
  }
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7C00U);
  if (e <= 0) {
    // A half subnormal (or zero): the value is m * 2^-24 with m = full mantissa >> (14 - e).
    if (e < -10) return sign;
    mantissa |= 0x800000U;
    const auto shift = static_cast<std::uint32_t>(14 - e);
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1U << shift) - 1U);
    const std::uint32_t halfway = 1U << (shift - 1U);
    if (rest > halfway || (rest == halfway && (half & 1U) != 0)) ++half;  // may carry into the exponent
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1FFFU;
  if (rest > 0x1000U || (rest == 0x1000U && (h & 1U) != 0)) ++h;  // a carry may reach infinity: right
  return static_cast<std::uint16_t>(sign | h);
}

OutputStream::OutputStream(const std::filesystem::path& path, bool append) {
  if (path == "-") {
    file_ = stdout;
    name_ = "stdout";
    return;
  }
  name_ = path.string();
  file_ = std::fopen(name_.c_str(), append ? "r+b" : "wb");
  if (file_ == nullptr) {
    throw Error(ErrorKind::Io,
                fmt::format("cannot {} {}: {}", append ? "open" : "create", name_, std::strerror(errno)));
  }
  owned_ = true;
  if (append) {
    if (std::fseek(file_, 0, SEEK_END) != 0) {
      const int error = errno;
      std::fclose(file_);  // no destructor runs for a constructor that throws
      throw Error(ErrorKind::Io, fmt::format("cannot seek {}: {}", name_, std::strerror(error)));
    }
    length_ = static_cast<std::uint64_t>(std::ftell(file_));
  }
}

OutputStream::~OutputStream() {
  if (owned_ && file_ != nullptr) std::fclose(file_);
}

void OutputStream::write(std::string_view bytes) {
  if (bytes.empty()) return;  // (an empty view may have no data pointer for fwrite)
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", name_, std::strerror(errno)));
  }
  length_ += bytes.size();
}

void OutputStream::write_at(std::uint64_t offset, std::string_view bytes) {
  if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size() ||
      std::fseek(file_, 0, SEEK_END) != 0) {
    throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", name_, std::strerror(errno)));
  }
}

void OutputStream::sync() {
  if (std::fflush(file_) != 0 || std::ferror(file_) != 0) {
    throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", name_, std::strerror(errno)));
  }
  if (owned_ && ::fsync(::fileno(file_)) != 0) {
    throw Error(ErrorKind::Io, fmt::format("cannot sync {}: {}", name_, std::strerror(errno)));
  }
}

void OutputStream::close() {
  sync();
  if (owned_) {
    const bool failed = std::fclose(file_) != 0;
    file_ = nullptr;
    owned_ = false;
    if (failed) throw Error(ErrorKind::Io, fmt::format("cannot close {}", name_));
  }
}

std::filesystem::path ids_path(const std::filesystem::path& output) {
  auto p = output;
  p += ".ids.jsonl";
  return p;
}

std::filesystem::path sidecar_path(const std::filesystem::path& output) {
  auto p = output;
  p += ".json";
  return p;
}

std::vector<std::filesystem::path> sink_files(const SinkOptions& options) {
  switch (options.format) {
    case OutputFormat::Jsonl:
      return {options.path};
    case OutputFormat::Npy:
      return {options.path, ids_path(options.path)};
    case OutputFormat::Float32:
    case OutputFormat::Float16:
      break;
  }
  return {options.path, ids_path(options.path), sidecar_path(options.path)};
}

namespace {

// Magic, version 1.0, then the header's length (little-endian) and the header itself,
// padded with spaces and ended by a newline to kNpyHeaderBytes in all.
std::string npy_header_of(std::string_view descr, std::string_view shape) {
  std::string header("\x93NUMPY\x01\x00\x00\x00", 10);
  header += fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  header.resize(kNpyHeaderBytes - 1, ' ');
  header.push_back('\n');
  const std::size_t len = kNpyHeaderBytes - 10;
  header[8] = static_cast<char>(len & 0xFFU);
  header[9] = static_cast<char>((len >> 8) & 0xFFU);
  return header;
}

}  // namespace

std::string npy_header(std::uint64_t rows, std::size_t dim) {
  return npy_header_of("<f4", fmt::format("({}, {})", rows, dim));
}

std::string npy_header_int64(std::uint64_t n) {
  return npy_header_of("<i8", fmt::format("({},)", n));
}

void Sink::write_outputs(const Record&, const embed::RetrievalVectors&) {
  throw Error(ErrorKind::Internal, "this output takes rows of floats, not retrieval outputs");
}

namespace {

void append_raw(std::string& out, const void* data, std::size_t bytes) {
  out.append(static_cast<const char*>(data), bytes);
}

class JsonlSink final : public JsonLinesSink {
 public:
  explicit JsonlSink(const SinkOptions& options) : JsonLinesSink(options.path, options.resume) {}
  void write(const Record& record, std::span<const float> row) override {
    JsonWriter json;
    json.begin_object().key("id").raw(record.id).key("embedding").begin_array();
    for (const float v : row) json.value(v);
    json.end_array().end_object();
    write_line(json.take());
  }
};

// The binary formats: rows of float32 (.npy, raw) or float16 (raw), and the ids file.
class BinarySink final : public Sink {
 public:
  explicit BinarySink(const SinkOptions& options)
      : options_(options),
        data_(options.path, options.resume),
        ids_(ids_path(options.path), options.resume),
        rows_(options.rows) {
    if (options.path == "-")
      throw Error(ErrorKind::InvalidArgument, "binary output needs a file, not stdout");
    if (options_.format == OutputFormat::Npy && !options.resume) data_.write(npy_header(0, options_.dim));
    if (options_.format != OutputFormat::Npy) write_sidecar();
  }
  void write(const Record& record, std::span<const float> row) override {
    buffer_.clear();
    if (options_.format == OutputFormat::Float16) {
      for (const float v : row) {
        const std::uint16_t h = float_to_half(v);
        const char bytes[2] = {static_cast<char>(h & 0xFFU), static_cast<char>(h >> 8)};
        buffer_.append(bytes, 2);
      }
    } else {
      // x86-64 and AArch64 Linux are little-endian, which '<f4' and the sidecar promise.
      append_raw(buffer_, row.data(), row.size_bytes());
    }
    data_.write(buffer_);
    buffer_ = record.id;
    buffer_.push_back('\n');
    ids_.write(buffer_);
    ++rows_;
  }
  void sync() override {
    if (options_.format == OutputFormat::Npy) data_.write_at(0, npy_header(rows_, options_.dim));
    data_.sync();
    ids_.sync();
    if (options_.format != OutputFormat::Npy) write_sidecar();
  }
  void finish() override {
    sync();
    data_.close();
    ids_.close();
  }
  [[nodiscard]] std::vector<std::filesystem::path> files() const override {
    return {data_.name(), ids_.name()};
  }
  [[nodiscard]] std::vector<std::uint64_t> lengths() const override {
    return {data_.length(), ids_.length()};
  }

 private:
  void write_sidecar() {
    JsonWriter json(JsonWriter::Options{.indent = 2});
    json.begin_object()
        .key("dtype")
        .value(output_format_name(options_.format))
        .key("dim")
        .value(static_cast<std::uint64_t>(options_.dim))
        .key("rows")
        .value(rows_)
        .key("byte_order")
        .value("little")
        .key("model")
        .value(options_.model)
        .key("ids")
        .value(ids_path(options_.path).filename().string())
        .end_object();
    std::string text = json.take();
    text.push_back('\n');
    write_file_atomic(sidecar_path(options_.path), text);
  }

  SinkOptions options_;
  OutputStream data_;
  OutputStream ids_;
  std::uint64_t rows_ = 0;
  std::string buffer_;
};

}  // namespace

std::unique_ptr<Sink> make_vector_sink(const SinkOptions& options) {
  if (options.format == OutputFormat::Jsonl) return std::make_unique<JsonlSink>(options);
  return std::make_unique<BinarySink>(options);
}

}  // namespace warden::bulk
