// This machine's roofline alone (bench/roofline.hpp): compute peaks per core and for all
// threads, the DRAM triad, and read bandwidth for working sets of the given sizes. One JSON
// line per working set.
//
//   roofline_bench [--threads N] [--working-sets-mb 1,21,85,512]

#include <cstdio>
#include <string>
#include <vector>

#include "core/thread_pool.hpp"
#include "roofline.hpp"

int main(int argc, char** argv) {
  std::size_t threads = warden::available_cpus();
  std::vector<double> sets{1, 21, 85, 512};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--threads") {
      threads = std::stoul(value);
    } else if (flag == "--working-sets-mb") {
      sets.clear();
      std::size_t pos = 0;
      while (pos < value.size()) {
        std::size_t end = value.find(',', pos);
        if (end == std::string::npos) end = value.size();
        sets.push_back(std::stod(value.substr(pos, end - pos)));
        pos = end + 1;
      }
    } else {
      std::fprintf(stderr, "usage: roofline_bench [--threads N] [--working-sets-mb 1,21,85,512]\n");
      return 2;
    }
  }
  for (const double mb : sets) {
    const auto r = warden::bench::measure_roofline(threads, static_cast<std::size_t>(mb * 1e6));
    std::printf("%s\n", r.json().c_str());
    std::fflush(stdout);
  }
  return 0;
}
