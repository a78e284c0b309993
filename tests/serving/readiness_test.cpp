// GET /health's verdict (serving/readiness.hpp): not ready while starting or after a failed
// self-check, with the reason; not ready while every served model has failed to load.

#include "serving/readiness.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "embed/hashing_embedder.hpp"

namespace warden::serving {
namespace {

ModelSpec spec_of(const std::string& name, bool fails) {
  ModelSpec spec;
  spec.name = name;
  spec.source = "builtin";
  spec.semantic = false;
  spec.estimated_bytes = 100;
  spec.load = [fails] {
    if (fails) throw Error(ErrorKind::Io, "weights unreadable");
    return make_loaded_model(std::make_unique<embed::HashingEmbedder>(), 100);
  };
  return spec;
}

TEST(Readiness, StartingThenReadyWithTheReasonMeanwhile) {
  ModelManager models(ModelManagerOptions{});
  models.add(spec_of("a", false));
  Readiness r("loading models");
  Health h = health(&r, models);
  EXPECT_FALSE(h.ok);
  EXPECT_EQ(h.reason, "starting: loading models");
  r.starting("self-check");
  EXPECT_EQ(health(&r, models).reason, "starting: self-check");
  r.ready();
  h = health(&r, models);
  EXPECT_TRUE(h.ok) << h.reason;
  EXPECT_TRUE(health(nullptr, models).ok);
}

TEST(Readiness, AFailureStandsAndSaysWhy) {
  ModelManager models(ModelManagerOptions{});
  models.add(spec_of("a", false));
  Readiness r;
  r.failed("self-check of model a failed: its vector is not finite");
  r.ready();                // too late: a failure is not undone by a later step
  r.starting("something");  // nor hidden
  const Health h = health(&r, models);
  EXPECT_FALSE(h.ok);
  EXPECT_EQ(h.reason, "self-check of model a failed: its vector is not finite");
}

TEST(Readiness, NotReadyWhileEveryModelHasFailedToLoad) {
  ModelManager models(ModelManagerOptions{});
  models.add(spec_of("a", true));
  models.add(spec_of("b", true));
  EXPECT_TRUE(health(nullptr, models).ok);  // not loaded yet: a request would load them
  EXPECT_THROW(models.preload({"a"}), std::exception);
  EXPECT_TRUE(health(nullptr, models).ok);  // b may still serve
  EXPECT_THROW(models.preload({"b"}), std::exception);
  const Health h = health(nullptr, models);
  EXPECT_FALSE(h.ok);
  EXPECT_NE(h.reason.find("no model can serve: a: "), std::string::npos) << h.reason;
  EXPECT_NE(h.reason.find("; b: "), std::string::npos) << h.reason;
  EXPECT_NE(h.reason.find("weights unreadable"), std::string::npos) << h.reason;
  // One model that loads is enough.
  models.add(spec_of("c", false));
  EXPECT_TRUE(health(nullptr, models).ok);
}

}  // namespace
}  // namespace warden::serving
