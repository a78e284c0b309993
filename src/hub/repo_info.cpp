#include "hub/repo_info.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "hub/cache.hpp"

namespace warden::hub::detail {

bool safe_relative_path(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string_view::npos ||
      p.find('\0') != std::string_view::npos) {
    return false;
  }
  std::size_t start = 0;
  while (start <= p.size()) {
    const auto end = std::min(p.find('/', start), p.size());
    const auto part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

RepoInfo parse_repo_info(std::string_view body) {
  const auto bad = [](const std::string& why) { return Error(ErrorKind::CorruptFile, why); };
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  // simdjson reads up to SIMDJSON_PADDING bytes past the end: parse a padded copy.
  const simdjson::padded_string padded(body);
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) throw bad("not JSON");
  RepoInfo info;
  std::string_view sha;
  if (root["sha"].get_string().get(sha) != simdjson::SUCCESS) throw bad("no \"sha\" string");
  if (!is_hex(sha, 40)) throw bad("\"sha\" is not a 40-digit lowercase hex commit");
  info.commit = std::string(sha);
  simdjson::dom::array siblings;
  if (root["siblings"].get_array().get(siblings) != simdjson::SUCCESS) throw bad("no \"siblings\" array");
  for (const auto sibling : siblings) {
    std::string_view name;
    if (sibling["rfilename"].get_string().get(name) != simdjson::SUCCESS)
      throw bad("a sibling has no rfilename");
    if (!safe_relative_path(name)) throw bad(fmt::format("unsafe file path \"{}\"", name));
    info.files.emplace_back(name);
  }
  return info;
}

}  // namespace warden::hub::detail
