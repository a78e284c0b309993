// DeBERTa-v2 folders that do not fit their config are clear load errors naming what is
// wrong (the goldens check the arithmetic: encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/file.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/temp_dir.hpp"

namespace warden::model {
namespace {

// Writes a DeBERTa-v2 classifier fixture with `from` replaced by `to` in its config.json.
std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  fixtures::FixtureOptions options;
  options.arch = fixtures::Arch::DebertaV2;
  options.head = fixtures::Head::Classifier;
  const auto dir = tmp / "model";
  fixtures::write_fixture(options, dir);
  std::string config = read_file(dir / "config.json");
  const auto at = config.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) config.replace(at, from.size(), to);
  write_file_atomic(dir / "config.json", config);
  return dir;
}

void expect_load_error(const std::filesystem::path& dir, ErrorKind kind, const std::string& names) {
  try {
    (void)load_encoder_model(dir);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(Deberta, ARelativeTableOfTheWrongSizeNamesTheTensor) {
  const testing::TempDir tmp;
  expect_load_error(with_config(tmp, "\"position_buckets\": 32", "\"position_buckets\": 64"),
                    ErrorKind::CorruptFile, "encoder.rel_embeddings.weight");
}

TEST(Deberta, WhatIsNotRunIsRefusedByName) {
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"pooler_dropout\": 0", "\"conv_kernel_size\": 3"),
                      ErrorKind::CorruptFile, "conv_kernel_size");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"c2p\"", "\"p2p\""), ErrorKind::CorruptFile, "p2p");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"pooler_hidden_act\": \"gelu\"", "\"pooler_hidden_act\": \"swish\""),
                      ErrorKind::Unsupported, "pooler_hidden_act");
  }
}

}  // namespace
}  // namespace warden::model
