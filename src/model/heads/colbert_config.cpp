#include "model/heads/colbert_config.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include "model/formats/json_fields.hpp"

namespace warden::model::heads {

namespace {

using formats::json_fields::Fields;

// Python's string.punctuation.
constexpr std::string_view kPunctuation = R"(!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~)";

ColbertConfig with_default_skiplist(ColbertConfig c) {
  for (const char ch : kPunctuation) c.skiplist_words.emplace_back(1, ch);
  return c;
}

std::size_t length_field(const Fields& f, std::string_view key, std::size_t fallback) {
  if (!f.has(key) || !f.integer(key)) return fallback;
  return static_cast<std::size_t>(f.integer_in(key, 1, 1 << 20));
}

}  // namespace

bool is_pylate_config(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  const Fields f(formats::json_fields::parse_object(parser, json, source), source);
  return f.has("query_prefix");
}

ColbertConfig parse_pylate_config(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  const Fields f(formats::json_fields::parse_object(parser, json, source), source);
  ColbertConfig c;
  if (auto v = f.string("query_prefix")) c.query_prefix = *v;
  if (auto v = f.string("document_prefix")) c.document_prefix = *v;
  c.query_length = length_field(f, "query_length", c.query_length);
  c.document_length = length_field(f, "document_length", c.document_length);
  if (auto v = f.boolean("do_query_expansion")) c.do_query_expansion = *v;
  if (auto v = f.boolean("attend_to_expansion_tokens")) c.attend_to_expansion_tokens = *v;
  // PyLate: no query expansion, nothing to attend to.
  if (!c.do_query_expansion) c.attend_to_expansion_tokens = false;
  if (const auto words = f.array("skiplist_words")) {
    for (const auto w : *words) {
      std::string_view s;
      if (w.get_string().get(s) != simdjson::SUCCESS) throw f.fail("skiplist_words", "holds a non-string");
      c.skiplist_words.emplace_back(s);
    }
    return c;
  }
  return with_default_skiplist(std::move(c));
}

ColbertConfig parse_colbert_metadata(std::string_view json, std::string_view source) {
  ColbertConfig c;
  c.query_prefix = "[unused0]";
  c.document_prefix = "[unused1]";
  if (json.empty()) return with_default_skiplist(std::move(c));
  simdjson::dom::parser parser;
  const Fields f(formats::json_fields::parse_object(parser, json, source), source);
  if (auto v = f.string("query_token_id")) c.query_prefix = *v;
  if (auto v = f.string("doc_token_id")) c.document_prefix = *v;
  c.query_length = length_field(f, "query_maxlen", c.query_length);
  c.document_length = length_field(f, "doc_maxlen", c.document_length);
  if (auto v = f.boolean("attend_to_mask_tokens")) c.attend_to_expansion_tokens = *v;
  return with_default_skiplist(std::move(c));
}

}  // namespace warden::model::heads
