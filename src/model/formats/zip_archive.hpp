#pragma once
// The central directory of a ZIP archive held in memory (a memory-mapped file), for the
// archives PyTorch's torch.save writes: every entry STORED (uncompressed), so an entry's bytes
// are a view into the file. ZIP64 end records and extra fields are read (checkpoints over
// 4 GB). Everything a broken or hostile archive can get wrong is checked — signatures, every
// offset and size against the file, names, duplicate names, compressed or encrypted entries —
// and is Error(CorruptFile) (Error(Unsupported) for compression or encryption) naming the file
// and, where there is one, the entry.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace warden::model::formats {

struct ZipEntry {
  std::string name;
  std::span<const std::byte> data;  // the stored bytes, inside the archive's span
};

// The entries of the archive `bytes`, in central-directory order. `file_name` names the file in
// errors.
std::vector<ZipEntry> read_zip_entries(std::span<const std::byte> bytes, std::string_view file_name);

}  // namespace warden::model::formats
