// SHA-256 against the FIPS 180 examples, fed whole and in odd-sized pieces.

#include <gtest/gtest.h>

#include <string>

#include "hub/sha256.hpp"

namespace warden::hub {
namespace {

std::string digest(const std::string& bytes, std::size_t piece) {
  Sha256 h;
  for (std::size_t i = 0; i < bytes.size(); i += piece) h.update(std::string_view(bytes).substr(i, piece));
  return h.hex_digest();
}

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(digest("abc", 64), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(digest("", 64), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string v448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(digest(v448, 64), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(digest(v448, 7), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, MillionAs) {
  const std::string a(1000000, 'a');
  EXPECT_EQ(digest(a, 1000000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(digest(a, 997), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace warden::hub
