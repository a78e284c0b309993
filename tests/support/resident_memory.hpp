#pragma once
// This process' resident set in bytes (/proc/self/statm): the in-process servers of the
// hostile-client tests run in it, so a flood that grows the server's memory shows here.

#include <unistd.h>

#include <cstddef>
#include <fstream>

namespace warden::testing {

inline std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace warden::testing
