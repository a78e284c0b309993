#pragma once
// Helpers shared by the test suites that check against tests/data/goldens: running a shell
// command for its output, and regenerating a golden's model folder with the real
// warden-fixture exactly as the golden records it was made.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace warden::testing {

// Standard output of a shell command.
inline std::string capture_command(const std::string& cmd) {
  std::string out;
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  if (!pipe) return out;
  char buf[4096];
  while (const std::size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  return out;
}

// Runs a golden's "fixture.command" ("warden-fixture ... --out DIR") with the built tool,
// writing the folder to `out`. Throws std::runtime_error when the tool fails.
inline void run_fixture_command(std::string_view golden_command, const std::filesystem::path& out) {
  std::string command(golden_command);
  constexpr std::string_view kTool = "warden-fixture";
  if (command.rfind(kTool, 0) != 0 || command.rfind("DIR") == std::string::npos) {
    throw std::runtime_error("not a warden-fixture command: " + command);
  }
  command.replace(0, kTool.size(), std::string(WARDEN_BINARY_DIR) + "/bin/warden-fixture");
  command.replace(command.rfind("DIR"), 3, out.string());
  if (std::system((command + " >/dev/null").c_str()) != 0)
    throw std::runtime_error("fixture failed: " + command);
}

}  // namespace warden::testing
