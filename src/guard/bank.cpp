#include "guard/bank.hpp"

#include <cstdlib>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/utf8.hpp"

#ifndef WARDEN_GUARD_DEFAULT_BANK
#define WARDEN_GUARD_DEFAULT_BANK ""
#endif
// Where a package installs the bank (cmake/WardenPackaging.cmake); empty in developer builds.
#ifndef WARDEN_GUARD_INSTALLED_BANK
#define WARDEN_GUARD_INSTALLED_BANK ""
#endif

namespace warden::guard {

namespace {

[[noreturn]] void fail(std::string_view source, std::size_t line, std::string_view what) {
  throw Error(ErrorKind::InvalidInput, fmt::format("{}:{}: {}", source, line, what));
}

// A string field, or nullopt when absent; anything else present is an error.
std::optional<std::string_view> string_field(simdjson::dom::object object, std::string_view name,
                                             std::string_view source, std::size_t line) {
  simdjson::dom::element element;
  if (object[name].get(element) != simdjson::SUCCESS) return std::nullopt;
  std::string_view value;
  if (element.get(value) != simdjson::SUCCESS)
    fail(source, line, fmt::format("\"{}\" must be a string", name));
  return value;
}

}  // namespace

std::vector<BankEntry> Bank::split(bool test) const {
  std::vector<BankEntry> out;
  for (const BankEntry& e : entries) {
    if (e.test == test) out.push_back(e);
  }
  return out;
}

Bank parse_bank(std::string_view jsonl, std::string_view source) {
  Bank bank;
  bank.source = std::string(source);
  simdjson::dom::parser parser;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < jsonl.size()) {
    std::size_t end = jsonl.find('\n', pos);
    if (end == std::string_view::npos) end = jsonl.size();
    std::string_view line = jsonl.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (bank.entries.size() == kMaxBankEntries) {
      fail(source, line_no, fmt::format("more than {} entries", kMaxBankEntries));
    }
    // simdjson wants its padding: copy the line into a padded buffer.
    const simdjson::padded_string padded(line);
    simdjson::dom::element doc;
    if (const auto err = parser.parse(padded).get(doc); err != simdjson::SUCCESS) {
      fail(source, line_no, fmt::format("not valid JSON ({})", simdjson::error_message(err)));
    }
    simdjson::dom::object object;
    if (doc.get(object) != simdjson::SUCCESS) fail(source, line_no, "expected a JSON object");

    BankEntry entry;
    entry.line = line_no;
    const auto text = string_field(object, "text", source, line_no);
    if (!text) fail(source, line_no, "missing \"text\"");
    if (text->empty()) fail(source, line_no, "\"text\" is empty");
    if (text->size() > kMaxBankTextBytes) {
      fail(source, line_no, fmt::format("\"text\" is longer than {} bytes", kMaxBankTextBytes));
    }
    if (const auto bad = utf8::find_invalid(*text)) {
      fail(source, line_no, fmt::format("\"text\" is not valid UTF-8 (byte {})", *bad));
    }
    entry.text = std::string(*text);

    const auto label = string_field(object, "label", source, line_no);
    if (!label) fail(source, line_no, "missing \"label\"");
    if (*label == "attack") {
      entry.attack = true;
    } else if (*label != "benign") {
      fail(source, line_no, fmt::format("\"label\" must be \"attack\" or \"benign\", not \"{}\"", *label));
    }
    if (const auto category = string_field(object, "category", source, line_no)) {
      entry.category = std::string(*category);
    }
    if (const auto split = string_field(object, "split", source, line_no)) {
      if (*split == "test") {
        entry.test = true;
      } else if (*split != "train") {
        fail(source, line_no, fmt::format("\"split\" must be \"train\" or \"test\", not \"{}\"", *split));
      }
    }
    bank.entries.push_back(std::move(entry));
  }
  // A text in both splits would be scored on what it was fitted on: the held-out figures
  // would lie.
  std::unordered_map<std::string_view, const BankEntry*> first;
  for (const BankEntry& e : bank.entries) {
    const auto [it, fresh] = first.emplace(e.text, &e);
    if (!fresh && it->second->test != e.test) {
      fail(source, e.line,
           fmt::format("the same text is in the {} split at line {}: a text may not be both fitted on and "
                       "held out",
                       it->second->test ? "test" : "train", it->second->line));
    }
  }
  return bank;
}

Bank load_bank(const std::filesystem::path& path) {
  return parse_bank(read_file(path), path.string());
}

std::filesystem::path default_bank_path() {
  if (const char* env = std::getenv("WARDEN_GUARD_BANK"); env != nullptr && *env != '\0') return env;
  // A packaged build (WARDEN_PACKAGE) looks where the package installs the bank, not in the
  // source tree it was built from.
  const std::string_view installed = WARDEN_GUARD_INSTALLED_BANK;
  const std::filesystem::path built_in = installed.empty() ? WARDEN_GUARD_DEFAULT_BANK : installed;
  std::error_code ec;
  if (built_in.empty() || !std::filesystem::is_regular_file(built_in, ec)) {
    throw Error(ErrorKind::NotFound,
                fmt::format("the guard's bank was not found (looked for '{}'); pass --guard-bank FILE or set "
                            "WARDEN_GUARD_BANK",
                            built_in.string()));
  }
  return built_in;
}

}  // namespace warden::guard
