#pragma once
// Runs the built warden executable through the shell and captures what it printed.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/file.hpp"

namespace warden::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string warden_binary() {
  return std::string(WARDEN_BINARY_DIR) + "/bin/warden";
}

// `args` is pasted into a shell command line; `stdin_text` is fed on standard input;
// `env` ("NAME=value NAME2=value ") is set for the command through env(1).
inline RunResult run_warden(const std::string& args, const std::string& stdin_text = "",
                            const std::string& env = "") {
  const auto dir = std::filesystem::temp_directory_path() / ("warden-cli-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto in = dir / "in", out = dir / "out", err = dir / "err";
  write_file_atomic(in, stdin_text);
  const std::string cmd = (env.empty() ? std::string() : "env " + env + " ") + warden_binary() + " " + args +
                          " <" + in.string() + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace warden::testing
