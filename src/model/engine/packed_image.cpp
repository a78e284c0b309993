#include "model/engine/packed_image.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/build_id.hpp"
#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/fnv1a.hpp"

namespace warden::model::engine {

namespace {

// Image file: kMagic, the key's length and the image's length (u64 little-endian each),
// the key, zeros up to a page boundary (so the mapped image is page- and 64-byte aligned),
// then the arena's bytes.
constexpr std::string_view kMagic = "WDNPACK1";
constexpr std::size_t kPage = 4096;
constexpr std::size_t kFixedHeader = kMagic.size() + 2 * sizeof(std::uint64_t);
constexpr std::string_view kSuffix = ".wpk";
constexpr std::size_t kDefaultMaxMb = 4096;
// Timestamps are coarse (a kernel tick; a second on some file systems): a file written
// again within this long of our look at it could keep its times.
constexpr auto kRacyWindow = std::chrono::seconds(2);

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::int64_t ns(const timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// "dev=.. ino=.. size=.. mtime=.. ctime=.." of a file, or nullopt when it cannot be stat'ed.
struct Identity {
  std::string text;
  std::int64_t mtime_ns = 0;
};
std::optional<Identity> identity(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return Identity{fmt::format("dev={} ino={} size={} mtime={} ctime={}", st.st_dev, st.st_ino, st.st_size,
                              ns(st.st_mtim), ns(st.st_ctim)),
                  ns(st.st_mtim)};
}

// A hash of the first 64 KiB (the safetensors header), 16 evenly spaced 4 KiB samples and
// the last 4 KiB: a cheap check on the content beside the file's times.
std::uint64_t content_sample_hash(std::span<const std::byte> bytes) {
  constexpr std::size_t kHead = 64 * 1024;
  constexpr std::size_t kSample = 4096;
  constexpr std::size_t kSamples = 16;
  std::uint64_t h = fnv1a(bytes.first(std::min(bytes.size(), kHead)));
  if (bytes.size() > kHead) {
    for (std::size_t i = 0; i <= kSamples; ++i) {
      const std::size_t at =
          std::min(bytes.size() - std::min(bytes.size(), kSample), bytes.size() / kSamples * i);
      h = fnv1a(bytes.subspan(at, std::min(kSample, bytes.size() - at)), h);
    }
  }
  return h;
}

std::string cpu_text() {
  const CpuFeatures& f = cpu_features();
  return fmt::format("avx2_fma={} avx512={} vnni={} avx512_bf16={} amx_int8={} amx_bf16={} neon={}",
                     f.avx2_fma, f.avx512, f.avx512_vnni, f.avx512_bf16, f.amx_int8, f.amx_bf16, f.neon);
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint64_t get_u64(std::span<const std::byte> b) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(b[static_cast<std::size_t>(i)]);
  return v;
}

std::size_t header_bytes(std::size_t key_length) {
  return (kFixedHeader + key_length + kPage - 1) / kPage * kPage;
}

}  // namespace

std::optional<PackedImageCache> PackedImageCache::from_environment() {
  std::filesystem::path dir;
  const std::string named = env("WARDEN_PACK_CACHE");
  if (named == "off" || named == "0" || named == "false") return std::nullopt;
  if (!named.empty()) {
    dir = named;
  } else if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
    dir = std::filesystem::path(xdg) / "warden" / "packed";
  } else if (const std::string home = env("HOME"); !home.empty()) {
    dir = std::filesystem::path(home) / ".cache" / "warden" / "packed";
  } else {
    return std::nullopt;
  }
  std::size_t max_mb = kDefaultMaxMb;
  if (const std::string m = env("WARDEN_PACK_CACHE_MAX_MB"); !m.empty()) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(m.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && end != m.c_str()) max_mb = static_cast<std::size_t>(v);
  }
  return PackedImageCache(std::move(dir), max_mb * 1024 * 1024);
}

PackedImageCache::PackedImageCache(std::filesystem::path dir, std::size_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {}

PackedImageKey PackedImageCache::key(const formats::ModelWeights& weights, std::string_view layout) {
  std::string text =
      fmt::format("{}\nbuild {}\ncpu {}\nlayout {}\n", kMagic, executable_build_id(), cpu_text(), layout);
  for (const formats::WeightFile& f : weights.files()) {
    std::error_code ec;
    const auto path = std::filesystem::weakly_canonical(f.path(), ec);
    const auto id = identity(f.path());
    text += fmt::format("file {} {} content={:016x}\n", ec ? f.path().string() : path.string(),
                        id ? id->text : std::string("unknown"), content_sample_hash(f.bytes()));
  }
  return {text, fmt::format("{:016x}{}", fnv1a(text), kSuffix)};
}

std::optional<Arena> PackedImageCache::find(const PackedImageKey& key, std::size_t bytes) const {
  const auto path = dir_ / key.file;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  try {
    MappedFile file(path);
    const std::span<const std::byte> all = file.bytes();
    if (all.size() < kFixedHeader) return std::nullopt;
    if (std::memcmp(all.data(), kMagic.data(), kMagic.size()) != 0) return std::nullopt;
    const std::uint64_t key_length = get_u64(all.subspan(kMagic.size()));
    const std::uint64_t image_length = get_u64(all.subspan(kMagic.size() + 8));
    if (key_length != key.text.size() || image_length != bytes) return std::nullopt;
    const std::size_t offset = header_bytes(key.text.size());
    if (all.size() != offset + bytes) return std::nullopt;
    if (std::memcmp(all.data() + kFixedHeader, key.text.data(), key.text.size()) != 0) return std::nullopt;
    // Mark it used, for the least-recently-used trim (advice: a failure changes nothing).
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ec);
    return Arena(std::move(file), offset, bytes);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string PackedImageCache::save(const PackedImageKey& key, const Arena& arena,
                                   const formats::ModelWeights& weights) const {
  const auto now = std::chrono::system_clock::now();
  for (const formats::WeightFile& f : weights.files()) {
    const auto id = identity(f.path());
    if (!id || key.text.find(id->text) == std::string::npos) {
      return fmt::format("{} changed while the model was loading", f.path().string());
    }
    const auto mtime =
        std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(id->mtime_ns)));
    if (now - mtime < kRacyWindow) {
      return fmt::format("{} was modified less than {} s ago", f.path().string(), kRacyWindow.count());
    }
  }
  std::string header(kMagic);
  put_u64(header, key.text.size());
  put_u64(header, arena.bytes().size());
  header += key.text;
  header.resize(header_bytes(key.text.size()), '\0');
  const auto path = dir_ / key.file;
  try {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return fmt::format("cannot create {}: {}", dir_.string(), ec.message());
    const std::span<const std::byte> image = arena.bytes();
    write_file_atomic(path,
                      {header, std::string_view(reinterpret_cast<const char*>(image.data()), image.size())});
  } catch (const Error& e) {
    return e.what();
  }
  trim(path);
  return {};
}

void PackedImageCache::trim(const std::filesystem::path& keep) const {
  trim_folder(dir_, kSuffix, max_bytes_, keep);
}

PackedArena open_packed_arena(const formats::ModelWeights& weights, std::string_view layout,
                              std::size_t bytes) {
  PackedArena out;
  out.cache = PackedImageCache::from_environment();
  if (out.cache && bytes > 0) {
    out.key = PackedImageCache::key(weights, layout);
    if (std::optional<Arena> mapped = out.cache->find(out.key, bytes)) {
      out.arena = std::make_unique<Arena>(std::move(*mapped));
      out.use = PackedImageUse::Mapped;
      return out;
    }
  } else {
    out.cache.reset();
  }
  out.arena = std::make_unique<Arena>(bytes);
  return out;
}

void save_packed_arena(PackedArena& packed, const formats::ModelWeights& weights) {
  if (!packed.cache || packed.use == PackedImageUse::Mapped) return;
  packed.note = packed.cache->save(packed.key, *packed.arena, weights);
  packed.use = packed.note.empty() ? PackedImageUse::Saved : PackedImageUse::NotSaved;
}

}  // namespace warden::model::engine
