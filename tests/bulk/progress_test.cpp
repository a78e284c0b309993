#include "bulk/progress.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace warden::bulk {
namespace {

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(format_duration(0.4), "0:00");
  EXPECT_EQ(format_duration(75.9), "1:15");
  EXPECT_EQ(format_duration(3723), "1:02:03");
}

TEST(Progress, LineHasPercentRateAndEta) {
  ProgressState s;
  s.records = 500;
  s.bytes = 250;
  s.total_bytes = 1000;
  s.elapsed = 10;
  EXPECT_EQ(format_progress(s), " 25.0% 500 records 50.0 rec/s elapsed 0:10 ETA 0:30");
  s.total_bytes.reset();
  EXPECT_EQ(format_progress(s), "500 records 50.0 rec/s elapsed 0:10");
}

TEST(Progress, ResumedRunsCountTheirOwnRate) {
  ProgressState s;
  s.records = 600;
  s.records_at_start = 500;
  s.bytes = 600;
  s.bytes_at_start = 500;
  s.total_bytes = 1000;
  s.elapsed = 10;
  // 100 records in 10 s; 400 bytes left at 10 bytes/s.
  EXPECT_EQ(format_progress(s), " 60.0% 600 records 10.0 rec/s elapsed 0:10 ETA 0:40");
}

TEST(Progress, LinesModeWritesEveryIntervalAndASummary) {
  double now = 100.0;
  std::vector<std::string> out;
  Progress p(
      ProgressMode::Lines, 1000, 10.0, 0, 0, [&] { return now; },
      [&](std::string_view s) { out.emplace_back(s); });
  now = 105;
  p.update(50, 100);
  EXPECT_TRUE(out.empty());  // not yet 10 s
  now = 110;
  p.update(100, 200);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0], "warden:  20.0% 100 records 10.0 rec/s elapsed 0:10 ETA 0:40\n");
  now = 115;
  p.update(150, 300);
  EXPECT_EQ(out.size(), 1U);
  now = 120;
  p.finish(400, 1000, false);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[1], "warden: done: 400 records in 0:20 (20.0 records/s)\n");
}

TEST(Progress, TheSummaryOfAResumedRunSaysWhatThisRunDid) {
  double now = 0.0;
  std::string out;
  Progress p(
      ProgressMode::Lines, 1000, 10.0, 100, 500, [&] { return now; }, [&](std::string_view s) { out += s; });
  now = 4;
  p.finish(140, 1000, false);
  EXPECT_EQ(out, "warden: done: 140 records (40 in this run) in 0:04 (10.0 records/s)\n");
}

TEST(Progress, BarRedrawsInPlaceAtMostTenTimesASecond) {
  double now = 0.0;
  std::vector<std::string> out;
  Progress p(
      ProgressMode::Bar, std::nullopt, 10.0, 0, 0, [&] { return now; },
      [&](std::string_view s) { out.emplace_back(s); });
  now = 0.05;
  p.update(1, 1);
  EXPECT_TRUE(out.empty());
  now = 0.2;
  p.update(2, 2);
  now = 0.25;
  p.update(3, 3);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].front(), '\r');
  EXPECT_NE(out[0].find("2 records"), std::string::npos);
  p.finish(3, 3, true);
  ASSERT_EQ(out.size(), 4U);
  EXPECT_EQ(out[2], "\n");
  EXPECT_NE(out[3].find("stopped after 3 records"), std::string::npos);
}

TEST(Progress, TheBarHasAGaugeWhenTheSizeIsKnown) {
  double now = 0.0;
  std::vector<std::string> out;
  Progress p(
      ProgressMode::Bar, 1000, 10.0, 0, 0, [&] { return now; },
      [&](std::string_view s) { out.emplace_back(s); });
  now = 1;
  p.update(10, 500);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0], "\r[##########          ]  50.0% 10 records 10.0 rec/s elapsed 0:01 ETA 0:01\x1b[K");
}

TEST(Progress, NoneIsSilent) {
  std::vector<std::string> out;
  Progress p(
      ProgressMode::None, 10, 0.001, 0, 0, [] { return 5.0; },
      [&](std::string_view s) { out.emplace_back(s); });
  p.update(1, 1);
  p.finish(1, 1, false);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace warden::bulk
