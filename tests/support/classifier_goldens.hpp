#pragma once
// The PyTorch goldens of the sequence-classification fixtures (bert-reranker,
// xlm-roberta-reranker, distilbert-classifier, ..., and the yes/no reranker qwen3-reranker, whose
// one logit is logit_yes - logit_no), read for the tests that check the
// classifier and the /rerank, /v1/rerank and /predict routes against them, and their model
// folders regenerated with warden-fixture exactly as the goldens record.

#include <simdjson.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/file.hpp"
#include "support/golden_fixture.hpp"

namespace warden::testing {

struct ClassifierCase {
  std::string text;
  std::optional<std::string> pair;  // the second text of a pair case
  std::vector<std::uint32_t> ids;
  std::vector<double> logits;
  std::vector<double> scores;  // the reference's sigmoid (one label) or softmax
};

struct ClassifierGolden {
  std::string name;
  std::vector<ClassifierCase> cases;
};

inline ClassifierGolden read_classifier_golden(const std::string& name) {
  simdjson::dom::parser parser;
  const std::string text = read_file(std::filesystem::path(WARDEN_TEST_DATA) / "goldens" / (name + ".json"));
  const simdjson::dom::element golden = parser.parse(text);
  ClassifierGolden g;
  g.name = name;
  for (const auto c : golden["cases"].get_array()) {
    ClassifierCase k;
    const simdjson::dom::element input = c["input"];
    if (input.is_string()) {
      k.text = std::string(std::string_view(input));
    } else {
      const simdjson::dom::array a = input.get_array();
      k.text = std::string(std::string_view(a.at(0)));
      k.pair = std::string(std::string_view(a.at(1)));
    }
    for (const auto x : c["ids"].get_array()) k.ids.push_back(static_cast<std::uint32_t>(std::uint64_t(x)));
    simdjson::dom::element yes_no;
    if (c["yes_no"].get(yes_no) == simdjson::SUCCESS) {
      // A yes/no reranker's one logit is log-odds of "yes" over "no"; its score the softmax's "yes".
      k.logits.push_back(double(yes_no["logit_yes"]) - double(yes_no["logit_no"]));
      k.scores.push_back(double(yes_no["score"]));
    } else {
      for (const auto x : c["logits"].get_array()) k.logits.push_back(double(x));
      for (const auto x : c["scores"].get_array()) k.scores.push_back(double(x));
    }
    g.cases.push_back(std::move(k));
  }
  return g;
}

// Regenerates the golden's model folder under the temp directory; returns its path.
inline std::filesystem::path make_classifier_fixture(const std::string& name) {
  const std::string text = read_file(std::filesystem::path(WARDEN_TEST_DATA) / "goldens" / (name + ".json"));
  // "fixture": {"command": "warden-fixture ..."}: a plain string without escapes.
  constexpr std::string_view kKey = "\"command\": \"";
  const std::size_t at = text.find(kKey);
  if (at == std::string::npos) throw std::runtime_error(name + ": the golden has no fixture command");
  const std::size_t begin = at + kKey.size();
  const std::string command = text.substr(begin, text.find('"', begin) - begin);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("warden-classifier-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  run_fixture_command(command, dir);
  return dir;
}

}  // namespace warden::testing
