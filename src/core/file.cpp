#include "core/file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden {

namespace {

[[noreturn]] void throw_open_error(const std::filesystem::path& path, int err) {
  const auto kind = (err == ENOENT || err == ENOTDIR) ? ErrorKind::NotFound : ErrorKind::Io;
  throw Error(kind, fmt::format("cannot open {}: {}", path.string(), std::strerror(err)));
}

// Closes a POSIX descriptor on scope exit.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  ~FdGuard() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Opens `path` for reading and checks that it is a regular file. O_NONBLOCK: opening a FIFO
// for reading would otherwise wait for a writer forever; on a regular file it changes nothing.
int open_regular_file(const std::filesystem::path& path, struct stat& st, std::string_view verb) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw_open_error(path, errno);
  FdGuard guard(fd);  // closes it when a check below throws
  if (::fstat(fd, &st) != 0) throw_open_error(path, errno);
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISDIR(st.st_mode)                          ? "it is a directory"
                       : S_ISFIFO(st.st_mode)                       ? "it is a FIFO, not a regular file"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "it is a device, not a regular file"
                                                                    : "it is not a regular file";
    throw Error(ErrorKind::Io, fmt::format("cannot {} {}: {}", verb, path.string(), what));
  }
  return guard.release();
}

}  // namespace

std::optional<std::string> try_read_file(const std::filesystem::path& path) {
  try {
    return read_file(path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  struct stat st {};
  const FdGuard fd(open_regular_file(path, st, "read"));
  const auto too_large = [&] {
    return Error(ErrorKind::Io, fmt::format("cannot read {}: larger than the {} bytes such a file may have",
                                            path.string(), max_bytes));
  };
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) throw too_large();
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::Io, fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    }
    if (n == 0) break;
    // A file may grow while it is read (or report size 0, as /proc files do): the bound
    // holds on what is read.
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) throw too_large();
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  write_file_atomic(path, {bytes});
}

void write_file_atomic(const std::filesystem::path& path, std::initializer_list<std::string_view> parts) {
  // Unique per process and call: two threads may write the same path at once.
  static std::atomic<unsigned> counter{0};
  auto tmp = path;
  tmp += fmt::format(".tmp{}.{}", ::getpid(), counter.fetch_add(1, std::memory_order_relaxed));
  const auto fail = [&tmp](std::string_view what) {
    const int err = errno;
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw Error(ErrorKind::Io, fmt::format("cannot {} {}: {}", what, tmp.string(), std::strerror(err)));
  };
  {
    const FdGuard fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) fail("create");
    for (std::string_view rest : parts) {
      while (!rest.empty()) {
        const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
        if (n < 0) {
          if (errno == EINTR) continue;
          fail("write");
        }
        rest.remove_prefix(static_cast<std::size_t>(n));
      }
    }
    // The data reaches the disk before the rename can make it visible under the real name.
    if (::fsync(fd.get()) != 0) fail("sync");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
  // ... and the rename itself is durable once the folder is synced (best effort: some file
  // systems refuse to open or sync a directory, and the file is already complete).
  const auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  const FdGuard dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) (void)::fsync(dir_fd.get());
}

void release_pages(std::span<const std::byte> range) noexcept {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(range.data()) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(range.data()) + range.size()) / page * page;
  if (end > begin) {
    // Advice only: a failure changes nothing but the resident set.
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
}

MappedFile::MappedFile(const std::filesystem::path& path) {
  struct stat st {};
  const FdGuard fd(open_regular_file(path, st, "map"));
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) return;  // mmap of zero bytes is an error; an empty span is the answer
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED) {
    size_ = 0;
    throw Error(ErrorKind::Io, fmt::format("cannot map {}: {}", path.string(), std::strerror(errno)));
  }
  data_ = static_cast<const std::byte*>(p);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  reset();
}

void MappedFile::reset() noexcept {
  if (data_ != nullptr) {
    // const_cast: munmap's signature takes void*; the mapping itself stays read-only.
    ::munmap(const_cast<std::byte*>(data_), size_);
  }
  data_ = nullptr;
  size_ = 0;
}

void trim_folder(const std::filesystem::path& dir, std::string_view suffix, std::uintmax_t max_bytes,
                 const std::filesystem::path& keep) {
  struct Entry {
    std::filesystem::path path;
    std::filesystem::file_time_type used;
    std::uintmax_t size;
  };
  std::vector<Entry> entries;
  std::uintmax_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (!e.path().filename().string().ends_with(suffix) || !e.is_regular_file(ec)) continue;
    const auto size = e.file_size(ec);
    if (ec) continue;
    entries.push_back({e.path(), e.last_write_time(ec), size});
    total += size;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= max_bytes) break;
    if (e.path == keep) continue;
    if (std::filesystem::remove(e.path, ec)) total -= e.size;
  }
}

}  // namespace warden
