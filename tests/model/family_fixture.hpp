#pragma once
// The model-family tests' fixtures: a warden-fixture folder of one architecture and head,
// written in-process, the same with one edit to its config.json (for the load errors), and
// the generator's architecture of each model family.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fixtures/fixture.hpp"
#include "model/families/family.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::testing {

// tmp/model: the tiny preset of `arch` with `head`, seed 0.
inline std::filesystem::path write_family(const TempDir& tmp, std::string_view arch, fixtures::Head head) {
  fixtures::FixtureOptions options;
  options.arch = arch;
  options.head = head;
  const auto dir = tmp / "model";
  fixtures::write_fixture(options, dir);
  return dir;
}

// write_family's folder with the first `from` in its config.json replaced by `to`.
inline std::filesystem::path family_with_config(const TempDir& tmp, std::string_view arch,
                                                fixtures::Head head, const std::string& from,
                                                const std::string& to) {
  const auto dir = write_family(tmp, arch, head);
  edit_config(dir, from, to);
  return dir;
}

// The last hidden states of one input of `tokens` ids (start, start + step, ...), run alone.
inline std::vector<float> hidden_states(const model::EncoderModel& m, std::size_t tokens, std::uint32_t start,
                                        std::uint32_t step) {
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < tokens; ++i) ids.push_back(start + step * i);
  model::engine::TokenBatch batch;
  batch.add(ids);
  m.encoder.validate(batch);
  model::engine::EncoderWorkspace ws;
  const auto h = m.encoder.forward(batch, ws, nullptr);
  return {h.begin(), h.end()};
}

// Whether the family runs a *ForSequenceClassification class (its head).
inline bool has_classifier_class(const model::families::Family& family) {
  for (const model::families::FamilyClass& c : family.classes) {
    if (c.role == model::families::ClassRole::Classifier) return true;
  }
  return false;
}

// The model family each of the generator's transformer architectures loads as, with that
// architecture, in the generator's order (a test failure for one that loads as no family).
inline std::vector<std::pair<const model::families::Family*, std::string_view>> generator_families() {
  std::vector<std::pair<const model::families::Family*, std::string_view>> out;
  for (const std::string_view arch : fixtures::transformer_architectures()) {
    const TempDir tmp;
    const auto model = model::load_encoder_model(write_family(tmp, arch, fixtures::Head::None));
    EXPECT_NE(model->family, nullptr) << arch;
    if (model->family != nullptr) out.emplace_back(model->family, arch);
  }
  return out;
}

}  // namespace warden::testing
