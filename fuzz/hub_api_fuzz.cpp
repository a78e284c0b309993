// The hub API's answer (src/hub/repo_info.hpp) is untrusted bytes from the network whose
// file names become paths under the cache: any input must parse or throw warden::Error,
// and every accepted name must be a safe relative path.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "hub/repo_info.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const warden::hub::detail::RepoInfo info = warden::hub::detail::parse_repo_info(body);
    if (info.commit.size() != 40) std::abort();
    for (const auto& f : info.files) {
      if (!warden::hub::detail::safe_relative_path(f) || f.find("..") == 0) std::abort();
    }
  } catch (const warden::Error&) {
  }
  return 0;
}
