#pragma once
// SHA-256, streaming, through OpenSSL's libcrypto (which libcurl already brings in for
// HTTPS). The hub names LFS blobs by the sha256 of their content, so every download is
// checked against it.

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace warden::hub {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  // Lowercase hex of the digest; the object must not be updated afterwards.
  std::string hex_digest();

 private:
  struct Free {
    void operator()(evp_md_ctx_st* ctx) const noexcept;
  };
  std::unique_ptr<evp_md_ctx_st, Free> ctx_;
};

// Hex digest of a whole file, read in chunks; throws Error(Io) when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace warden::hub
