#pragma once
// The guard's labelled bank: JSONL, one {"text", "label": "attack"|"benign", "category"?,
// "split"?: "train"|"test"} per line. The probe is fitted on the train split (lines
// without a split count as train); guard-eval scores the test split by default.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace warden::guard {

struct BankEntry {
  std::string text;
  bool attack = false;
  std::string category;  // free-form ("instruction_override", "lookalike", ...); may be empty
  bool test = false;     // split == "test"
  std::size_t line = 0;  // 1-based line in the source, for messages
};

struct Bank {
  std::vector<BankEntry> entries;
  std::string source;  // the file it came from, for messages

  [[nodiscard]] std::vector<BankEntry> split(bool test) const;
};

// Limits that keep a hostile or mistaken file from exhausting memory.
inline constexpr std::size_t kMaxBankEntries = 100'000;
inline constexpr std::size_t kMaxBankTextBytes = 64 * 1024;

// Throws Error(InvalidInput) naming `source` and the line for malformed JSON, a missing or
// non-string text, an empty text, invalid UTF-8, a label other than attack/benign, a split
// other than train/test, a text in both splits (naming both lines), or a bank past the
// limits above. Blank lines are skipped.
Bank parse_bank(std::string_view jsonl, std::string_view source);
// Reads and parses a file (Error(NotFound) / Error(Io) from the read).
Bank load_bank(const std::filesystem::path& path);

// The shipped bank: $WARDEN_GUARD_BANK when set, else data/guard/bank.jsonl of the source
// tree this binary was built from (in a packaged build: the package's share/warden/guard/
// bank.jsonl). Error(NotFound) saying to pass --guard-bank when absent.
std::filesystem::path default_bank_path();

}  // namespace warden::guard
