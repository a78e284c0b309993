// DeBERTa-v2 folders that do not fit their config are clear load errors naming what is
// wrong (the goldens check the arithmetic: encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/file.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

// Writes a DeBERTa-v2 classifier fixture with `from` replaced by `to` in its config.json.
std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  fixtures::FixtureOptions options;
  options.arch = "deberta-v2";
  options.head = fixtures::Head::Classifier;
  const auto dir = tmp / "model";
  fixtures::write_fixture(options, dir);
  testing::edit_config(dir, from, to);
  return dir;
}

using testing::expect_load_error;

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
    expect_load_error(
        with_config(tmp, "\"pooler_hidden_act\": \"gelu\"", "\"pooler_hidden_act\": \"quick_gelu\""),
        ErrorKind::Unsupported, "pooler_hidden_act");
  }
}

}  // namespace
}  // namespace warden::model
