#pragma once
// Each subcommand lives in its own file and registers itself on the root CLI11 app with
// an add_*_command function returning how to run it once the arguments are parsed.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "catalog/model_catalog.hpp"
#include "core/precision.hpp"

namespace warden::cli {

struct Command {
  CLI::App* app = nullptr;   // the subcommand, to test whether it was chosen
  std::function<int()> run;  // returns the process exit code
};

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;        // the work failed (bad input data, I/O)
inline constexpr int kExitUsage = 2;          // the command line was wrong (flags, unknown model)
inline constexpr int kExitInterrupted = 130;  // a bulk job stopped by SIGINT/SIGTERM (resumable)

Command add_embed_command(CLI::App& root);
Command add_convert_use_command(CLI::App& root);
Command add_serve_command(CLI::App& root);
Command add_guard_command(CLI::App& root);
Command add_guard_eval_command(CLI::App& root);
Command add_pull_command(CLI::App& root);
Command add_quantize_command(CLI::App& root);

// --dtype for commands that load their own model: float32, bfloat16, int8 or auto (the
// fastest on this CPU), as `warden serve` reads it; Error(InvalidArgument) naming the flag.
Precision parse_dtype_flag(std::string_view dtype);
// How a command opens its --model (catalog/open_model.hpp), as `warden serve` does: HF ids
// through the hub's environment (HF_ENDPOINT, HF_HUB_CACHE, HF_TOKEN, HF_HUB_OFFLINE), each
// download announced on stderr, the kernels on `pool`, in `dtype`.
catalog::CatalogOptions command_catalog_options(ThreadPool* pool, std::string dtype);
Command add_rerank_command(CLI::App& root);

}  // namespace warden::cli
