#include "bulk/checkpoint.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/file.hpp"

namespace warden::bulk {
namespace {

namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("warden-bulk-checkpoint-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    out_ = dir_ / "out.jsonl";
    state_ = progress_path(out_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Checkpoint sample() const {
    Checkpoint c;
    c.fingerprint = {{"model", "m"}, {"dim", "8"}};
    c.records = 3;
    c.input = {120, 3, 5};
    c.files = {{out_, 10}};
    return c;
  }

  static ErrorKind kind_of(const std::function<void()>& f, std::string* message = nullptr) {
    try {
      f();
    } catch (const Error& e) {
      if (message != nullptr) *message = e.what();
      return e.kind();
    }
    ADD_FAILURE() << "no error";
    return ErrorKind::Internal;
  }

  fs::path dir_, out_, state_;
};

TEST_F(CheckpointTest, SavesAndLoadsBack) {
  EXPECT_EQ(state_.filename(), "out.jsonl.progress.json");
  EXPECT_FALSE(load_checkpoint(state_));
  save_checkpoint(state_, sample());
  EXPECT_FALSE(fs::exists(state_.string() + ".tmp"));
  const auto c = load_checkpoint(state_);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->fingerprint, sample().fingerprint);
  EXPECT_EQ(c->records, 3U);
  EXPECT_EQ(c->input.offset, 120U);
  EXPECT_EQ(c->input.index, 3U);
  EXPECT_EQ(c->input.line, 5U);
  ASSERT_EQ(c->files.size(), 1U);
  EXPECT_EQ(c->files[0].first, out_);
  EXPECT_EQ(c->files[0].second, 10U);
}

TEST_F(CheckpointTest, CorruptStateIsAnError) {
  write_file_atomic(state_, "{\"records\": 1}");
  EXPECT_EQ(kind_of([&] { (void)load_checkpoint(state_); }), ErrorKind::CorruptFile);
}

TEST_F(CheckpointTest, ResumeRefusesAnotherJob) {
  write_file_atomic(out_, "0123456789");
  save_checkpoint(state_, sample());
  Fingerprint other = sample().fingerprint;
  other[1].second = "16";
  std::string message;
  EXPECT_EQ(kind_of([&] { (void)start_job(state_, {out_}, other, true, false); }, &message),
            ErrorKind::InvalidArgument);
  EXPECT_NE(message.find("another job (dim was '8', now '16')"), std::string::npos) << message;
  Fingerprint more = sample().fingerprint;
  more.emplace_back("extra", "x");
  EXPECT_EQ(kind_of([&] { (void)start_job(state_, {out_}, more, true, false); }), ErrorKind::InvalidArgument);
}

TEST_F(CheckpointTest, ResumeCutsTheOutputBackToTheCheckpoint) {
  write_file_atomic(out_, "0123456789garbage after the checkpoint");
  save_checkpoint(state_, sample());
  const auto c = start_job(state_, {out_}, sample().fingerprint, true, false);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->records, 3U);
  EXPECT_EQ(read_file(out_), "0123456789");
  // An output shorter than recorded cannot be resumed.
  write_file_atomic(out_, "01234");
  EXPECT_EQ(kind_of([&] { (void)start_job(state_, {out_}, sample().fingerprint, true, false); }),
            ErrorKind::CorruptFile);
}

TEST_F(CheckpointTest, StartRules) {
  const Fingerprint f = sample().fingerprint;
  // Nothing there: a fresh start, with or without --resume.
  EXPECT_FALSE(start_job(state_, {out_}, f, false, false));
  EXPECT_FALSE(start_job(state_, {out_}, f, true, false));
  // A finished output (no state): refused unless --overwrite.
  write_file_atomic(out_, "done");
  std::string message;
  EXPECT_EQ(kind_of([&] { (void)start_job(state_, {out_}, f, false, false); }, &message),
            ErrorKind::InvalidArgument);
  EXPECT_NE(message.find("exists; pass --overwrite"), std::string::npos) << message;
  EXPECT_EQ(kind_of([&] { (void)start_job(state_, {out_}, f, true, false); }, &message),
            ErrorKind::InvalidArgument);
  EXPECT_NE(message.find("a finished job, or not one of ours"), std::string::npos) << message;
  EXPECT_FALSE(start_job(state_, {out_}, f, false, true));
  // An unfinished job: refused without --resume or --overwrite.
  write_file_atomic(out_, "0123456789");
  save_checkpoint(state_, sample());
  EXPECT_EQ(kind_of([&] { (void)start_job(state_, {out_}, f, false, false); }, &message),
            ErrorKind::InvalidArgument);
  EXPECT_NE(message.find("unfinished job; pass --resume or --overwrite"), std::string::npos) << message;
  EXPECT_FALSE(start_job(state_, {out_}, f, false, true));
  EXPECT_FALSE(fs::exists(state_));
}

}  // namespace
}  // namespace warden::bulk
