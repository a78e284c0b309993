#pragma once
// Runs the built warden executable through the shell and captures what it printed.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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

// The same, with `args` handed to the executable as they are (no shell): for arguments
// whose bytes matter (brackets, quotes, newlines, leading dashes).
inline RunResult run_warden_argv(const std::vector<std::string>& args, const std::string& stdin_text = "") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("warden-cli-argv-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto in = dir / "in", out = dir / "out", err = dir / "err";
  write_file_atomic(in, stdin_text);
  const std::string binary = warden_binary();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  RunResult r;
  if (posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  r.out = read_file(out);
  r.err = read_file(err);
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace warden::testing
