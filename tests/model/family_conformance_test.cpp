// Every family of the registry against the fixture generator and the goldens, table-driven: each
// family has a generator entry whose tiny folder loads as that family (a family added without
// one fails here), goldens of its embedder and of its head, and each family that runs a
// *ForSequenceClassification class loads the generator's classifier of it with its three
// labels; every family refuses a corrupt shared key by name, and a config naming a class no
// family runs is refused as unsupported. (Quantised parity iterates the families that quantise
// ahead: quantize_test.cpp.)

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/encoder_model.hpp"
#include "model/families/registry.hpp"
#include "model/family_fixture.hpp"

namespace warden::model {
namespace {

using fixtures::Head;

std::map<const families::Family*, std::string_view> generator_entries() {
  std::map<const families::Family*, std::string_view> entries;
  for (const auto& [family, arch] : testing::generator_families()) entries.emplace(family, arch);
  return entries;
}

// The warden-fixture command of every golden in tests/data/goldens/.
std::vector<std::string> golden_commands() {
  std::vector<std::string> commands;
  simdjson::dom::parser parser;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(WARDEN_TEST_DATA) / "goldens")) {
    if (entry.path().extension() != ".json") continue;
    const simdjson::dom::element golden = parser.load(entry.path().string());
    commands.emplace_back(std::string_view(golden["fixture"]["command"]));
  }
  return commands;
}

bool has_golden(const std::vector<std::string>& commands, std::string_view arch, std::string_view head) {
  const std::string a = fmt::format("--arch {} ", arch);
  const std::string h = fmt::format("--head {} ", head);
  for (const std::string& c : commands) {
    if (c.find(a) != std::string::npos && c.find(h) != std::string::npos) return true;
  }
  return false;
}

TEST(FamilyConformance, EveryFamilyHasAGeneratorEntryThatLoadsAsIt) {
  const auto entries = generator_entries();
  EXPECT_EQ(entries.size(), families::all().size());
  for (const families::Family* f : families::all()) {
    EXPECT_TRUE(entries.contains(f)) << f->name << " has no warden-fixture architecture that loads as it";
  }
}

TEST(FamilyConformance, EveryFamilyHasGoldensOfItsEmbedderAndOfItsHead) {
  const std::vector<std::string> commands = golden_commands();
  for (const auto& [family, arch] : generator_entries()) {
    EXPECT_TRUE(has_golden(commands, arch, "none")) << family->name << ": no golden of its embedder";
    if (!family->rerank_template.empty()) {
      EXPECT_TRUE(has_golden(commands, arch, "reranker")) << family->name << ": no golden of its reranker";
    } else if (testing::has_classifier_class(*family)) {
      EXPECT_TRUE(has_golden(commands, arch, "reranker") || has_golden(commands, arch, "classifier"))
          << family->name << ": no golden of its classifier";
    }
  }
}

TEST(FamilyConformance, EveryClassifierFamilyLoadsTheGeneratorsClassifier) {
  for (const auto& [family, arch] : generator_entries()) {
    if (!testing::has_classifier_class(*family)) continue;  // an LLM reranker's head is its LM's
    testing::TempDir tmp;
    const auto model = load_encoder_model(testing::write_family(tmp, arch, Head::Classifier));
    EXPECT_EQ(model->family, family) << family->name;
    ASSERT_TRUE(model->head.has_value()) << family->name;
    EXPECT_EQ(model->head->labels(), 3U) << family->name;
  }
}

TEST(FamilyConformance, EveryFamilyNamesANegativeVocabularySize) {
  for (const auto& [family, arch] : generator_entries()) {
    SCOPED_TRACE(family->name);
    testing::TempDir tmp;
    testing::expect_load_error(
        testing::family_with_config(tmp, arch, Head::None, "\"vocab_size\": ", "\"vocab_size\": -"),
        ErrorKind::CorruptFile, "vocab_size");
  }
}

TEST(FamilyConformance, AClassNoFamilyRunsIsUnsupported) {
  for (const auto& [family, arch] : generator_entries()) {
    testing::TempDir tmp;
    const std::string written = fixtures::architecture_class(arch, Head::None);
    const auto dir =
        testing::family_with_config(tmp, arch, Head::None, "\"" + written + "\"", "\"NotAModel\"");
    try {
      (void)load_encoder_model(dir);
      ADD_FAILURE() << family->name << ": NotAModel was loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << family->name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("NotAModel"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace warden::model
