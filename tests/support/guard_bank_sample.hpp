#pragma once
// A sample of the shipped guard bank for tests that fit the probe on a real embedder: every
// `step`-th row of its train split. Fitting on the whole bank embeds ~4,000 windows, minutes
// under the sanitizers; the sample still holds every category (the bank is shuffled), and
// the tests check behaviour, not the shipped figures (docs/guard.md measures those).

#include <cstddef>
#include <filesystem>
#include <string>

#include "core/json_writer.hpp"

#include "guard/bank.hpp"

namespace warden::testing {

// With `test_step`, every test_step-th row of the test split too.
inline guard::Bank shipped_bank_sample(std::size_t step, std::size_t test_step = 0) {
  guard::Bank all = guard::load_bank(guard::default_bank_path());
  guard::Bank out;
  out.source = all.source;
  std::size_t i = 0, j = 0;
  for (guard::BankEntry& e : all.entries) {
    if (!e.test && i++ % step == 0)
      out.entries.push_back(std::move(e));
    else if (e.test && test_step != 0 && j++ % test_step == 0)
      out.entries.push_back(std::move(e));
  }
  return out;
}

// The sample the use-lite guard tests fit on (every kSharedFitStep-th train row), and where
// they share that fit
// (the default cache layout under an XDG_CACHE_HOME of the build tree: set XDG_CACHE_HOME to
// shared_fit_home() for the CLI): the first to run fits (minutes under the sanitizers), the
// others load it. The cache's own checks (the bank's key, the exemplars' vectors) refit a
// stale file.
inline std::filesystem::path shared_fit_home() {
  return std::filesystem::path(WARDEN_BINARY_DIR) / "guard-test-xdg";
}
inline std::filesystem::path shared_fit_cache() {
  return shared_fit_home() / "warden" / "guard";
}
inline constexpr std::size_t kSharedFitStep = 3;
inline guard::Bank shared_fit_bank() {
  return shipped_bank_sample(kSharedFitStep);
}

// The bank as JSONL, as parse_bank reads it.
inline std::string bank_jsonl(const guard::Bank& bank) {
  std::string out;
  for (const guard::BankEntry& e : bank.entries) {
    JsonWriter w;
    w.begin_object().key("text").value(e.text).key("label").value(e.attack ? "attack" : "benign");
    w.key("category").value(e.category).key("split").value(e.test ? "test" : "train").end_object();
    out += w.take() + "\n";
  }
  return out;
}

}  // namespace warden::testing
