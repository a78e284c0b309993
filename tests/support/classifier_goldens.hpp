#pragma once
// The PyTorch goldens of the sequence-classification fixtures (bert-reranker,
// xlm-roberta-reranker, distilbert-classifier, ..., and the LLM rerankers qwen3-reranker,
// qwen2-mxbai-reranker and gemma-reranker, whose one logit is read from the LM head by their
// template: tools/golden/llm_rerank_reference.py), read for the tests that check the
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
  std::string instruction;          // an LLM reranker's instruction for the case; empty: its default
  std::vector<std::uint32_t> ids;
  std::vector<double> logits;
  std::vector<double> scores;  // the reference's sigmoid (one label) or softmax
};

struct ClassifierGolden {
  std::string name;
  std::string rerank_template;  // an LLM reranker's template (classify/rerank_template.hpp); empty: none
  std::vector<ClassifierCase> cases;
};

inline ClassifierGolden read_classifier_golden(const std::string& name) {
  simdjson::dom::parser parser;
  const std::string text = read_file(std::filesystem::path(WARDEN_TEST_DATA) / "goldens" / (name + ".json"));
  const simdjson::dom::element golden = parser.parse(text);
  ClassifierGolden g;
  g.name = name;
  simdjson::dom::element llm;
  if (golden["reference"]["llm_rerank"].get(llm) == simdjson::SUCCESS) {
    g.rerank_template = std::string(std::string_view(llm["template"]));
  }
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
    simdjson::dom::element lm;
    if (c["lm_score"].get(lm) == simdjson::SUCCESS) {
      // An LLM reranker's one logit (one token's, or one's less another's) and its sigmoid.
      k.logits.push_back(double(lm["logit"]));
      k.scores.push_back(double(lm["score"]));
      std::string_view instruction;
      if (c["instruction"].get(instruction) == simdjson::SUCCESS) k.instruction = std::string(instruction);
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
