#pragma once
// Progress of a bulk job on stderr (docs/bulk.md): on a terminal a one-line bar redrawn
// in place at most ~10 times a second; otherwise a plain line every interval and a summary
// at the end. The clock and the output are injectable so that tests can drive them.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace warden::bulk {

enum class ProgressMode { Auto, Bar, Lines, None };

std::optional<ProgressMode> parse_progress_mode(std::string_view name) noexcept;

struct ProgressState {
  std::uint64_t records = 0;           // done, including those of an earlier run resumed
  std::uint64_t records_at_start = 0;  // done before this run (a resume)
  std::uint64_t bytes = 0;             // input bytes consumed, likewise
  std::uint64_t bytes_at_start = 0;
  std::optional<std::uint64_t> total_bytes;  // the input's size when known
  double elapsed = 0;                        // seconds since this run started
};

// "45.2% 12345 records 812.3 rec/s elapsed 0:15 ETA 0:18" (percent and ETA only with a
// known size): the body of both the bar and the plain lines.
std::string format_progress(const ProgressState& state);
// "1:02:03" / "2:03" / "0:05".
std::string format_duration(double seconds);

class Progress {
 public:
  using Clock = std::function<double()>;  // monotonic seconds
  using Output = std::function<void(std::string_view)>;

  // Auto chooses Bar when stderr is a terminal, else Lines. Default clock: steady_clock;
  // default output: stderr.
  Progress(ProgressMode mode, std::optional<std::uint64_t> total_bytes, double interval_seconds,
           std::uint64_t records_at_start = 0, std::uint64_t bytes_at_start = 0, Clock clock = {},
           Output output = {});

  // Called as work completes; draws when due.
  void update(std::uint64_t records, std::uint64_t bytes);
  // The final line (the bar's last state and a newline, or the summary).
  void finish(std::uint64_t records, std::uint64_t bytes, bool interrupted);

  [[nodiscard]] ProgressMode mode() const noexcept { return mode_; }

 private:
  void draw(bool final);
  ProgressMode mode_;
  double interval_;
  Clock clock_;
  Output output_;
  ProgressState state_;
  double start_ = 0;
  double last_draw_ = 0;
};

}  // namespace warden::bulk
