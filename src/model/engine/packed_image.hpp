#pragma once
// Packed weight images: the arena of a model's packed layers saved to disk after the first
// load and memory-mapped back on later ones, so that a start neither packs the layers nor
// has the kernel zero fresh pages for them (page-cache pages are mapped as they are, and
// shared by every process serving the same model).
//
// An image is found by a key naming everything its bytes depend on: the weight files'
// identity (device, inode, size, modification and change times to the nanosecond) and a
// hash of their headers and of sampled content; the layout (architecture, shapes,
// precision, ISA and the CPU features that pick the kernels); and the build of Warden
// that packed it (the executable's build ID). Any change to the weights, the machine or
// the code is a different key, so a stale image is never used. The whole key is stored in
// the image and compared on load; the file name is its hash.
//
// Where: $WARDEN_PACK_CACHE (a folder; "off" turns images off), else
// $XDG_CACHE_HOME/warden/packed, else ~/.cache/warden/packed. The folder is kept under
// $WARDEN_PACK_CACHE_MAX_MB (default 4096) by removing the least recently used images.
// Everything here is best effort: an image that cannot be read or written only means the
// layers are packed as they would be without one.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/arena.hpp"
#include "model/formats/weights.hpp"

namespace warden::model::engine {

// What happened to a model's image at load.
enum class PackedImageUse {
  Off,       // images are turned off, or this model has no packed layers
  Mapped,    // the layers were mapped from an image
  Saved,     // they were packed and saved as an image for the next load
  NotSaved,  // they were packed; no image was saved (see PackedImage::reason)
};

struct PackedImageKey {
  std::string text;  // every input of the packed bytes, one per line
  std::string file;  // the image's file name in the cache folder
};

class PackedImageCache {
 public:
  // The cache the environment names (see the header), or nullopt when images are off.
  static std::optional<PackedImageCache> from_environment();
  PackedImageCache(std::filesystem::path dir, std::size_t max_bytes);

  // The key of `layout` packed from `weights` by this build on this machine.
  [[nodiscard]] static PackedImageKey key(const formats::ModelWeights& weights, std::string_view layout);

  // A prefilled arena of `bytes` from the image saved under `key`, or nullopt (no such
  // image, another key, a size that does not match, an unreadable file).
  [[nodiscard]] std::optional<Arena> find(const PackedImageKey& key, std::size_t bytes) const;

  // Saves `arena` as the image of `key`, atomically (a reader never sees half an image),
  // then removes the least recently used images past the folder's limit. Returns an empty
  // string when saved, else why not (a weight file changed during the load or under two
  // seconds ago, so its times may not tell the next change apart; an I/O error).
  std::string save(const PackedImageKey& key, const Arena& arena, const formats::ModelWeights& weights) const;

  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  void trim(const std::filesystem::path& keep) const;

  std::filesystem::path dir_;
  std::size_t max_bytes_;
};

// A model's arena with its image: how loaders use the cache.
struct PackedArena {
  std::unique_ptr<Arena> arena;  // prefilled when use == Mapped
  PackedImageUse use = PackedImageUse::Off;
  std::string note;  // NotSaved: why
  std::optional<PackedImageCache> cache;
  PackedImageKey key;
};

// The arena for `bytes` of packed data described by `layout` (everything besides the weight
// files that decides those bytes), mapped from its image when the environment's cache holds
// one, else fresh.
PackedArena open_packed_arena(const formats::ModelWeights& weights, std::string_view layout,
                              std::size_t bytes);

// Once the loader has filled a fresh arena: saves it as the image when the cache is on
// (use becomes Saved or NotSaved). Does nothing for a mapped arena.
void save_packed_arena(PackedArena& packed, const formats::ModelWeights& weights);

}  // namespace warden::model::engine
