#pragma once
// A sample of the shipped guard bank for tests that fit the probe on a real embedder: every
// `step`-th row of its train split. Fitting on the whole bank embeds ~4,000 windows, minutes
// under the sanitizers; the sample still holds every category (the bank is shuffled), and
// the tests check behaviour, not the shipped figures (docs/guard.md measures those).

#include <cstddef>

#include "guard/bank.hpp"

namespace warden::testing {

inline guard::Bank shipped_bank_sample(std::size_t step) {
  guard::Bank all = guard::load_bank(guard::default_bank_path());
  guard::Bank out;
  out.source = all.source;
  std::size_t i = 0;
  for (guard::BankEntry& e : all.entries) {
    if (!e.test && i++ % step == 0) out.entries.push_back(std::move(e));
  }
  return out;
}

}  // namespace warden::testing
