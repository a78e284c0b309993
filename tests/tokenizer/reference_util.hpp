#pragma once
// Reading the JSONL reference files (HF `tokenizers` outputs) for the tokenizer tests.

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/file.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden::test {

struct RefCase {
  std::string text;
  std::optional<std::string> pair;
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> type_ids;
  std::vector<tokenizer::Offset> offsets;  // code points
  std::vector<std::string> tokens;
  std::vector<std::uint8_t> special_mask, attention_mask;
  std::optional<std::string> decoded;
  bool has_type_ids = false;
  bool add_special = true;
  bool error = false;  // HF refused this input (a truncation error)
};

inline std::string test_data(const std::string& name) {
  return std::string(WARDEN_TEST_DATA) + "/" + name;
}

// One tokenizer.json of each family and layout the tests have (tests/data): what the
// robustness and window tests run through every tokenizer.
inline const std::vector<std::string>& tokenizer_families() {
  static const std::vector<std::string> files = {"bert-base-uncased-tokenizer.json",
                                                 "unigram-use-vocab-tokenizer.json",
                                                 "tokref/bpe-roberta.json",
                                                 "tokref/bpe-llama.json",
                                                 "tokref/bpe-prefix.json",
                                                 "tokref/bpe-suffix.json",
                                                 "tokref/unigram-xlmr.json",
                                                 "tokref/unigram-bytefallback.json",
                                                 "tokref/wordpiece-split-behaviors.json",
                                                 "tokref/wordpiece-whitespace.json",
                                                 "tokref/bpe-bytelevel-template.json",
                                                 "tokref/wordlevel-nmt.json",
                                                 "tokref/bpe-bytelevel-normalizer.json",
                                                 "tokref/bpe-modernbert.json",
                                                 "tokref/bpe-qwen3.json",
                                                 "tokref/wordpiece-mpnet.json"};
  return files;
}

inline std::vector<RefCase> load_reference(const std::string& path) {
  std::vector<RefCase> out;
  const std::string all = read_file(path);
  simdjson::dom::parser parser;
  std::size_t pos = 0;
  while (pos < all.size()) {
    std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) nl = all.size();
    const std::string line = all.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    simdjson::dom::element d = parser.parse(line);
    RefCase c;
    c.text = std::string(std::string_view(d["text"]));
    simdjson::dom::element pair;
    if (d["text_pair"].get(pair) == simdjson::SUCCESS && pair.is_string())
      c.pair = std::string(std::string_view(pair));
    bool add = true;
    if (d["add_special_tokens"].get(add) == simdjson::SUCCESS) c.add_special = add;
    simdjson::dom::element err;
    if (d["error"].get(err) == simdjson::SUCCESS) {
      c.error = true;
      out.push_back(std::move(c));
      continue;
    }
    for (auto v : d["ids"].get_array()) c.ids.push_back(static_cast<std::uint32_t>(std::int64_t(v)));
    simdjson::dom::array arr;
    if (d["special_tokens_mask"].get(arr) == simdjson::SUCCESS) {
      for (auto v : arr) c.special_mask.push_back(static_cast<std::uint8_t>(std::int64_t(v)));
    }
    if (d["attention_mask"].get(arr) == simdjson::SUCCESS) {
      for (auto v : arr) c.attention_mask.push_back(static_cast<std::uint8_t>(std::int64_t(v)));
    }
    std::string_view dec;
    if (d["decoded"].get(dec) == simdjson::SUCCESS) c.decoded = std::string(dec);
    if (d["type_ids"].get(arr) == simdjson::SUCCESS) {
      c.has_type_ids = true;
      for (auto v : arr) c.type_ids.push_back(static_cast<std::uint32_t>(std::int64_t(v)));
    }
    if (d["offsets"].get(arr) == simdjson::SUCCESS) {
      for (auto v : arr) {
        simdjson::dom::array o = v.get_array();
        c.offsets.push_back(tokenizer::Offset{static_cast<std::uint32_t>(std::int64_t(o.at(0))),
                                              static_cast<std::uint32_t>(std::int64_t(o.at(1)))});
      }
    }
    if (d["tokens"].get(arr) == simdjson::SUCCESS) {
      for (auto v : arr) c.tokens.emplace_back(std::string_view(v));
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Compares an encoding with a reference line; returns "" or a description of the mismatch.
inline std::string compare(const RefCase& c, const tokenizer::Encoding& e) {
  std::string why;
  if (e.ids != c.ids) why += " ids";
  if (c.has_type_ids && e.type_ids != c.type_ids) why += " type_ids";
  if (!c.offsets.empty() && e.char_offsets != c.offsets) why += " offsets";
  if (!c.tokens.empty() && e.tokens != c.tokens) why += " tokens";
  if (!c.special_mask.empty() && e.special_tokens_mask != c.special_mask) why += " special_tokens_mask";
  if (!c.attention_mask.empty() && e.attention_mask != c.attention_mask) why += " attention_mask";
  return why;
}

}  // namespace warden::test
