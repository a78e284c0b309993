// Every family of the registry against the fixture generator, table-driven: each family has a
// generator entry whose tiny folder loads as that family (a family added without one fails
// here), each family that runs a *ForSequenceClassification class loads the generator's
// classifier of it with its three labels, and a config naming a class no family runs is
// refused as unsupported.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "core/error.hpp"
#include "model/encoder_model.hpp"
#include "model/families/registry.hpp"
#include "model/family_fixture.hpp"

namespace warden::model {
namespace {

using fixtures::Head;

bool has_classifier_class(const families::Family& family) {
  for (const families::FamilyClass& c : family.classes) {
    if (c.role == families::ClassRole::Classifier) return true;
  }
  return false;
}

// The generator's architectures whose folders the encoder loads (all but static).
std::map<const families::Family*, std::string_view> generator_entries() {
  std::map<const families::Family*, std::string_view> entries;
  for (const std::string_view arch : fixtures::transformer_architectures()) {
    testing::TempDir tmp;
    const auto model = load_encoder_model(testing::write_family(tmp, arch, Head::None));
    EXPECT_NE(model->family, nullptr) << arch;
    if (model->family != nullptr) entries.emplace(model->family, arch);
  }
  return entries;
}

TEST(FamilyConformance, EveryFamilyHasAGeneratorEntryThatLoadsAsIt) {
  const auto entries = generator_entries();
  EXPECT_EQ(entries.size(), families::all().size());
  for (const families::Family* f : families::all()) {
    EXPECT_TRUE(entries.contains(f)) << f->name << " has no warden-fixture architecture that loads as it";
  }
}

TEST(FamilyConformance, EveryClassifierFamilyLoadsTheGeneratorsClassifier) {
  for (const auto& [family, arch] : generator_entries()) {
    if (!has_classifier_class(*family) || family->yes_no_reranker) continue;  // its head: the LM's yes/no
    testing::TempDir tmp;
    const auto model = load_encoder_model(testing::write_family(tmp, arch, Head::Classifier));
    EXPECT_EQ(model->family, family) << family->name;
    ASSERT_TRUE(model->head.has_value()) << family->name;
    EXPECT_EQ(model->head->labels(), 3U) << family->name;
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
