#pragma once
// Helpers for the tests that break a model folder on purpose and expect a clear load error:
// editing its config.json, and checking the error's kind and what it names.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/file.hpp"
#include "model/encoder_model.hpp"

namespace warden::testing {

// Replaces the first `from` in dir/config.json by `to` (a test failure when it is not there).
inline void edit_config(const std::filesystem::path& dir, const std::string& from, const std::string& to) {
  std::string config = read_file(dir / "config.json");
  const auto at = config.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) config.replace(at, from.size(), to);
  write_file_atomic(dir / "config.json", config);
}

// Loading the folder fails with `kind`, and the message contains `names`.
inline void expect_load_error(const std::filesystem::path& dir, ErrorKind kind, const std::string& names) {
  try {
    (void)model::load_encoder_model(dir);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

}  // namespace warden::testing
