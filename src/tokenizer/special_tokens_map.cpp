#include "tokenizer/special_tokens_map.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "tokenizer/json.hpp"

namespace warden::tokenizer {

namespace {

using detail::json::Value;

// Reads the seven names from one file into `map`, overriding what is there.
void read_into(const std::filesystem::path& path, SpecialTokensMap& map) {
  if (!std::filesystem::exists(path)) return;
  const std::string text = read_file(path);
  simdjson::dom::parser parser;
  const Value root = detail::json::parse(parser, text, path.string());
  if (!root.is_object())
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: not a JSON object", path.string()));
  const std::array<std::pair<const char*, std::optional<std::string>*>, 7> fields{{
      {"bos_token", &map.bos},
      {"eos_token", &map.eos},
      {"unk_token", &map.unk},
      {"sep_token", &map.sep},
      {"pad_token", &map.pad},
      {"cls_token", &map.cls},
      {"mask_token", &map.mask},
  }};
  for (const auto& [key, slot] : fields) {
    const auto v = root.find(key);
    if (!v) continue;
    if (v->is_string()) {
      *slot = std::string(v->as_string(key));
    } else if (v->is_object()) {
      *slot = v->get_string("content");
    } else {
      throw Error(
          ErrorKind::CorruptFile,
          fmt::format("{}: \"{}\" must be a token string or an object with \"content\"", path.string(), key));
    }
  }
}

}  // namespace

SpecialTokensMap read_special_tokens_map(const std::filesystem::path& dir) {
  SpecialTokensMap map;
  read_into(dir / "tokenizer_config.json", map);
  read_into(dir / "special_tokens_map.json", map);
  return map;
}

}  // namespace warden::tokenizer
