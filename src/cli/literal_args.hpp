#pragma once
// Command-line values are literal. CLI11 2.1 reads a value written `[a,b]` as a list for
// every option that takes several values — the positional texts of `embed` and `guard`
// among them — so `warden embed -- "[1, 2]"` would embed "1" and " 2". These two steps
// keep every value byte for byte: `protect_arguments` marks each value CLI11 would split
// before it parses, and `unprotect_options` makes every option of the app drop the mark
// again as its first transform runs.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace warden::cli {

// argv[1..] with every value that ends in ']' (alone, or after an option's `=`) marked so
// that CLI11 does not split it; pass the result to CLI::App::parse(std::vector) reversed.
std::vector<std::string> protect_arguments(int argc, const char* const* argv);

// Gives every value-taking option of `app` and its subcommands a transform that removes
// the mark protect_arguments added; call it once every option is declared.
void unprotect_options(CLI::App& app);

// The inverse of the mark on one value (exposed for the tests).
std::string unprotect(std::string value);

}  // namespace warden::cli
