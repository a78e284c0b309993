#pragma once
// Files: whole-file reads for small text files (configs, vocabularies) and read-only
// memory maps for weights, so that a model's tensors are paged in by the kernel on demand
// and shared between processes instead of copied onto the heap.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace warden {

// The most read_file takes by default: far above any config, vocabulary or bank, far below
// what would hurt the process. Large JSON (tokenizer.json) passes its own bound.
inline constexpr std::size_t kMaxReadBytes = std::size_t{64} << 20;

// Reads a whole regular file (after following links) of at most `max_bytes`; throws
// Error(NotFound) or Error(Io) naming the path, also for what is not a regular file (a
// FIFO, a device such as /dev/zero, a directory: never opened blocking, never read
// endlessly) and for a file larger than `max_bytes`.
std::string read_file(const std::filesystem::path& path, std::size_t max_bytes = kMaxReadBytes);
// The same for files that may legitimately be absent or unreadable (/proc, /sys, caches):
// nullopt instead of an error.
std::optional<std::string> try_read_file(const std::filesystem::path& path);

// Writes a whole file through a temporary in the same folder and a rename, so a reader
// never sees half a file; durable: the temporary is fsynced before the rename and the
// folder after it, so after a crash the path holds the old bytes or the new ones, never a
// torn or empty file (bulk checkpoints rely on this). Throws Error(Io).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);
// The same with the file's bytes given in parts, written one after the other.
void write_file_atomic(const std::filesystem::path& path, std::initializer_list<std::string_view> parts);

// Keeps a cache folder small: removes the least recently modified regular files of `dir`
// whose names end in `suffix` until those left total at most `max_bytes`, never `keep`.
// Best effort (what cannot be listed or removed is left). A cache marks a file it uses by
// touching its modification time.
void trim_folder(const std::filesystem::path& dir, std::string_view suffix, std::uintmax_t max_bytes,
                 const std::filesystem::path& keep = {});

// Tells the kernel the pages wholly inside `range` (part of a read-only file mapping) are
// not needed any more: they leave the resident set and are re-read from the file if ever
// touched again. Used after weights were repacked into their own buffers.
void release_pages(std::span<const std::byte> range) noexcept;

// A read-only, private memory map of a whole regular file (a FIFO or a device is refused
// without blocking). Move-only; unmaps on destruction.
class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::filesystem::path& path);  // throws NotFound / Io
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  void reset() noexcept;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace warden
