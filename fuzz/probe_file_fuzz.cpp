// Fuzzes the guard's probe files (src/guard/probe_file.hpp): the input is a file's body, to
// which the fuzzer appends the right checksum, so that mutations reach the parser's own
// checks instead of stopping at the checksum. Anything parsed must serialise to a file that
// parses again to the same exemplars.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fnv1a.hpp"
#include "guard/probe_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  bytes += fmt::format("checksum {:016x}\n", warden::fnv1a(bytes));
  try {
    const warden::guard::FittedProbe p = warden::guard::parse_probe(bytes, "fuzz");
    const warden::guard::FittedProbe again =
        warden::guard::parse_probe(warden::guard::serialise_probe(p), "again");
    if (again.texts != p.texts || again.attack != p.attack || again.dim != p.dim) std::abort();
  } catch (const warden::Error&) {
  }
  return 0;
}
