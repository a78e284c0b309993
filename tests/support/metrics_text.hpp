#pragma once
// Reading Prometheus text exposition (what /metrics and MetricsRegistry::render() give) in
// tests.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace warden::testing {

// The value of the first sample line that starts with `prefix` (name and labels); NaN and a
// test failure when there is none.
inline double sample_value(const std::string& text, const std::string& prefix) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    if (line.rfind(prefix + " ", 0) == 0) return std::stod(line.substr(prefix.size() + 1));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  ADD_FAILURE() << "no sample " << prefix << " in:\n" << text;
  return std::nan("");
}

}  // namespace warden::testing
