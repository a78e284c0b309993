#pragma once
// SHA-256 (FIPS 180-4), streaming. The hub names LFS blobs by the sha256 of their content,
// so every download is checked against it; a few dozen lines here spare the whole build an
// OpenSSL dependency for one digest.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace warden::hub {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // Lowercase hex of the digest; the object must not be updated afterwards.
  std::string hex_digest();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> state_{};
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes hashed so far
};

// Hex digest of a whole file, read in chunks; throws Error(Io) when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace warden::hub
