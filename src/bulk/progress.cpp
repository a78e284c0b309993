#include "bulk/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace warden::bulk {

std::optional<ProgressMode> parse_progress_mode(std::string_view name) noexcept {
  if (name == "auto") return ProgressMode::Auto;
  if (name == "bar") return ProgressMode::Bar;
  if (name == "lines") return ProgressMode::Lines;
  if (name == "none") return ProgressMode::None;
  return std::nullopt;
}

std::string format_duration(double seconds) {
  const auto total = static_cast<std::uint64_t>(std::max(0.0, std::floor(seconds)));
  const std::uint64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

std::string format_progress(const ProgressState& state) {
  std::string out;
  const double rate =
      state.elapsed > 0 ? static_cast<double>(state.records - state.records_at_start) / state.elapsed : 0.0;
  if (state.total_bytes && *state.total_bytes > 0) {
    const double fraction =
        std::min(1.0, static_cast<double>(state.bytes) / static_cast<double>(*state.total_bytes));
    out += fmt::format("{:5.1f}% ", 100.0 * fraction);
  }
  out +=
      fmt::format("{} records {:.1f} rec/s elapsed {}", state.records, rate, format_duration(state.elapsed));
  if (state.total_bytes && state.elapsed > 0 && state.bytes > state.bytes_at_start) {
    const double byte_rate = static_cast<double>(state.bytes - state.bytes_at_start) / state.elapsed;
    const double left =
        static_cast<double>(*state.total_bytes > state.bytes ? *state.total_bytes - state.bytes : 0);
    out += fmt::format(" ETA {}", format_duration(left / byte_rate));
  }
  return out;
}

Progress::Progress(ProgressMode mode, std::optional<std::uint64_t> total_bytes, double interval_seconds,
                   std::uint64_t records_at_start, std::uint64_t bytes_at_start, Clock clock, Output output)
    : mode_(mode), interval_(interval_seconds), clock_(std::move(clock)), output_(std::move(output)) {
  if (mode_ == ProgressMode::Auto)
    mode_ = ::isatty(::fileno(stderr)) != 0 ? ProgressMode::Bar : ProgressMode::Lines;
  if (!clock_) {
    clock_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
  }
  if (!output_) {
    output_ = [](std::string_view s) {
      std::fwrite(s.data(), 1, s.size(), stderr);
      std::fflush(stderr);
    };
  }
  state_.total_bytes = total_bytes;
  state_.records = state_.records_at_start = records_at_start;
  state_.bytes = state_.bytes_at_start = bytes_at_start;
  start_ = last_draw_ = clock_();
}

void Progress::update(std::uint64_t records, std::uint64_t bytes) {
  if (mode_ == ProgressMode::None) return;
  const double now = clock_();
  const double every = mode_ == ProgressMode::Bar ? 0.1 : interval_;
  if (now - last_draw_ < every) return;
  last_draw_ = now;
  state_.records = records;
  state_.bytes = bytes;
  state_.elapsed = now - start_;
  draw(false);
}

void Progress::finish(std::uint64_t records, std::uint64_t bytes, bool interrupted) {
  if (mode_ == ProgressMode::None) return;
  state_.records = records;
  state_.bytes = bytes;
  state_.elapsed = clock_() - start_;
  draw(true);
  if (mode_ == ProgressMode::Bar) output_("\n");
  const double rate =
      state_.elapsed > 0 ? static_cast<double>(records - state_.records_at_start) / state_.elapsed : 0.0;
  const std::uint64_t this_run = records - state_.records_at_start;
  const std::string resumed =
      state_.records_at_start > 0 ? fmt::format(" ({} in this run)", this_run) : std::string();
  output_(fmt::format("warden: {} {} records{} in {} ({:.1f} records/s)\n",
                      interrupted ? "stopped after" : "done:", records, resumed,
                      format_duration(state_.elapsed), rate));
}

void Progress::draw(bool final) {
  if (mode_ == ProgressMode::Bar) {
    // \r back to the start, the line, then erase what a longer previous line left.
    std::string gauge;
    if (state_.total_bytes && *state_.total_bytes > 0) {
      const auto filled = static_cast<std::size_t>(
          20 * std::min<std::uint64_t>(state_.bytes, *state_.total_bytes) / *state_.total_bytes);
      gauge = fmt::format("[{}{}] ", std::string(filled, '#'), std::string(20 - filled, ' '));
    }
    output_(fmt::format("\r{}{}\x1b[K", gauge, format_progress(state_)));
  } else if (!final) {
    output_(fmt::format("warden: {}\n", format_progress(state_)));
  }
}

}  // namespace warden::bulk
