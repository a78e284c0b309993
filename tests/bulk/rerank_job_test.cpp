// The rerank side of the runner: RerankScorer's modes and scores, and resume by record (all
// pairs of a passage) with the score sink, on a fake cross-encoder whose logit is a simple
// function of the pair's text.

#include <gtest/gtest.h>

#include <stdexcept>

#include "bulk/checkpoint.hpp"
#include "bulk/job.hpp"
#include "bulk/score_writer.hpp"
#include "bulk/scorers.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/json_writer.hpp"

namespace warden::bulk {
namespace {

namespace fs = std::filesystem;

class FakeReranker final : public classify::SequenceClassifier {
 public:
  explicit FakeReranker(std::size_t labels = 1) {
    for (std::size_t i = 0; i < labels; ++i) labels_.push_back("LABEL_" + std::to_string(i));
  }
  [[nodiscard]] std::string_view id() const noexcept override { return "fake"; }
  [[nodiscard]] classify::ClassifierKind kind() const noexcept override {
    return classify::ClassifierKind::Reranker;
  }
  [[nodiscard]] const std::vector<std::string>& labels() const noexcept override { return labels_; }
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return 512; }
  [[nodiscard]] embed::PreparedInput prepare(std::string_view text, std::optional<std::string_view> pair,
                                             const embed::InputOptions& /*options*/) const override {
    embed::PreparedInput p;
    p.text = std::string(text) + "|" + std::string(pair.value_or(""));
    p.tokens = p.text.size();
    return p;
  }
  void classify_prepared(std::span<const embed::PreparedInput* const> inputs,
                         std::span<float> logits) const override {
    ++batches;
    if (batches == crash_at) throw std::runtime_error("simulated crash");
    for (std::size_t i = 0; i < inputs.size(); ++i) logits[i] = logit(inputs[i]->text);
  }
  static float logit(const std::string& text) { return static_cast<float>(text.size() % 13) - 6.0F; }

  mutable int batches = 0;
  int crash_at = -1;

 private:
  std::vector<std::string> labels_;
};

class RerankJob : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("warden-bulk-rerank-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    input_ = dir_ / "passages.txt";
    std::string text;
    for (int i = 0; i < 100; ++i)
      text += "passage " + std::string(static_cast<std::size_t>(i % 17), 'p') + "\n";
    write_file_atomic(input_, text);
  }
  void TearDown() override { fs::remove_all(dir_); }

  JobResult run(const fs::path& output, const RerankScorer& scorer, bool resume) {
    const Fingerprint fingerprint{{"command", "rerank"}};
    const auto state = progress_path(output);
    const std::optional<Checkpoint> resumed = start_job(state, {output}, fingerprint, resume, false);
    RecordReader reader(input_.string(), ReaderOptions{}, resumed ? resumed->input : ReaderPosition{});
    ScoreSinkOptions sink_options;
    sink_options.path = output;
    sink_options.resume = resumed.has_value();
    sink_options.query_ids = {"\"q1\"", "\"q2\"", "\"q3\""};
    auto sink = make_score_sink(sink_options);
    JobOptions options;
    options.batch_size = 5;
    options.chunk_units = 30;  // 10 passages x 3 queries a chunk
    options.checkpoint_seconds = 1e9;
    return run_job(reader, scorer, *sink, options, Checkpointing{state, fingerprint}, nullptr,
                   resumed ? resumed->records : 0);
  }

  fs::path dir_, input_;
};

TEST_F(RerankJob, ScoresAreTheSigmoidOfTheLogitPerQuery) {
  const FakeReranker model;
  const std::vector<std::string> queries{"q one", "second query", "3"};
  const RerankScorer scorer(model, queries, false);
  EXPECT_EQ(scorer.units_per_record(), 3U);
  run(dir_ / "scores.jsonl", scorer, false);
  const std::string out = read_file(dir_ / "scores.jsonl");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 300);
  // The first passage ("passage "), against each query in order.
  JsonWriter expected;
  expected.begin_object().key("id").raw("0").key("query_id").raw("\"q2\"").key("score");
  expected.value(classify::sigmoid(FakeReranker::logit("second query|passage "))).end_object();
  const std::size_t second_line = out.find('\n') + 1;
  EXPECT_EQ(out.substr(second_line, out.find('\n', second_line) - second_line), expected.str());
}

TEST_F(RerankJob, RawScoresAreLogitsAndPairsUseTheRecordsQuery) {
  const FakeReranker model;
  const RerankScorer raw(model, {}, true);
  EXPECT_EQ(raw.units_per_record(), 1U);
  Record r;
  r.text = "passage";
  r.pair = "query";
  embed::PreparedInput p[1];
  raw.prepare(r, p);
  EXPECT_EQ(p[0].text, "query|passage");
  float row[1] = {2.5F};
  raw.finish(row);
  EXPECT_EQ(row[0], 2.5F);
  const RerankScorer scored(model, {}, false);
  scored.finish(row);
  EXPECT_EQ(row[0], classify::sigmoid(2.5F));
  EXPECT_FLOAT_EQ(classify::sigmoid(0.0F), 0.5F);
}

TEST_F(RerankJob, ClassifiersWithSeveralLabelsAreRefused) {
  const FakeReranker classifier(3);
  try {
    const RerankScorer scorer(classifier, {}, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("3 labels"), std::string::npos);
  }
}

TEST_F(RerankJob, ResumeAfterACrashIsByteIdentical) {
  const std::vector<std::string> queries{"q one", "second query", "3"};
  FakeReranker plain;
  run(dir_ / "reference.jsonl", RerankScorer(plain, queries, false), false);
  FakeReranker crashing;
  crashing.crash_at = 15;  // in the third chunk of 6 batches
  const fs::path out = dir_ / "out.jsonl";
  EXPECT_THROW(run(out, RerankScorer(crashing, queries, false), false), std::runtime_error);
  const auto checkpoint = load_checkpoint(progress_path(out));
  ASSERT_TRUE(checkpoint);
  EXPECT_EQ(checkpoint->records, 20U);
  {
    std::FILE* f = std::fopen(out.c_str(), "ab");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"id\":\"half a li", f);
    std::fclose(f);
  }
  FakeReranker resumed;
  const JobResult r = run(out, RerankScorer(resumed, queries, false), true);
  EXPECT_EQ(r.records, 100U);
  EXPECT_EQ(resumed.batches, 48);  // 80 passages x 3 queries / 5
  EXPECT_EQ(read_file(out), read_file(dir_ / "reference.jsonl"));
}

}  // namespace
}  // namespace warden::bulk
