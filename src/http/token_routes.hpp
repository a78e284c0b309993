#pragma once
// TEI's /tokenize and /decode: bodies, parsers and handlers.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/app.hpp"
#include "http/body_fields.hpp"

namespace warden::http {

// TEI POST /tokenize: {"inputs": str | [str], "add_special_tokens": true, "prompt_name"}.
struct TokenizeRequest {
  std::vector<std::string> inputs;
  bool single = false;  // `inputs` was one string: the response is still a list of lists (TEI)
  bool add_special_tokens = true;
  std::optional<std::string> prompt_name;
  std::string model;  // empty when absent
};
TokenizeRequest parse_tokenize(std::string_view body);

// TEI POST /decode: {"ids": [ids] | [[ids],...], "skip_special_tokens": true}.
struct DecodeRequest {
  std::vector<std::vector<std::uint32_t>> ids;
  bool single = false;  // `ids` was one flat list
  bool skip_special_tokens = true;
  std::string model;  // empty when absent
};
DecodeRequest parse_decode(std::string_view body);

// token_routes.cpp: TEI's /tokenize and /decode.
void tokenize(App& app, std::shared_ptr<Call> call, std::string_view body);
void decode(App& app, std::shared_ptr<Call> call, std::string_view body);

}  // namespace warden::http
