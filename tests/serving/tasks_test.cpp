// The task API without a transport: which model a request runs on (choose_model), and tasks
// run on a runtime over hashing embedders — the typed result, the refusals as faults (thrown
// before any model when the request alone is at fault, delivered through `then` otherwise),
// the lease and substitution a task's end carries.
#include "serving/tasks/tasks.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "embed/hashing_embedder.hpp"
#include "serving/model_manager.hpp"
#include "serving/runtime.hpp"
#include "serving/tasks/task_error.hpp"

namespace warden::serving::tasks {
namespace {

using namespace std::chrono_literals;

ModelSpec hashing_spec(const std::string& name) {
  ModelSpec spec;
  spec.name = name;
  spec.source = "builtin";
  spec.load = [] { return make_loaded_model(std::make_unique<embed::HashingEmbedder>(), 100); };
  return spec;
}

// The fault of a task's error; fails the test when it is none or another exception.
Fault fault_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const TaskError& e) {
    return e.fault();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a TaskError: " << e.what();
  }
  return Fault::LoadFailed;
}

TEST(ChooseModel, ExactThenRequestedThenTheKindsDefault) {
  ModelManager models(ModelManagerOptions{});
  models.add(hashing_spec("first"));
  models.add(hashing_spec("second"));
  const auto embed = {ModelKind::Embedding};

  // A pinned name is taken as it is, known or not.
  EXPECT_EQ(choose_model(models, {"second", "first"}, embed, false).name, "second");
  EXPECT_EQ(choose_model(models, {"nobody", {}}, embed, false).name, "nobody");
  // A served name the body gives is taken.
  ChosenModel c = choose_model(models, {{}, "second"}, embed, false);
  EXPECT_EQ(c.name, "second");
  EXPECT_TRUE(c.substituted.empty());
  // An unknown one is replaced by the default, and says so; with strict names it is kept.
  c = choose_model(models, {{}, "text-embedding-3-small"}, embed, false);
  EXPECT_EQ(c.name, "first");
  EXPECT_EQ(c.substituted, "text-embedding-3-small");
  EXPECT_EQ(choose_model(models, {{}, "text-embedding-3-small"}, embed, true).name, "text-embedding-3-small");
  // No model of the kind: the first model (the task then refuses its kind).
  EXPECT_EQ(choose_model(models, {}, {ModelKind::Reranker}, false).name, "first");

  ModelManager none(ModelManagerOptions{});
  EXPECT_TRUE(choose_model(none, {}, embed, false).name.empty());
}

class TasksTest : public ::testing::Test {
 protected:
  TasksTest() {
    models_.add(hashing_spec("hash"));
    RuntimeOptions o;
    o.limits.max_batch = 4;
    o.limits.max_response_floats = 3 * embed::HashingEmbedder::kDim;
    runtime_ = std::make_unique<Runtime>(models_, o, nullptr);
  }

  // What a test keeps of a task's end: the Finished, with the run's record copied while
  // `then` runs (Finished::run points into the pipeline's run, valid only until then).
  template <class R>
  struct Kept : Finished<R> {
    bool ran = false;
    bool computed = false;
    std::size_t total_tokens = 0;
  };
  // Runs `start` with a Then that hands its Finished over, and waits for it.
  template <class R, class Start>
  Kept<R> finish(Start start) {
    auto promise = std::make_shared<std::promise<Kept<R>>>();
    std::future<Kept<R>> done = promise->get_future();
    start([promise](Finished<R>& f) {
      Kept<R> k;
      static_cast<Finished<R>&>(k) = f;
      k.ran = f.run != nullptr;
      if (k.ran) {
        k.computed = f.run->computed;
        k.total_tokens = f.run->total_tokens;
      }
      k.run = nullptr;
      promise->set_value(std::move(k));
    });
    EXPECT_EQ(done.wait_for(10s), std::future_status::ready);
    return done.get();
  }

  static Embed texts(std::vector<std::string> list) {
    Embed task;
    for (std::string& t : list) task.inputs.push_back({std::move(t), {}, false});
    return task;
  }

  ModelManager models_{ModelManagerOptions{}};
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(TasksTest, EmbedGivesFinishedRowsTheRunsRecordAndTheLease) {
  Embed task = texts({"hello world", "a second text"});
  task.dimensions = 16;
  Context c;
  c.model.requested = "text-embedding-3-small";
  auto f = finish<Embeddings>([&](Then<Embeddings> then) { runtime_->tasks().embed(c, task, then); });
  ASSERT_FALSE(f.error);
  ASSERT_TRUE(f.value);
  EXPECT_EQ(f.value->rows(), 2U);
  EXPECT_EQ(f.value->dim(), 16U);
  // Cut to 16 values (Matryoshka; the cut's normalisation is serving/results' own test).
  ASSERT_NE(f.lease, nullptr);
  EXPECT_EQ(f.lease->spec().name, "hash");
  EXPECT_EQ(f.substituted, "text-embedding-3-small");
  ASSERT_TRUE(f.ran);
  EXPECT_TRUE(f.computed);
  EXPECT_GT(f.total_tokens, 0U);
}

TEST_F(TasksTest, WhatTheRequestAloneGetsWrongIsThrownBeforeAnyModel) {
  Tasks& t = runtime_->tasks();
  const Then<Embeddings> never = [](Finished<Embeddings>&) { ADD_FAILURE() << "then was called"; };
  try {
    t.embed({}, texts({"a", ""}), never);
    ADD_FAILURE() << "an empty text was embedded";
  } catch (const TaskError& e) {
    EXPECT_EQ(e.fault(), Fault::Empty);
    EXPECT_EQ(e.param(), "inputs");
    EXPECT_NE(std::string(e.what()).find("inputs[1]"), std::string::npos) << e.what();
  }
  try {
    t.embed({}, texts({"a", "b", "c", "d", "e"}), never);
    ADD_FAILURE() << "a batch over the limit was embedded";
  } catch (const TaskError& e) {
    EXPECT_EQ(e.fault(), Fault::Invalid);
    EXPECT_NE(std::string(e.what()).find("maximum allowed batch size 4"), std::string::npos) << e.what();
  }
}

TEST_F(TasksTest, WhatNeedsTheModelArrivesThroughThen) {
  Tasks& t = runtime_->tasks();
  // `dimensions` past the model's.
  Embed wide = texts({"a"});
  wide.dimensions = embed::HashingEmbedder::kDim + 1;
  auto f = finish<Embeddings>([&](Then<Embeddings> then) { t.embed({}, wide, then); });
  EXPECT_EQ(fault_of(f.error), Fault::Invalid);
  EXPECT_NE(f.lease, nullptr);  // the model that refused is named
  // An answer past the response limit (3 vectors allowed), refused before computing.
  f = finish<Embeddings>([&](Then<Embeddings> then) { t.embed({}, texts({"a", "b", "c", "d"}), then); });
  EXPECT_EQ(fault_of(f.error), Fault::TooLarge);
  EXPECT_FALSE(f.ran);
  // The hashing embedder has no classifier head: reranking on it is the wrong kind.
  Rerank r;
  r.queries = {"q"};
  r.texts = {"a"};
  auto scores = finish<std::vector<float>>([&](Then<std::vector<float>> then) { t.rerank({}, r, then); });
  EXPECT_EQ(fault_of(scores.error), Fault::ModelCannot);
  // A pinned model nobody serves.
  Context unknown;
  unknown.model.exact = "nobody";
  f = finish<Embeddings>([&](Then<Embeddings> then) { t.embed(unknown, texts({"a"}), then); });
  EXPECT_EQ(fault_of(f.error), Fault::UnknownModel);
  EXPECT_EQ(f.lease, nullptr);
}

TEST(TasksWithoutModels, NoModelIsThrown) {
  ModelManager models(ModelManagerOptions{});
  Runtime runtime(models, {}, nullptr);
  Embed task;
  task.inputs.push_back({"a", {}, false});
  try {
    runtime.tasks().embed({}, task, [](Finished<Embeddings>&) { ADD_FAILURE() << "then was called"; });
    ADD_FAILURE() << "embedded with no model";
  } catch (const TaskError& e) {
    EXPECT_EQ(e.fault(), Fault::NoModel);
  }
}

}  // namespace
}  // namespace warden::serving::tasks
