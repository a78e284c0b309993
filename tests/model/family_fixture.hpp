#pragma once
// The model-family tests' fixtures: a warden-fixture folder of one architecture and head,
// written in-process, and the same with one edit to its config.json (for the load errors).

#include <filesystem>
#include <string>

#include "fixtures/fixture.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::testing {

// tmp/model: the tiny preset of `arch` with `head`, seed 0.
inline std::filesystem::path write_family(const TempDir& tmp, std::string_view arch, fixtures::Head head) {
  fixtures::FixtureOptions options;
  options.arch = arch;
  options.head = head;
  const auto dir = tmp / "model";
  fixtures::write_fixture(options, dir);
  return dir;
}

// write_family's folder with the first `from` in its config.json replaced by `to`.
inline std::filesystem::path family_with_config(const TempDir& tmp, std::string_view arch,
                                                fixtures::Head head, const std::string& from,
                                                const std::string& to) {
  const auto dir = write_family(tmp, arch, head);
  edit_config(dir, from, to);
  return dir;
}

}  // namespace warden::testing
