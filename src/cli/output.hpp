#pragma once
// Writers for embedding results: JSON lines and NumPy .npy (format version 1.0).

#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "embed/embedder.hpp"

namespace warden::cli {

// stdout, or a file created at `path`; write errors surface as Error(Io) on close().
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();
  void write(std::string_view bytes);
  void close();

 private:
  std::FILE* file_;
  std::string path_;
  bool owned_;
};

// One {"text": ..., "embedding": [...]} object per line.
void write_jsonl(OutputFile& out, std::span<const std::string_view> texts, const Embeddings& embeddings);

// A little-endian float32 array of shape (rows, dim).
void write_npy(OutputFile& out, const Embeddings& embeddings);

}  // namespace warden::cli
