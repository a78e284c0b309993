#pragma once
// The hub API's answer about one revision of a repo (GET /api/models/{repo}/revision/{rev}):
// the commit and the file names. Internal to the hub layer; its own file so that the fuzzer
// (fuzz/hub_api_fuzz.cpp) can reach it. The answer is untrusted: its names become paths
// under the cache, so every one must be a plain relative path.

#include <string>
#include <string_view>
#include <vector>

namespace warden::hub::detail {

struct RepoInfo {
  std::string commit;              // 40 lowercase hex digits
  std::vector<std::string> files;  // relative paths: no "..", ".", empty parts, '\\', NUL or leading '/'
};

// Error(CorruptFile) saying what is wrong when the body is not JSON, has no 40-hex "sha",
// no "siblings" array, a sibling without "rfilename", or an unsafe path.
RepoInfo parse_repo_info(std::string_view body);

// Whether `p` is a relative path that stays inside the folder it is joined to.
bool safe_relative_path(std::string_view p);

}  // namespace warden::hub::detail
