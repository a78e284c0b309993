#include "hub/sha256.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::hub {

void Sha256::Free::operator()(evp_md_ctx_st* ctx) const noexcept {
  EVP_MD_CTX_free(ctx);
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) {
    throw Error(ErrorKind::Internal, "libcrypto: cannot start a sha256 digest");
  }
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) {
  if (EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) != 1) {
    throw Error(ErrorKind::Internal, "libcrypto: sha256 update failed");
  }
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), digest, &size) != 1) {
    throw Error(ErrorKind::Internal, "libcrypto: sha256 final failed");
  }
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, fmt::format("cannot open {} to check its sha256", path.string()));
  Sha256 hash;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    hash.update(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) throw Error(ErrorKind::Io, fmt::format("cannot read {} to check its sha256", path.string()));
  return hash.hex_digest();
}

}  // namespace warden::hub
