#include "cli/literal_args.hpp"

#include <algorithm>
#include <string_view>

namespace warden::cli {
namespace {

// The mark: one trailing unit separator (U+001F). A value is marked when it ends in ']'
// (what CLI11 would split) or already ends in the mark (so that removing one mark is
// always the exact inverse), hence a marked value never ends in ']' and an unmarked one
// never ends in the mark.
constexpr char kMark = '\x1F';

bool needs_mark(std::string_view value) {
  return !value.empty() && (value.back() == ']' || value.back() == kMark);
}

}  // namespace

std::vector<std::string> protect_arguments(int argc, const char* const* argv) {
  std::vector<std::string> args;
  args.reserve(argc > 1 ? static_cast<std::size_t>(argc - 1) : 0U);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // `--name=[a,b]` hands CLI11 the part after '=', which ends where the argument does;
    // either way only the last byte decides.
    if (needs_mark(arg)) arg.push_back(kMark);
    args.push_back(std::move(arg));
  }
  return args;
}

std::string unprotect(std::string value) {
  if (!value.empty() && value.back() == kMark) value.pop_back();
  return value;
}

void unprotect_options(CLI::App& app) {
  for (CLI::Option* option : app.get_options([](CLI::Option*) { return true; })) {
    if (option->get_type_size() == 0) continue;  // flags hold no text
      // CLI11 puts a transform first, ahead of the option's own checks. GCC 12 sees a null
      // std::function inside the vector insert CLI11 does here, which cannot happen.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
    option->transform([](std::string value) { return unprotect(std::move(value)); }, "", "literal");
#pragma GCC diagnostic pop
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) unprotect_options(*sub);
}

}  // namespace warden::cli
