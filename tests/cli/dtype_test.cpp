// Choosing a precision: the names resolve_precision accepts (--dtype, WARDEN_DTYPE,
// POST /admin/models), and `warden serve` refusing a bad --dtype at start-up with exit code 2
// and a message that says what was wrong.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "catalog/model_catalog.hpp"
#include "cli/run_warden.hpp"
#include "core/error.hpp"
#include "kernels/dense.hpp"

namespace warden {
namespace {

TEST(Dtype, ResolvePrecisionAcceptsTheNamesAndTheirAliases) {
  for (const std::string_view name : {"float32", "fp32", "f32", "float"}) {
    EXPECT_EQ(catalog::resolve_precision(name), Precision::Float32) << name;
  }
  for (const std::string_view name : {"int8", "i8", "qint8"}) {
    EXPECT_EQ(catalog::resolve_precision(name), Precision::Int8) << name;
  }
  EXPECT_EQ(catalog::resolve_precision("auto"), fastest_precision());
  // Each precision's name parses back to it.
  for (const Precision p : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
    EXPECT_EQ(parse_precision(precision_name(p)), p);
  }
}

TEST(Dtype, ResolvePrecisionRejectsOtherNamesListingTheChoices) {
  for (const std::string_view name :
       {"fp64", "float64", "int4", "fp16", "INT8", "", " int8", "int8 ", "auto8"}) {
    SCOPED_TRACE(std::string(name));
    try {
      (void)catalog::resolve_precision(name);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      const std::string what = e.what();
      EXPECT_NE(what.find("'" + std::string(name) + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("float32, bfloat16, int8 or auto"), std::string::npos) << what;
    }
  }
}

// bfloat16 and its alias resolve (every CPU runs it: AVX-512 BF16, else widened to float32).
TEST(Dtype, Bfloat16Resolves) {
  for (const std::string_view name : {"bfloat16", "bf16"}) {
    EXPECT_EQ(parse_precision(name), Precision::BFloat16);
    EXPECT_EQ(catalog::resolve_precision(name), Precision::BFloat16);
  }
}

// `warden serve ARGS` with the environment `env`; a server that wrongly started would never
// return, so timeout(1) bounds it (exit 124).
testing::RunResult serve(const std::string& args, const std::string& env = "") {
  return testing::run_warden("serve " + args, "", (env.empty() ? "" : env + " ") + "timeout 20");
}

// A bad --dtype stops the server before it listens: exit 2, naming what was wrong.
TEST(Dtype, ServeRefusesAnUnknownDtypeOrModelName) {
  auto r = serve("--model hashing-ngram-256 --port 0 --dtype nosuch");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nosuch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("float32, bfloat16, int8 or auto"), std::string::npos) << r.err;

  r = serve("--model a=hashing-ngram-256 --port 0 --dtype unknownalias=int8");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no --model is called unknownalias"), std::string::npos) << r.err;

  r = serve("--model a=hashing-ngram-256 --port 0 --dtype a=fp64");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'fp64'"), std::string::npos) << r.err;

  // The environment variable is checked the same way.
  r = serve("--model hashing-ngram-256 --port 0", "WARDEN_DTYPE=fp64");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'fp64'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace warden
