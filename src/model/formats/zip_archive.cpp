#include "model/formats/zip_archive.hpp"

#include <cstdint>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::model::formats {

namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64End = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kLocatorSize = 20;
constexpr std::size_t kZip64EndSize = 56;
constexpr std::size_t kDirectoryEntrySize = 46;
constexpr std::size_t kLocalHeaderSize = 30;
// More entries than any checkpoint has (one per storage, plus a few): a hostile count cannot
// make the reader reserve absurd memory.
constexpr std::uint64_t kMaxEntries = 1U << 20;

// Little-endian reads at an offset the caller has checked.
std::uint64_t le(std::span<const std::byte> b, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(b[at + i]) << (8 * i);
  return v;
}

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, std::string_view file) : bytes_(bytes), file_(file) {}

  [[nodiscard]] Error fail(std::string_view what) const {
    return Error(ErrorKind::CorruptFile, fmt::format("{}: not a valid ZIP archive: {}", file_, what));
  }
  // Checks that [at, at + n) lies inside the archive.
  void need(std::uint64_t at, std::uint64_t n, std::string_view what) const {
    if (at > bytes_.size() || n > bytes_.size() - at)
      throw fail(fmt::format("{} lies outside the file", what));
  }
  [[nodiscard]] std::uint64_t u(std::uint64_t at, std::size_t n) const {
    return le(bytes_, static_cast<std::size_t>(at), n);
  }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::string_view file() const noexcept { return file_; }

 private:
  std::span<const std::byte> bytes_;
  std::string_view file_;
};

struct Directory {
  std::uint64_t entries = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// The end-of-central-directory record (the last one: a comment may follow it), and its ZIP64
// record when a field is saturated.
Directory find_directory(const Reader& r) {
  const std::size_t n = r.bytes().size();
  if (n < kEndSize) throw r.fail("too short to hold an end-of-directory record");
  const std::size_t lowest = n - kEndSize > 0xFFFF ? n - kEndSize - 0xFFFF : 0;
  std::size_t at = n - kEndSize;
  while (r.u(at, 4) != kEndOfDirectory) {
    if (at == lowest) throw r.fail("no end-of-directory record");
    --at;
  }
  Directory d{r.u(at + 10, 2), r.u(at + 16, 4), r.u(at + 12, 4)};
  if (r.u(at + 4, 2) != 0 || r.u(at + 6, 2) != 0 || r.u(at + 8, 2) != d.entries) {
    throw r.fail("archives split over several disks are not supported");
  }
  if (d.entries == 0xFFFF || d.offset == 0xFFFFFFFF || d.size == 0xFFFFFFFF) {
    if (at < kLocatorSize || r.u(at - kLocatorSize, 4) != kZip64Locator) {
      throw r.fail("a saturated end-of-directory record without a ZIP64 locator");
    }
    const std::uint64_t end64 = r.u(at - kLocatorSize + 8, 8);
    r.need(end64, kZip64EndSize, "the ZIP64 end-of-directory record");
    if (r.u(end64, 4) != kZip64End) throw r.fail("the ZIP64 end-of-directory record has a wrong signature");
    d = {r.u(end64 + 32, 8), r.u(end64 + 48, 8), r.u(end64 + 40, 8)};
  }
  if (d.entries > kMaxEntries) throw r.fail(fmt::format("{} entries", d.entries));
  r.need(d.offset, d.size, "the central directory");
  return d;
}

// A saturated 32-bit field's value from the entry's ZIP64 extra field (id 1), which lists the
// saturated fields in a fixed order: uncompressed size, compressed size, local header offset.
struct Zip64Fields {
  std::uint64_t uncompressed, compressed, local_offset;
};
void read_zip64_extra(const Reader& r, std::uint64_t extra, std::uint64_t extra_len, Zip64Fields& f,
                      std::string_view name) {
  const bool want[3] = {f.uncompressed == 0xFFFFFFFF, f.compressed == 0xFFFFFFFF,
                        f.local_offset == 0xFFFFFFFF};
  if (!want[0] && !want[1] && !want[2]) return;
  std::uint64_t at = extra;
  const std::uint64_t end = extra + extra_len;
  while (at + 4 <= end) {
    const std::uint64_t id = r.u(at, 2);
    const std::uint64_t len = r.u(at + 2, 2);
    if (len > end - at - 4) break;
    if (id == 1) {
      std::uint64_t* fields[3] = {&f.uncompressed, &f.compressed, &f.local_offset};
      std::uint64_t p = at + 4;
      for (int i = 0; i < 3; ++i) {
        if (!want[i]) continue;
        if (p + 8 > at + 4 + len) throw r.fail(fmt::format("entry {}: a short ZIP64 extra field", name));
        *fields[i] = r.u(p, 8);
        p += 8;
      }
      return;
    }
    at += 4 + len;
  }
  throw r.fail(fmt::format("entry {}: saturated sizes without a ZIP64 extra field", name));
}

}  // namespace

std::vector<ZipEntry> read_zip_entries(std::span<const std::byte> bytes, std::string_view file_name) {
  const Reader r(bytes, file_name);
  const Directory dir = find_directory(r);
  std::vector<ZipEntry> entries;
  entries.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(dir.entries, 4096)));
  std::set<std::string, std::less<>> names;
  std::uint64_t at = dir.offset;
  const std::uint64_t dir_end = dir.offset + dir.size;
  for (std::uint64_t i = 0; i < dir.entries; ++i) {
    if (at > dir_end || dir_end - at < kDirectoryEntrySize)
      throw r.fail("the central directory is truncated");
    if (r.u(at, 4) != kDirectoryEntry)
      throw r.fail(fmt::format("central directory entry {} has a wrong signature", i));
    const std::uint64_t flags = r.u(at + 8, 2);
    const std::uint64_t method = r.u(at + 10, 2);
    Zip64Fields f{r.u(at + 24, 4), r.u(at + 20, 4), r.u(at + 42, 4)};
    const std::uint64_t name_len = r.u(at + 28, 2);
    const std::uint64_t extra_len = r.u(at + 30, 2);
    const std::uint64_t comment_len = r.u(at + 32, 2);
    const std::uint64_t record = kDirectoryEntrySize + name_len + extra_len + comment_len;
    if (dir_end - at < record) throw r.fail(fmt::format("central directory entry {} is truncated", i));
    std::string name(reinterpret_cast<const char*>(bytes.data() + at + kDirectoryEntrySize),
                     static_cast<std::size_t>(name_len));
    if (name.empty() || name.find('\0') != std::string::npos) {
      throw r.fail(fmt::format("central directory entry {} has an invalid name", i));
    }
    read_zip64_extra(r, at + kDirectoryEntrySize + name_len, extra_len, f, name);
    if ((flags & 1U) != 0) {
      throw Error(ErrorKind::Unsupported, fmt::format("{}: entry {} is encrypted", file_name, name));
    }
    if (method != 0) {
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: entry {} is compressed (method {}); PyTorch checkpoints store their "
                              "entries uncompressed",
                              file_name, name, method));
    }
    if (f.compressed != f.uncompressed) {
      throw r.fail(fmt::format("entry {} is stored but its sizes differ", name));
    }
    r.need(f.local_offset, kLocalHeaderSize, fmt::format("the local header of {}", name));
    if (r.u(f.local_offset, 4) != kLocalHeader) {
      throw r.fail(fmt::format("the local header of {} has a wrong signature", name));
    }
    const std::uint64_t data =
        f.local_offset + kLocalHeaderSize + r.u(f.local_offset + 26, 2) + r.u(f.local_offset + 28, 2);
    r.need(data, f.compressed, fmt::format("the data of {}", name));
    if (!names.insert(name).second) throw r.fail(fmt::format("entry {} appears twice", name));
    entries.push_back({std::move(name), bytes.subspan(static_cast<std::size_t>(data),
                                                      static_cast<std::size_t>(f.compressed))});
    at += record;
  }
  return entries;
}

}  // namespace warden::model::formats
