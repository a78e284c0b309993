// The warden executable: parses the command line and runs one subcommand. Errors thrown
// below (warden::Error) stop here and become one line on stderr and an exit code.

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/literal_args.hpp"
#include "core/error.hpp"

namespace {

int exit_code_for(warden::ErrorKind kind) {
  switch (kind) {
    case warden::ErrorKind::InvalidArgument:
    case warden::ErrorKind::NotFound:
    case warden::ErrorKind::Unsupported:
      return warden::cli::kExitUsage;
    default:
      return warden::cli::kExitFailure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App root{"Warden: embeddings, reranking and guarding on the CPU", "warden"};
  root.require_subcommand(1);
  root.set_version_flag("--version", "warden " WARDEN_VERSION);
  std::vector<warden::cli::Command> commands;
  commands.push_back(warden::cli::add_embed_command(root));
  commands.push_back(warden::cli::add_convert_use_command(root));
  commands.push_back(warden::cli::add_serve_command(root));
  commands.push_back(warden::cli::add_guard_command(root));
  commands.push_back(warden::cli::add_guard_eval_command(root));
  commands.push_back(warden::cli::add_pull_command(root));
  commands.push_back(warden::cli::add_quantize_command(root));
  commands.push_back(warden::cli::add_rerank_command(root));

  warden::cli::unprotect_options(root);
  try {
    std::vector<std::string> args = warden::cli::protect_arguments(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes its arguments last first
    root.parse(args);
  } catch (const CLI::ParseError& e) {
    const int code = root.exit(e);
    return code == 0 ? 0 : warden::cli::kExitUsage;
  }

  try {
    for (auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
  } catch (const warden::Error& e) {
    fmt::print(stderr, "warden: error: {}\n", e.what());
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    fmt::print(stderr, "warden: internal error: {}\n", e.what());
    return warden::cli::kExitFailure;
  }
  return warden::cli::kExitUsage;
}
