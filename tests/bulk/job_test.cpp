#include "bulk/job.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "bulk/checkpoint.hpp"
#include "bulk/scorers.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"

namespace warden::bulk {
namespace {

namespace fs = std::filesystem;

// The embed scorer, with hooks that stop the job or crash it on the n-th batch.
class HookedScorer final : public Scorer {
 public:
  explicit HookedScorer(const embed::Embedder& e) : inner_(e) {}
  [[nodiscard]] std::size_t units_per_record() const noexcept override { return inner_.units_per_record(); }
  [[nodiscard]] std::size_t unit_width() const noexcept override { return inner_.unit_width(); }
  void prepare(const Record& r, std::span<embed::PreparedInput> out) const override {
    if (r.text == "poison") throw Error(ErrorKind::InvalidInput, "poisoned");
    inner_.prepare(r, out);
  }
  void compute(std::span<const embed::PreparedInput* const> in, std::span<float> out) const override {
    ++batches;
    if (batches == crash_at) throw std::runtime_error("simulated crash");
    inner_.compute(in, out);
    if (batches == stop_at && stop != nullptr) stop->store(true);
  }
  void finish(std::span<float> row) const override { inner_.finish(row); }

  mutable int batches = 0;
  int crash_at = -1;
  int stop_at = -1;
  std::atomic<bool>* stop = nullptr;

 private:
  EmbedScorer inner_;
};

class BulkJob : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("warden-bulk-job-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    input_ = dir_ / "in.jsonl";
    std::string text;
    for (int i = 0; i < 300; ++i) {
      // Lengths vary so that the length-sorted batches reorder the records.
      texts_.push_back("record " + std::to_string(i) +
                       std::string(static_cast<std::size_t>((i * 37) % 50), 'x'));
      text += "{\"id\": \"r" + std::to_string(i) + "\", \"text\": \"" + texts_.back() + "\"}\n";
    }
    write_file_atomic(input_, text);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One run as the CLI does it; returns the result, or throws what the run threw.
  JobResult run(const fs::path& output, OutputFormat format, bool resume, HookedScorer& scorer,
                std::atomic<bool>* stop = nullptr) {
    const Fingerprint fingerprint{{"model", std::string(embedder_.id())},
                                  {"format", std::string(output_format_name(format))}};
    SinkOptions sink_options;
    sink_options.path = output;
    sink_options.format = format;
    sink_options.dim = embedder_.dim();
    const auto state = progress_path(output);
    const std::optional<Checkpoint> resumed =
        start_job(state, sink_files(sink_options), fingerprint, resume, false);
    ReaderOptions reader_options;
    reader_options.format = InputFormat::Jsonl;
    RecordReader reader(input_.string(), reader_options, resumed ? resumed->input : ReaderPosition{});
    sink_options.resume = resumed.has_value();
    sink_options.rows = resumed ? resumed->records : 0;
    auto sink = make_vector_sink(sink_options);
    JobOptions options;
    options.batch_size = 8;
    options.chunk_units = 64;
    options.checkpoint_seconds = checkpoint_seconds_;
    options.clock = clock_;
    options.stop = stop;
    options.pool = pool_;
    return run_job(reader, scorer, *sink, options, Checkpointing{state, fingerprint}, progress_,
                   resumed ? resumed->records : 0);
  }

  std::string all_bytes(const fs::path& output) {
    return read_file(output) + "|" + read_file(ids_path(output));
  }

  embed::HashingEmbedder embedder_;
  ThreadPool* pool_ = nullptr;
  Progress* progress_ = nullptr;
  double checkpoint_seconds_ = 1e9;
  std::function<double()> clock_;
  fs::path dir_, input_;
  std::vector<std::string> texts_;
};

TEST_F(BulkJob, RowsEqualEmbedderEmbedInInputOrder) {
  HookedScorer scorer(embedder_);
  const fs::path out = dir_ / "out.npy";
  const JobResult r = run(out, OutputFormat::Npy, false, scorer);
  EXPECT_EQ(r.records, 300U);
  EXPECT_FALSE(r.interrupted);
  EXPECT_FALSE(fs::exists(progress_path(out)));
  const std::vector<std::string_view> views(texts_.begin(), texts_.end());
  const Embeddings expected = embedder_.embed(views);
  const std::string bytes = read_file(out);
  ASSERT_EQ(bytes.size(), kNpyHeaderBytes + expected.values().size_bytes());
  EXPECT_EQ(bytes.substr(0, kNpyHeaderBytes), npy_header(300, embedder_.dim()));
  EXPECT_EQ(
      std::memcmp(bytes.data() + kNpyHeaderBytes, expected.values().data(), expected.values().size_bytes()),
      0);
  const std::string ids = read_file(ids_path(out));
  EXPECT_EQ(ids.substr(0, 10), "\"r0\"\n\"r1\"\n");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), '\n'), 300);
}

TEST_F(BulkJob, ResumeAfterACrashIsByteIdentical) {
  for (const OutputFormat format : {OutputFormat::Npy, OutputFormat::Jsonl, OutputFormat::Float16}) {
    SCOPED_TRACE(std::string(output_format_name(format)));
    HookedScorer plain(embedder_);
    const fs::path reference = dir_ / "reference.out";
    run(reference, format, false, plain);
    const std::string expected = read_file(reference);

    const fs::path out = dir_ / "crashed.out";
    HookedScorer crashing(embedder_);
    crashing.crash_at = 20;  // in the third chunk of 8 batches
    EXPECT_THROW(run(out, format, false, crashing), std::runtime_error);
    ASSERT_TRUE(fs::exists(progress_path(out)));
    const auto checkpoint = load_checkpoint(progress_path(out));
    ASSERT_TRUE(checkpoint);
    EXPECT_EQ(checkpoint->records, 128U);  // two whole chunks
    // What a kill -9 may leave past the checkpoint: partial rows, garbage.
    {
      std::FILE* f = std::fopen(out.c_str(), "ab");
      ASSERT_NE(f, nullptr);
      std::fputs("garbage past the checkpoint", f);
      std::fclose(f);
    }
    HookedScorer resumed(embedder_);
    const JobResult r = run(out, format, true, resumed);
    EXPECT_EQ(r.records, 300U);
    EXPECT_EQ(resumed.batches, (300 - 128 + 7) / 8 + 0);  // only the rest was computed
    EXPECT_EQ(read_file(out), expected);
    if (format != OutputFormat::Jsonl) {
      EXPECT_EQ(read_file(ids_path(out)), read_file(ids_path(reference)));
    }
    EXPECT_FALSE(fs::exists(progress_path(out)));
    fs::remove(reference);
    fs::remove(out);
    fs::remove(ids_path(reference));
    fs::remove(ids_path(out));
  }
}

TEST_F(BulkJob, InterruptFinishesTheBatchCheckpointsAndResumesByteIdentical) {
  HookedScorer plain(embedder_);
  const fs::path reference = dir_ / "reference.npy";
  run(reference, OutputFormat::Npy, false, plain);

  const fs::path out = dir_ / "out.npy";
  std::atomic<bool> stop{false};
  HookedScorer stopping(embedder_);
  stopping.stop_at = 11;  // mid-chunk: the batch ends, the complete prefix is written
  stopping.stop = &stop;
  const JobResult first = run(out, OutputFormat::Npy, false, stopping, &stop);
  EXPECT_TRUE(first.interrupted);
  EXPECT_GE(first.records, 64U);
  EXPECT_LT(first.records, 128U);
  const auto checkpoint = load_checkpoint(progress_path(out));
  ASSERT_TRUE(checkpoint);
  EXPECT_EQ(checkpoint->records, first.records);
  // The file is a valid .npy of exactly the rows done.
  const std::string partial = read_file(out);
  EXPECT_EQ(partial.substr(0, kNpyHeaderBytes), npy_header(first.records, embedder_.dim()));
  EXPECT_EQ(partial.size(), kNpyHeaderBytes + first.records * embedder_.dim() * sizeof(float));

  HookedScorer resumed(embedder_);
  const JobResult second = run(out, OutputFormat::Npy, true, resumed);
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(second.records, 300U);
  EXPECT_EQ(all_bytes(out), all_bytes(reference));
}

TEST_F(BulkJob, PreparingOnAPoolChangesNothing) {
  HookedScorer plain(embedder_);
  run(dir_ / "serial.npy", OutputFormat::Npy, false, plain);
  ThreadPool pool(3);
  pool_ = &pool;
  HookedScorer pooled(embedder_);
  run(dir_ / "pooled.npy", OutputFormat::Npy, false, pooled);
  EXPECT_EQ(all_bytes(dir_ / "pooled.npy"), all_bytes(dir_ / "serial.npy"));
  // The first bad record in input order is the one named, whichever thread saw it first.
  std::string text;
  for (int i = 0; i < 50; ++i)
    text += i == 20 || i == 40 ? "{\"text\": \"poison\"}\n" : "{\"text\": \"ok\"}\n";
  write_file_atomic(input_, text);
  HookedScorer failing(embedder_);
  try {
    run(dir_ / "failing.jsonl", OutputFormat::Jsonl, false, failing);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 21 (record 20): poisoned"), std::string::npos) << e.what();
  }
}

// Timed checkpoints inside a chunk (a fake clock ticking a second per call) change nothing in
// the output, and progress counts every record once.
TEST_F(BulkJob, TimedCheckpointsAndProgressCountEachRecordOnce) {
  HookedScorer plain(embedder_);
  run(dir_ / "reference.npy", OutputFormat::Npy, false, plain);
  double now = 0;
  clock_ = [&] { return now += 1.0; };
  checkpoint_seconds_ = 3;
  std::vector<std::uint64_t> reported;
  Progress progress(
      ProgressMode::Lines, fs::file_size(input_), 0.0, 0, 0, [&] { return now; },
      [&](std::string_view line) {
        if (line.find(" records ") != std::string_view::npos && line.find("done") == std::string_view::npos) {
          const std::size_t end = line.find(" records ");
          const std::size_t begin = line.rfind(' ', end - 1) + 1;
          reported.push_back(std::stoull(std::string(line.substr(begin, end - begin))));
        }
      });
  progress_ = &progress;
  HookedScorer timed(embedder_);
  run(dir_ / "timed.npy", OutputFormat::Npy, false, timed);
  EXPECT_EQ(all_bytes(dir_ / "timed.npy"), all_bytes(dir_ / "reference.npy"));
  ASSERT_FALSE(reported.empty());
  EXPECT_TRUE(std::is_sorted(reported.begin(), reported.end()));
  EXPECT_EQ(reported.back(), 300U);
}

TEST_F(BulkJob, BadRecordNamesFileLineAndRecord) {
  write_file_atomic(input_, "{\"text\": \"ok\"}\n\n{\"text\": \"poison\"}\n");
  HookedScorer scorer(embedder_);
  try {
    run(dir_ / "out.jsonl", OutputFormat::Jsonl, false, scorer);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("in.jsonl: line 3 (record 1): poisoned"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace warden::bulk
