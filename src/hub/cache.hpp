#pragma once
// Internal: huggingface_hub's cache layout, so both tools share one cache.
//   {cache}/models--ORG--NAME/blobs/{etag}                 the content, named by its etag
//   {cache}/models--ORG--NAME/snapshots/{commit}/{file}    relative symlink to the blob
//   {cache}/models--ORG--NAME/refs/{revision}              the commit a branch or tag named

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace warden::hub::detail {

bool is_hex(std::string_view s, std::size_t length);

// {cache}/models--ORG--NAME
std::filesystem::path repo_folder(const std::filesystem::path& cache, std::string_view repo);

// Points snapshots/{commit}/{file} at blobs/{etag} with a relative symlink, created under
// a temporary name and renamed over, so the entry appears whole or not at all.
void link_into_snapshot(const std::filesystem::path& repo_dir, std::string_view commit, std::string_view file,
                        std::string_view etag);

// Writes refs/{revision} = commit through a uniquely named temporary and a rename, so
// two threads (not only two processes) pulling at once never share a temporary.
void write_ref(const std::filesystem::path& repo_dir, std::string_view revision, std::string_view commit);

// A snapshot Warden can load: config.json and weights (safetensors or pytorch_model.bin).
bool snapshot_has_model(const std::filesystem::path& snapshot);

// The wanted files present in a snapshot (links resolving to a blob, or plain files), sorted.
std::vector<std::string> snapshot_files(const std::filesystem::path& snapshot);

// An exclusive flock on a file, held for the object's life: two processes pulling the same
// blob take turns instead of writing one .incomplete file together.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path);  // blocks; throws Error(Io)
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  int fd_ = -1;
};

}  // namespace warden::hub::detail
