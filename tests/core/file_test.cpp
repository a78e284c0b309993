// What read_file and MappedFile open: regular files only, bounded — a FIFO never blocks the
// reader, a device such as /dev/zero is never read endlessly, a file past the bound is refused.

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/file.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("warden-file-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The error message of reading `path` through read_file (empty if it did not throw).
  static std::string read_error(const fs::path& path, std::size_t max_bytes = kMaxReadBytes) {
    try {
      (void)read_file(path, max_bytes);
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }
  static std::string map_error(const fs::path& path) {
    try {
      const MappedFile m(path);
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }
  fs::path dir_;
};

TEST_F(Files, AFifoIsRefusedWithoutWaitingForAWriter) {
  const fs::path fifo = dir_ / "config.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(read_error(fifo).find("it is a FIFO"), std::string::npos) << read_error(fifo);
  EXPECT_NE(map_error(fifo).find("it is a FIFO"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(Files, ALinkToADeviceIsRefused) {
  const fs::path link = dir_ / "config.json";
  fs::create_symlink("/dev/zero", link);
  EXPECT_NE(read_error(link).find("it is a device"), std::string::npos) << read_error(link);
  EXPECT_NE(map_error(link).find("it is a device"), std::string::npos);
  EXPECT_FALSE(try_read_file(link).has_value());
}

TEST_F(Files, AFileOverTheBoundIsRefusedAndOneWithinItRead) {
  const fs::path file = dir_ / "vocab.txt";
  write_file_atomic(file, std::string(1000, 'x'));
  EXPECT_EQ(read_file(file, 1000).size(), 1000U);
  EXPECT_NE(read_error(file, 999).find("larger than the 999 bytes"), std::string::npos)
      << read_error(file, 999);
  // A link to a regular file is that file.
  fs::create_symlink(file, dir_ / "link.txt");
  EXPECT_EQ(read_file(dir_ / "link.txt").size(), 1000U);
}

TEST_F(Files, ADirectoryIsNotAFile) {
  EXPECT_NE(read_error(dir_).find("it is a directory"), std::string::npos);
  EXPECT_NE(read_error(dir_ / "missing").find("No such file"), std::string::npos);
}

// A cache folder past its bound loses its least recently used files of its kind first,
// never the one just written, and nothing of another kind.
TEST_F(Files, TrimFolderRemovesTheLeastRecentlyUsedFirst) {
  const auto now = fs::file_time_type::clock::now();
  const std::string kb(1000, 'x');
  for (int i = 0; i < 5; ++i) {
    std::string name(1, 'f');
    name += std::to_string(i);
    name += ".probe";
    const fs::path p = dir_ / name;
    write_file_atomic(p, kb);
    fs::last_write_time(p, now - std::chrono::hours(10 - i));  // f0 oldest, f4 newest
  }
  write_file_atomic(dir_ / "other.txt", std::string(3000, 'y'));
  fs::last_write_time(dir_ / "f0.probe", now);  // used just now: the newest
  trim_folder(dir_, ".probe", 3000, dir_ / "f1.probe");
  EXPECT_TRUE(fs::exists(dir_ / "f0.probe"));
  EXPECT_TRUE(fs::exists(dir_ / "f1.probe"));  // kept: the one just written
  EXPECT_FALSE(fs::exists(dir_ / "f2.probe"));
  EXPECT_FALSE(fs::exists(dir_ / "f3.probe"));
  EXPECT_TRUE(fs::exists(dir_ / "f4.probe"));
  EXPECT_TRUE(fs::exists(dir_ / "other.txt"));
  trim_folder(dir_ / "absent", ".probe", 0);  // nothing to list: nothing happens
}

}  // namespace
}  // namespace warden
