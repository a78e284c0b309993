// The hub API's answer (src/hub/repo_info.hpp) is untrusted bytes from the network whose
// file names become paths under the cache: any input must parse or throw warden::Error,
// and every accepted name must be a safe relative path.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "hub/repo_info.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const warden::hub::detail::RepoInfo info = warden::hub::detail::parse_repo_info(body);
    if (info.commit.size() != 40) std::abort();
    for (const auto& f : info.files) {
      // An independent check of what safe_relative_path promises: no part is "." or "..",
      // none is empty, and nothing could leave the folder (a name like "..x" is fine).
      if (f.empty() || f.front() == '/' || f.find('\\') != std::string::npos) std::abort();
      std::size_t start = 0;
      while (start <= f.size()) {
        const std::size_t end = std::min(f.find('/', start), f.size());
        const std::string_view part = std::string_view(f).substr(start, end - start);
        if (part.empty() || part == "." || part == "..") std::abort();
        start = end + 1;
      }
    }
  } catch (const warden::Error&) {
  }
  return 0;
}
