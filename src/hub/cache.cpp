#include "hub/cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hub/hub.hpp"

namespace warden::hub::detail {

namespace fs = std::filesystem;

namespace {

// A name no other thread or process of ours uses at the same time.
std::string temp_suffix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}-{}.tmp", ::getpid(), counter.fetch_add(1));
}

}  // namespace

bool is_hex(std::string_view s, std::size_t length) {
  return s.size() == length && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

fs::path repo_folder(const fs::path& cache, std::string_view repo) {
  std::string name = "models--";
  for (const char c : repo) {
    if (c == '/') {
      name += "--";
    } else {
      name += c;
    }
  }
  return cache / name;
}

void link_into_snapshot(const fs::path& repo_dir, std::string_view commit, std::string_view file,
                        std::string_view etag) {
  const fs::path link = repo_dir / "snapshots" / std::string(commit) / std::string(file);
  // One "../" per folder between the link and the repo folder: snapshots/{commit}/[sub/].
  std::string target;
  const auto depth = static_cast<std::size_t>(std::count(file.begin(), file.end(), '/')) + 2;
  for (std::size_t i = 0; i < depth; ++i) target += "../";
  target += "blobs/";
  target += etag;
  std::error_code ec;
  fs::create_directories(link.parent_path(), ec);
  if (ec)
    throw Error(ErrorKind::Io,
                fmt::format("cannot create {}: {}", link.parent_path().string(), ec.message()));
  static std::atomic<unsigned> counter{0};
  const fs::path temp = link.parent_path() / fmt::format(".{}.{}-{}.tmp", link.filename().string(),
                                                         ::getpid(), counter.fetch_add(1));
  fs::create_symlink(target, temp, ec);
  if (!ec) fs::rename(temp, link, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw Error(ErrorKind::Io, fmt::format("cannot link {} into the cache: {}", link.string(), ec.message()));
  }
}

void write_ref(const fs::path& repo_dir, std::string_view revision, std::string_view commit) {
  const fs::path refs = repo_dir / "refs";
  std::error_code ec;
  fs::create_directories(refs, ec);
  const fs::path ref = refs / std::string(revision);
  const fs::path temp = refs / fmt::format(".{}.{}", revision, temp_suffix());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << commit;
    if (!out.flush()) ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec) fs::rename(temp, ref, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", ref.string(), ec.message()));
  }
}

bool snapshot_has_model(const fs::path& snapshot) {
  std::error_code ec;
  if (!fs::is_regular_file(snapshot / "config.json", ec)) return false;
  std::vector<std::string> weights;
  for (const auto& entry : fs::directory_iterator(snapshot, ec)) {
    if (fs::is_regular_file(entry.path(), ec)) weights.push_back(entry.path().filename().string());
  }
  // transformers.js's layout keeps its graphs in onnx/.
  for (const auto& entry : fs::directory_iterator(snapshot / "onnx", ec)) {
    if (fs::is_regular_file(entry.path(), ec)) weights.push_back("onnx/" + entry.path().filename().string());
  }
  return has_weights(weights);
}

std::vector<std::string> snapshot_files(const fs::path& snapshot) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(snapshot, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    // Lexically: fs::relative would follow the link to its blob.
    const auto relative = it->path().lexically_relative(snapshot).generic_string();
    // is_regular_file follows the link: a dangling one (blob deleted) does not count.
    if (wanted_file(relative) && fs::is_regular_file(it->path(), ec)) files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  return files;
}

FileLock::FileLock(const fs::path& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error(ErrorKind::Io, fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd_);
    throw Error(ErrorKind::Io, fmt::format("cannot lock {}: {}", path.string(), std::strerror(err)));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace warden::hub::detail
