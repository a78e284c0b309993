#include "cli/output.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"

namespace warden::cli {

OutputFile::OutputFile(const std::string& path)
    : file_(path.empty() ? stdout : std::fopen(path.c_str(), "wb")),
      path_(path.empty() ? "stdout" : path),
      owned_(!path.empty()) {
  if (file_ == nullptr) {
    throw Error(ErrorKind::Io, fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  }
}

OutputFile::~OutputFile() {
  if (owned_ && file_ != nullptr) std::fclose(file_);
}

void OutputFile::write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  }
}

void OutputFile::close() {
  const bool failed = std::fflush(file_) != 0 || std::ferror(file_) != 0;
  if (owned_) {
    const bool close_failed = std::fclose(file_) != 0;
    file_ = nullptr;
    if (failed || close_failed) throw Error(ErrorKind::Io, fmt::format("cannot write {}", path_));
  } else if (failed) {
    throw Error(ErrorKind::Io, fmt::format("cannot write {}", path_));
  }
}

void write_jsonl(OutputFile& out, std::span<const std::string_view> texts, const Embeddings& embeddings) {
  for (std::size_t i = 0; i < embeddings.rows(); ++i) {
    JsonWriter json;
    json.begin_object().key("text").value(texts[i]).key("embedding").begin_array();
    for (const float v : embeddings.row(i)) json.value(v);
    json.end_array().end_object();
    std::string line = json.take();
    line.push_back('\n');
    out.write(line);
  }
}

void write_npy(OutputFile& out, const Embeddings& embeddings) {
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}",
                                   embeddings.rows(), embeddings.dim());
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple
  // of 64 bytes and ended by a newline, as the format requires.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix.push_back(static_cast<char>(header.size() & 0xFFU));
  prefix.push_back(static_cast<char>((header.size() >> 8) & 0xFFU));
  out.write(prefix);
  out.write(header);
  const auto values = embeddings.values();
  // x86-64 and AArch64 Linux are little-endian, which '<f4' promises.
  out.write({reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)});
}

}  // namespace warden::cli
