// Arena: buffers aligned and in order, children at fixed offsets, padding zeroed, and an
// arena over a saved image handing out the same bytes at the same offsets.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <unistd.h>

#include "core/arena.hpp"
#include "core/build_id.hpp"
#include "core/error.hpp"
#include "core/file.hpp"

namespace warden {
namespace {

TEST(Arena, BuffersAreAlignedInOrderAndItsPaddingIsZero) {
  Arena arena(1024);
  const auto a = arena.take<float>(3);
  const auto b = arena.take<std::int8_t>(65);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % Arena::kAlignment, 0U);
  EXPECT_EQ(reinterpret_cast<const std::byte*>(b.data()) - reinterpret_cast<const std::byte*>(a.data()), 64);
  for (std::size_t i = 12; i < 64; ++i) EXPECT_EQ(arena.bytes()[i], std::byte{0}) << i;
  EXPECT_EQ(Arena::footprint<std::int8_t>(65), 128U);
  EXPECT_THROW((void)arena.take<float>(1024), Error);
}

TEST(Arena, AnImageGivesBackTheSameBytesAtTheSameOffsets) {
  Arena arena(4096);
  Arena first = arena.child(100);
  Arena second = arena.child(200);
  // Filled out of order, as a thread pool would.
  auto s = second.take<std::uint32_t>(50);
  auto f = first.take<std::uint32_t>(25);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint32_t>(1000 + i);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<std::uint32_t>(i);

  const auto path =
      std::filesystem::temp_directory_path() / ("warden-arena-test-" + std::to_string(::getpid()) + ".bin");
  const std::string header(64, 'h');
  write_file_atomic(path, {header, std::string_view(reinterpret_cast<const char*>(arena.bytes().data()),
                                                    arena.bytes().size())});
  Arena mapped(MappedFile(path), 64, arena.bytes().size());
  std::filesystem::remove(path);
  EXPECT_TRUE(mapped.prefilled());
  Arena mapped_first = mapped.child(100);
  Arena mapped_second = mapped.child(200);
  EXPECT_TRUE(mapped_second.prefilled());
  const auto ms = mapped_second.take<std::uint32_t>(50);
  const auto mf = mapped_first.take<std::uint32_t>(25);
  EXPECT_TRUE(std::equal(ms.begin(), ms.end(), s.begin(), s.end()));
  EXPECT_TRUE(std::equal(mf.begin(), mf.end(), f.begin(), f.end()));
  // An image shorter than asked for is refused.
  const std::string tiny(10, 'x');
  write_file_atomic(path, tiny);
  EXPECT_THROW(Arena(MappedFile(path), 0, 64), Error);
  std::filesystem::remove(path);
}

TEST(BuildId, TheExecutableHasOne) {
  const std::string_view id = executable_build_id();
  EXPECT_GE(id.size(), 16U);  // GNU ld writes 20 bytes (sha1) by default
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string_view::npos);
}

}  // namespace
}  // namespace warden
