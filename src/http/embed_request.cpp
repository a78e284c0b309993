#include "http/embed_request.hpp"

#include <simdjson.h>

#include <algorithm>

#include "http/api_error.hpp"

namespace warden::http {

namespace {

ApiError validation(const std::string& message, std::string param = {}) {
  return ApiError(422, "Validation", message, std::move(param));
}

// Parses body into an object, mapping every simdjson failure to a 422 a client can act on.
simdjson::dom::element parse_object(simdjson::dom::parser& parser, std::string_view body) {
  // allocate() with the body's own size: parse() then never reallocates, so the depth bound
  // set here is the one that applies.
  if (parser.allocate(std::max<std::size_t>(body.size(), 64), kMaxJsonDepth) != simdjson::SUCCESS) {
    throw ApiError(500, "Backend", "could not allocate the JSON parser");
  }
  simdjson::dom::element doc;
  const simdjson::error_code err = parser.parse(body.data(), body.size()).get(doc);
  if (err == simdjson::UTF8_ERROR) throw validation("request body is not valid UTF-8");
  if (err == simdjson::DEPTH_ERROR) throw validation("request body nests deeper than the limit");
  if (err != simdjson::SUCCESS) {
    throw validation(std::string("request body is not valid JSON: ") + simdjson::error_message(err));
  }
  if (!doc.is_object()) throw validation("request body must be a JSON object");
  return doc;
}

// A string or a list of strings, as both APIs take their texts.
std::vector<std::string> texts_field(simdjson::dom::element obj, const char* name) {
  simdjson::dom::element field;
  if (obj[name].get(field) != simdjson::SUCCESS) {
    throw validation(std::string("missing field `") + name + "`", name);
  }
  std::vector<std::string> texts;
  std::string_view s;
  if (field.get(s) == simdjson::SUCCESS) {
    texts.emplace_back(s);
    return texts;
  }
  simdjson::dom::array list;
  if (field.get(list) != simdjson::SUCCESS) {
    throw validation(std::string("`") + name + "` must be a string or a list of strings", name);
  }
  for (simdjson::dom::element item : list) {
    if (item.get(s) != simdjson::SUCCESS) {
      // Token-id inputs are part of issue 6 but not of this slice: say so plainly.
      throw validation(std::string("`") + name +
                           "` must be a string or a list of strings (token ids are not supported yet)",
                       name);
    }
    texts.emplace_back(s);
  }
  if (texts.empty()) throw ApiError(400, "Empty", std::string("`") + name + "` cannot be empty", name);
  return texts;
}

bool optional_bool(simdjson::dom::element obj, const char* name, bool fallback) {
  simdjson::dom::element field;
  if (obj[name].get(field) != simdjson::SUCCESS || field.is_null()) return fallback;
  bool b = false;
  if (field.get(b) != simdjson::SUCCESS)
    throw validation(std::string("`") + name + "` must be a boolean", name);
  return b;
}

std::string optional_string(simdjson::dom::element obj, const char* name) {
  simdjson::dom::element field;
  if (obj[name].get(field) != simdjson::SUCCESS || field.is_null()) return {};
  std::string_view s;
  if (field.get(s) != simdjson::SUCCESS)
    throw validation(std::string("`") + name + "` must be a string", name);
  return std::string(s);
}

}  // namespace

TeiEmbedRequest parse_tei_embed(std::string_view body) {
  simdjson::dom::parser parser;
  const simdjson::dom::element obj = parse_object(parser, body);
  TeiEmbedRequest request;
  request.inputs = texts_field(obj, "inputs");
  request.normalize = optional_bool(obj, "normalize", true);
  request.truncate = optional_bool(obj, "truncate", false);
  return request;
}

OpenAiEmbedRequest parse_openai_embed(std::string_view body) {
  simdjson::dom::parser parser;
  const simdjson::dom::element obj = parse_object(parser, body);
  OpenAiEmbedRequest request;
  request.input = texts_field(obj, "input");
  request.model = optional_string(obj, "model");
  const std::string format = optional_string(obj, "encoding_format");
  if (format == "base64") {
    request.base64 = true;
  } else if (!format.empty() && format != "float") {
    throw validation("`encoding_format` must be \"float\" or \"base64\"", "encoding_format");
  }
  return request;
}

}  // namespace warden::http
