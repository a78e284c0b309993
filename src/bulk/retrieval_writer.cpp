#include "bulk/retrieval_writer.hpp"

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"

namespace warden::bulk {

namespace {

class SparseSink final : public JsonLinesSink {
 public:
  explicit SparseSink(const SinkOptions& options) : JsonLinesSink(options.path, options.resume) {}
  void write(const Record&, std::span<const float>) override {
    throw Error(ErrorKind::Internal, "a sparse output takes sparse vectors, not rows");
  }
  void write_outputs(const Record& record, const embed::RetrievalVectors& outputs) override {
    JsonWriter json;
    json.begin_object().key("id").raw(record.id).key("indices").begin_array();
    for (const std::uint32_t i : outputs.sparse.indices) json.value(std::uint64_t{i});
    json.end_array().key("values").begin_array();
    for (const float v : outputs.sparse.values) json.value(v);
    json.end_array().end_object();
    write_line(json.take());
  }
};

// Whole items past the header of a file cut to a checkpoint (`item` bytes each).
std::uint64_t items_after_header(const OutputStream& file, std::size_t item) {
  const std::uint64_t length = file.length();
  if (length < kNpyHeaderBytes || (length - kNpyHeaderBytes) % item != 0) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: {} bytes is not a .npy header and whole items of {} bytes", file.name(),
                            length, item));
  }
  return (length - kNpyHeaderBytes) / item;
}

class MultiVectorSink final : public Sink {
 public:
  explicit MultiVectorSink(const SinkOptions& options)
      : dim_(options.dim),
        data_(options.path, options.resume),
        offsets_(offsets_path(options.path), options.resume),
        ids_(ids_path(options.path), options.resume) {
    if (options.path == "-")
      throw Error(ErrorKind::InvalidArgument, "multi-vector output needs a file, not stdout");
    if (dim_ == 0) throw Error(ErrorKind::Internal, "multi-vector output of width 0");
    if (options.resume) {
      rows_ = items_after_header(data_, dim_ * sizeof(float));
      offset_count_ = items_after_header(offsets_, sizeof(std::int64_t));
      if (offset_count_ != options.rows + 1) {
        throw Error(ErrorKind::CorruptFile, fmt::format("{}: {} offsets for {} records", offsets_.name(),
                                                        offset_count_, options.rows));
      }
      return;
    }
    data_.write(npy_header(0, dim_));
    offsets_.write(npy_header_int64(0));
    append_offset();  // offsets[0] = 0
  }
  void write(const Record&, std::span<const float>) override {
    throw Error(ErrorKind::Internal, "a multi-vector output takes token vectors, not rows");
  }
  void write_outputs(const Record& record, const embed::RetrievalVectors& outputs) override {
    const Embeddings& m = outputs.multi;
    if (m.rows() > 0 && m.dim() != dim_) {
      throw Error(ErrorKind::Internal, fmt::format("token vectors of width {}, not {}", m.dim(), dim_));
    }
    // x86-64 and AArch64 Linux are little-endian, which '<f4' promises.
    const std::span<const float> values = m.values();
    data_.write({reinterpret_cast<const char*>(values.data()), values.size_bytes()});
    rows_ += m.rows();
    append_offset();
    std::string line = record.id;
    line.push_back('\n');
    ids_.write(line);
  }
  void sync() override {
    data_.write_at(0, npy_header(rows_, dim_));
    offsets_.write_at(0, npy_header_int64(offset_count_));
    data_.sync();
    offsets_.sync();
    ids_.sync();
  }
  void finish() override {
    sync();
    data_.close();
    offsets_.close();
    ids_.close();
  }
  [[nodiscard]] std::vector<std::filesystem::path> files() const override {
    return {data_.name(), offsets_.name(), ids_.name()};
  }
  [[nodiscard]] std::vector<std::uint64_t> lengths() const override {
    return {data_.length(), offsets_.length(), ids_.length()};
  }

 private:
  void append_offset() {
    const auto end = static_cast<std::int64_t>(rows_);
    offsets_.write({reinterpret_cast<const char*>(&end), sizeof end});
    ++offset_count_;
  }

  std::size_t dim_;
  OutputStream data_;
  OutputStream offsets_;
  OutputStream ids_;
  std::uint64_t rows_ = 0;
  std::uint64_t offset_count_ = 0;
};

}  // namespace

std::filesystem::path offsets_path(const std::filesystem::path& output) {
  auto p = output;
  p.replace_extension(".offsets.npy");
  return p;
}

std::vector<std::filesystem::path> multi_vector_files(const std::filesystem::path& output) {
  return {output, offsets_path(output), ids_path(output)};
}

std::unique_ptr<Sink> make_sparse_sink(const SinkOptions& options) {
  return std::make_unique<SparseSink>(options);
}

std::unique_ptr<Sink> make_multi_vector_sink(const SinkOptions& options) {
  return std::make_unique<MultiVectorSink>(options);
}

}  // namespace warden::bulk
