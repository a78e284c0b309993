#include "http/requests.hpp"

#include <simdjson.h>

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/precision.hpp"
#include "http/api_error.hpp"
#include "serving/model_name.hpp"

namespace warden::http {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

ApiError validation(const std::string& message, std::string param) {
  return ApiError(422, "Validation", message, std::move(param));
}

// "`inputs`", "`inputs[2]`", "`inputs[2][0]`": how a message names a field or a list item.
// (Appended piece by piece: GCC 12 gives a false -Wrestrict on "`" + std::string(...).)
std::string ticked(std::string_view name) {
  std::string s;
  s.reserve(name.size() + 2);
  s.append("`").append(name).append("`");
  return s;
}
std::string item(std::string_view name, std::size_t i) {
  std::string s(name);
  s.append("[").append(std::to_string(i)).append("]");
  return s;
}

// Parses body into an object, mapping every simdjson failure to a 422 a client can act on.
object parse_object(simdjson::dom::parser& parser, std::string_view body) {
  // allocate() with the body's own size: parse() then never reallocates, so the depth bound
  // set here is the one that applies.
  if (parser.allocate(std::max<std::size_t>(body.size(), 64), kMaxJsonDepth) != simdjson::SUCCESS) {
    throw ApiError(500, "Backend", "could not allocate the JSON parser");
  }
  element doc;
  const simdjson::error_code err = parser.parse(body.data(), body.size()).get(doc);
  if (err == simdjson::UTF8_ERROR) throw validation("request body is not valid UTF-8", "");
  if (err == simdjson::DEPTH_ERROR) {
    throw validation("request body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels", "");
  }
  if (err != simdjson::SUCCESS) {
    throw validation(std::string("request body is not valid JSON: ") + simdjson::error_message(err), "");
  }
  object obj;
  if (doc.get(obj) != simdjson::SUCCESS) throw validation("request body must be a JSON object", "");
  return obj;
}

// The field, or nothing when it is absent or null (clients send null for "not set").
std::optional<element> optional_field(object obj, std::string_view name) {
  element field;
  if (obj.at_key(name).get(field) != simdjson::SUCCESS || field.is_null()) return std::nullopt;
  return field;
}

element required_field(object obj, std::string_view name) {
  const std::optional<element> field = optional_field(obj, name);
  if (!field) throw validation("missing field " + ticked(name), std::string(name));
  return *field;
}

std::optional<bool> optional_bool(object obj, std::string_view name) {
  const std::optional<element> field = optional_field(obj, name);
  if (!field) return std::nullopt;
  bool b = false;
  if (field->get(b) != simdjson::SUCCESS)
    throw validation(ticked(name) + " must be a boolean", std::string(name));
  return b;
}

bool bool_or(object obj, std::string_view name, bool fallback) {
  return optional_bool(obj, name).value_or(fallback);
}

// A string; `label` names it in the message (a list item), `param` is the top-level field.
std::string string_value(element e, std::string_view label, std::string_view param) {
  std::string_view s;
  if (e.get(s) != simdjson::SUCCESS)
    throw validation(ticked(label) + " must be a string", std::string(param));
  return std::string(s);
}

std::optional<std::string> optional_string(object obj, std::string_view name) {
  const std::optional<element> field = optional_field(obj, name);
  if (!field) return std::nullopt;
  return string_value(*field, name, name);
}

std::string required_string(object obj, std::string_view name) {
  return string_value(required_field(obj, name), name, name);
}

// Every body's `model` (empty when absent: the route's default model answers).
std::string model_field(object obj) {
  std::string name = optional_string(obj, "model").value_or("");
  if (const std::string problem = serving::lookup_name_problem(name); !problem.empty()) {
    throw validation(fmt::format("`model`: {}", problem), "model");
  }
  return name;
}

// A count such as `dimensions` or `top_n`: an integer >= 1 (not 2.0, not true).
std::optional<std::size_t> optional_positive(object obj, std::string_view name) {
  const std::optional<element> field = optional_field(obj, name);
  if (!field) return std::nullopt;
  std::uint64_t n = 0;
  if (field->get(n) != simdjson::SUCCESS || n == 0 || n > std::numeric_limits<std::size_t>::max()) {
    throw validation(ticked(name) + " must be an integer >= 1", std::string(name));
  }
  return static_cast<std::size_t>(n);
}

// TEI's enum is "Left" / "Right"; clients also send "left" / "right", so any case is accepted.
TruncationDirection truncation_direction(object obj, TruncationDirection fallback) {
  constexpr std::string_view kName = "truncation_direction";
  const std::optional<std::string> s = optional_string(obj, kName);
  if (!s) return fallback;
  std::string lower = *s;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
  if (lower == "right") return TruncationDirection::Right;
  if (lower == "left") return TruncationDirection::Left;
  throw validation("`truncation_direction` must be \"Right\" or \"Left\"", std::string(kName));
}

// The first (second) element of a list the caller has checked is long enough. (Iterators, not
// at(): at()'s error path makes GCC 12 warn of a null dereference in simdjson.)
element first(array list) {
  return *list.begin();
}
element second(array list) {
  auto it = list.begin();
  ++it;
  return *it;
}

bool is_number(element e) {
  return e.is_int64() || e.is_uint64() || e.is_double();
}

std::uint32_t token_id(element e, std::string_view label, std::string_view param) {
  std::uint64_t id = 0;
  if (e.get(id) != simdjson::SUCCESS || id > std::numeric_limits<std::uint32_t>::max()) {
    throw validation(ticked(label) + " must be a token id (an integer from 0 to 4294967295)",
                     std::string(param));
  }
  return static_cast<std::uint32_t>(id);
}

// A non-empty list of token ids.
std::vector<std::uint32_t> id_list(array list, std::string_view label, std::string_view param) {
  std::vector<std::uint32_t> ids;
  ids.reserve(list.size());
  std::size_t i = 0;
  for (const element e : list) ids.push_back(token_id(e, item(label, i++), param));
  if (ids.empty())
    throw validation(ticked(label) + " cannot be an empty list of token ids", std::string(param));
  return ids;
}

ApiError empty(std::string_view name) {
  return ApiError(400, "Empty", ticked(name) + " cannot be empty", std::string(name));
}

// The embedding routes' `inputs` / `input`, with TEI's untagged rule: a list whose first
// element is a number is ONE sequence of token ids; any other list is a batch whose items
// are texts or lists of token ids (mixed allowed).
std::vector<Input> embedding_inputs(object obj, std::string_view name) {
  const element field = required_field(obj, name);
  std::vector<Input> inputs;
  std::string_view s;
  if (field.get(s) == simdjson::SUCCESS) {
    inputs.push_back(Input{std::string(s), {}, false});
    return inputs;
  }
  array list;
  if (field.get(list) != simdjson::SUCCESS) {
    throw validation(
        ticked(name) + " must be a string, a list of token ids, or a list of strings and lists of token ids",
        std::string(name));
  }
  if (list.size() == 0) throw empty(name);
  if (is_number(first(list))) {
    inputs.push_back(Input{{}, id_list(list, name, name), true});
    return inputs;
  }
  inputs.reserve(list.size());
  std::size_t i = 0;
  for (const element e : list) {
    const std::string label = item(name, i++);
    array ids;
    if (e.get(s) == simdjson::SUCCESS) {
      inputs.push_back(Input{std::string(s), {}, false});
    } else if (e.get(ids) == simdjson::SUCCESS) {
      inputs.push_back(Input{{}, id_list(ids, label, name), true});
    } else {
      throw validation(ticked(label) + " must be a string or a list of token ids", std::string(name));
    }
  }
  return inputs;
}

// A list of strings, possibly empty (a single string is not accepted: TEI's Vec<String>).
std::vector<std::string> string_items(element field, std::string_view name) {
  array list;
  if (field.get(list) != simdjson::SUCCESS)
    throw validation(ticked(name) + " must be a list of strings", std::string(name));
  std::vector<std::string> out;
  out.reserve(list.size());
  std::size_t i = 0;
  for (const element e : list) out.push_back(string_value(e, item(name, i++), name));
  return out;
}

// A non-empty list of strings.
std::vector<std::string> string_list(element field, std::string_view name) {
  std::vector<std::string> out = string_items(field, name);
  if (out.empty()) throw empty(name);
  return out;
}

std::string non_empty_query(object obj) {
  std::string query = required_string(obj, "query");
  if (query.empty()) throw validation("`query` cannot be empty", "query");
  return query;
}

// One /predict sequence given as a list: [text] or [text, text_pair].
PredictInput predict_sequence(array list, std::string_view label) {
  const std::size_t n = list.size();
  if (n != 1 && n != 2) {
    throw validation(
        ticked(label) + " must be a text [str] or a pair [str, str], not " + std::to_string(n) + " elements",
        "inputs");
  }
  PredictInput in;
  in.text = string_value(first(list), item(label, 0), "inputs");
  if (n == 2) in.text_pair = string_value(second(list), item(label, 1), "inputs");
  return in;
}

// A field that is one string (single = true) or a list of strings.
std::vector<std::string> string_or_list(object obj, std::string_view name, bool& single) {
  const element field = required_field(obj, name);
  std::string_view s;
  if (field.get(s) == simdjson::SUCCESS) {
    single = true;
    return {std::string(s)};
  }
  if (!field.is_array())
    throw validation(ticked(name) + " must be a string or a list of strings", std::string(name));
  return string_list(field, name);
}

EmbedRequest tei_embed_fields(object obj) {
  EmbedRequest request;
  request.inputs = embedding_inputs(obj, "inputs");
  request.normalize = bool_or(obj, "normalize", true);
  request.truncate = optional_bool(obj, "truncate");
  request.truncation_direction = truncation_direction(obj, TruncationDirection::Right);
  request.prompt_name = optional_string(obj, "prompt_name");
  request.dimensions = optional_positive(obj, "dimensions");
  // Empty strings pass: the parser checks shapes, not content. (TEI itself answers 400 Empty
  // for an empty text, in its tokenization step; that is the router's call.)
  request.model = model_field(obj);
  return request;
}

}  // namespace

EmbedRequest parse_tei_embed(std::string_view body) {
  simdjson::dom::parser parser;
  return tei_embed_fields(parse_object(parser, body));
}

namespace {

HybridEmbedRequest sparse_fields(object obj) {
  HybridEmbedRequest request;
  request.embed = tei_embed_fields(obj);
  request.top_k = optional_positive(obj, "top_k");
  if (const std::optional<element> t = optional_field(obj, "threshold")) {
    double x = 0;
    if (t->get(x) != simdjson::SUCCESS || !(x >= 0) || x > 3.4e38) {
      throw validation("`threshold` must be a number >= 0", "threshold");
    }
    request.threshold = static_cast<float>(x);
  }
  if (const std::optional<std::string> role = optional_string(obj, "input_type")) {
    if (*role == "query" || *role == "search_query") {
      request.query = true;
    } else if (*role != "document" && *role != "search_document") {
      throw validation(
          "`input_type` must be \"query\" or \"document\" (or Cohere's search_query, search_document)",
          "input_type");
    }
  }
  return request;
}

}  // namespace

HybridEmbedRequest parse_sparse_embed(std::string_view body) {
  simdjson::dom::parser parser;
  HybridEmbedRequest request = sparse_fields(parse_object(parser, body));
  request.outputs = RetrievalOutputs{false, true, false};
  return request;
}

HybridEmbedRequest parse_hybrid_embed(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  HybridEmbedRequest request = sparse_fields(obj);
  const std::optional<element> field = optional_field(obj, "outputs");
  if (!field) return request;
  const std::vector<std::string> names = string_list(*field, "outputs");  // an empty list is 400 Empty
  RetrievalOutputs o{false, false, false};
  for (std::size_t i = 0; i < names.size(); ++i) {
    bool* slot = names[i] == "dense"    ? &o.dense
                 : names[i] == "sparse" ? &o.sparse
                 : names[i] == "multi"  ? &o.multi
                                        : nullptr;
    if (slot == nullptr) {
      throw validation(fmt::format("`outputs[{}]` must be \"dense\", \"sparse\" or \"multi\"", i), "outputs");
    }
    if (*slot) throw validation(fmt::format("`outputs[{}]` names \"{}\" twice", i, names[i]), "outputs");
    *slot = true;
  }
  request.outputs = o;
  return request;
}

OpenAiEmbedRequest parse_openai_embed(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  OpenAiEmbedRequest request;
  request.input = embedding_inputs(obj, "input");
  // OpenAI refuses empty strings; the index tells a client which of its texts was empty.
  for (std::size_t i = 0; i < request.input.size(); ++i) {
    const Input& in = request.input[i];
    if (!in.is_ids && in.text.empty()) {
      const std::string label = required_field(obj, "input").is_string() ? "input" : item("input", i);
      throw validation(ticked(label) + " cannot be an empty string", "input");
    }
  }
  request.model = model_field(obj);
  request.user = optional_string(obj, "user").value_or("");
  const std::optional<std::string> format = optional_string(obj, "encoding_format");
  if (format && *format == "base64") {
    request.base64 = true;
  } else if (format && *format != "float") {
    throw validation("`encoding_format` must be \"float\" or \"base64\"", "encoding_format");
  }
  request.dimensions = optional_positive(obj, "dimensions");
  return request;
}

SimilarityRequest parse_similarity(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  object inputs;
  if (required_field(obj, "inputs").get(inputs) != simdjson::SUCCESS) {
    throw validation("`inputs` must be an object {\"source_sentence\": str, \"sentences\": [str]}", "inputs");
  }
  SimilarityRequest request;
  const std::optional<element> source = optional_field(inputs, "source_sentence");
  if (!source) throw validation("missing field `inputs.source_sentence`", "inputs");
  request.source_sentence = string_value(*source, "inputs.source_sentence", "inputs");
  const std::optional<element> sentences = optional_field(inputs, "sentences");
  if (!sentences) throw validation("missing field `inputs.sentences`", "inputs");
  try {
    request.sentences = string_list(*sentences, "inputs.sentences");
  } catch (const ApiError& e) {
    // The message names `inputs.sentences[i]`; the param is the top-level field.
    throw ApiError(e.status(), e.error_type(), e.what(), "inputs");
  }
  // TEI takes these from "parameters"; the top level is accepted too, and "parameters" wins.
  request.truncate = optional_bool(obj, "truncate");
  request.truncation_direction = truncation_direction(obj, TruncationDirection::Right);
  request.prompt_name = optional_string(obj, "prompt_name");
  if (const std::optional<element> params_field = optional_field(obj, "parameters")) {
    object params;
    if (params_field->get(params) != simdjson::SUCCESS)
      throw validation("`parameters` must be an object", "parameters");
    if (const std::optional<bool> t = optional_bool(params, "truncate")) request.truncate = t;
    request.truncation_direction = truncation_direction(params, request.truncation_direction);
    if (std::optional<std::string> p = optional_string(params, "prompt_name"))
      request.prompt_name = std::move(p);
  }
  request.model = model_field(obj);
  return request;
}

TokenizeRequest parse_tokenize(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  TokenizeRequest request;
  request.inputs = string_or_list(obj, "inputs", request.single);
  request.add_special_tokens = bool_or(obj, "add_special_tokens", true);
  request.prompt_name = optional_string(obj, "prompt_name");
  request.model = model_field(obj);
  return request;
}

GuardRequest parse_guard(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  GuardRequest request;
  request.inputs = string_or_list(obj, "inputs", request.single);
  request.model = model_field(obj);
  return request;
}

GuardrailRequest parse_litellm_guardrail(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  GuardrailRequest request;
  // LiteLLM sends an empty list when a call has no text (an image-only request): nothing to judge.
  request.texts = string_items(required_field(obj, "texts"), "texts");
  if (std::optional<std::string> type = optional_string(obj, "input_type")) {
    if (*type != "request" && *type != "response") {
      throw validation("`input_type` must be \"request\" or \"response\"", "input_type");
    }
    request.input_type = std::move(*type);
  }
  for (const std::string_view name : {"images", "tools", "structured_messages"}) {
    if (const std::optional<element> f = optional_field(obj, name); f && !f->is_array()) {
      throw validation(ticked(name) + " must be a list", std::string(name));
    }
  }
  for (const std::string_view name : {"litellm_call_id", "litellm_trace_id"})
    (void)optional_string(obj, name);
  if (const std::optional<element> f = optional_field(obj, "request_data"); f && !f->is_object()) {
    throw validation("`request_data` must be an object", "request_data");
  }
  constexpr std::string_view kParams = "additional_provider_specific_params";
  if (const std::optional<element> f = optional_field(obj, kParams)) {
    object params;
    if (f->get(params) != simdjson::SUCCESS)
      throw validation(ticked(kParams) + " must be an object", std::string(kParams));
    request.block_on_abstain = bool_or(params, "block_on_abstain", false);
  }
  return request;
}

DecodeRequest parse_decode(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  DecodeRequest request;
  array list;
  if (required_field(obj, "ids").get(list) != simdjson::SUCCESS) {
    throw validation("`ids` must be a list of token ids or a list of lists of token ids", "ids");
  }
  if (list.size() == 0) throw empty("ids");
  // As for the embedding inputs: a first element that is a list makes a batch.
  if (!first(list).is_array()) {
    request.ids.push_back(id_list(list, "ids", "ids"));
    request.single = true;
  } else {
    request.ids.reserve(list.size());
    std::size_t i = 0;
    for (const element e : list) {
      const std::string label = item("ids", i++);
      array ids;
      if (e.get(ids) != simdjson::SUCCESS)
        throw validation(ticked(label) + " must be a list of token ids", "ids");
      request.ids.push_back(id_list(ids, label, "ids"));
    }
  }
  request.skip_special_tokens = bool_or(obj, "skip_special_tokens", true);
  request.model = model_field(obj);
  return request;
}

namespace {

// [dense, sparse, multi]: three numbers >= 0, not all zero.
std::optional<RetrievalWeights> retrieval_weights(object obj) {
  const std::optional<element> field = optional_field(obj, "retrieval_weights");
  if (!field) return std::nullopt;
  const std::string what =
      "`retrieval_weights` must be [dense, sparse, multi]: three numbers >= 0, not all 0";
  array list;
  if (field->get(list) != simdjson::SUCCESS || list.size() != 3) throw validation(what, "retrieval_weights");
  float w[3] = {0, 0, 0};
  std::size_t i = 0;
  for (const element e : list) {
    double x = 0;
    if (e.get(x) != simdjson::SUCCESS || !(x >= 0) || x > 1e6) throw validation(what, "retrieval_weights");
    w[i++] = static_cast<float>(x);
  }
  if (w[0] + w[1] + w[2] <= 0) throw validation(what, "retrieval_weights");
  return RetrievalWeights{w[0], w[1], w[2]};
}

}  // namespace

RerankRequest parse_tei_rerank(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  RerankRequest request;
  request.query = non_empty_query(obj);
  request.texts = string_list(required_field(obj, "texts"), "texts");
  request.raw_scores = bool_or(obj, "raw_scores", false);
  request.return_text = bool_or(obj, "return_text", false);
  request.guard = bool_or(obj, "guard", false);
  request.truncate = optional_bool(obj, "truncate");
  request.truncation_direction = truncation_direction(obj, TruncationDirection::Right);
  request.model = model_field(obj);
  request.retrieval_weights = retrieval_weights(obj);
  request.instruction = optional_string(obj, "instruction").value_or("");
  return request;
}

DocumentsRerankRequest parse_documents_rerank(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  DocumentsRerankRequest request;
  request.model = model_field(obj);
  request.query = non_empty_query(obj);
  // Cohere, Jina and vLLM send `documents`; llama.cpp's and Mixedbread's /v1/reranking send
  // `input`.
  std::string_view field = "documents";
  if (!optional_field(obj, field) && optional_field(obj, "input")) field = "input";
  array list;
  if (required_field(obj, field).get(list) != simdjson::SUCCESS) {
    throw validation(ticked(field) + " must be a list of strings or of {\"text\": str} objects",
                     std::string(field));
  }
  if (list.size() == 0) throw empty(field);
  request.documents.reserve(list.size());
  request.return_input = bool_or(obj, "return_input", false);
  std::size_t i = 0;
  for (const element e : list) {
    const std::string label = item(field, i++);
    if (request.return_input) request.inputs_as_sent.push_back(simdjson::minify(e));
    std::string_view s;
    object doc;
    if (e.get(s) == simdjson::SUCCESS) {
      request.documents.emplace_back(s);
    } else if (e.get(doc) == simdjson::SUCCESS) {
      // Cohere's and Jina's document objects carry the text in "text".
      const std::optional<element> text = optional_field(doc, "text");
      if (!text) throw validation("missing field `" + label + ".text`", std::string(field));
      request.documents.push_back(string_value(*text, label + ".text", field));
    } else {
      throw validation(ticked(label) + " must be a string or a {\"text\": str} object", std::string(field));
    }
  }
  request.documents_field = std::string(field);
  // Cohere's top_n; Jina's and llama.cpp's top_k. Both at once must agree.
  request.top_n = optional_positive(obj, "top_n");
  const std::optional<std::size_t> top_k = optional_positive(obj, "top_k");
  if (request.top_n && top_k && *request.top_n != *top_k) {
    throw validation("`top_n` and `top_k` are the same setting: give one", "top_k");
  }
  if (!request.top_n) request.top_n = top_k;
  request.return_documents = bool_or(obj, "return_documents", false);
  request.guard = bool_or(obj, "guard", false);
  request.retrieval_weights = retrieval_weights(obj);
  request.instruction = optional_string(obj, "instruction").value_or("");
  return request;
}

PredictRequest parse_predict(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  PredictRequest request;
  const element field = required_field(obj, "inputs");
  const char* const shape =
      "`inputs` must be a string, a pair [str, str] or a batch [[str], [str, str], ...]";
  std::string_view s;
  array list;
  if (field.get(s) == simdjson::SUCCESS) {
    request.inputs.push_back(PredictInput{std::string(s), std::nullopt});
    request.single = true;
  } else if (field.get(list) != simdjson::SUCCESS) {
    throw validation(shape, "inputs");
  } else if (list.size() == 0) {
    // TEI's deserializer rejects [] (422); every other route answers an empty list with
    // 400 Empty, and so does this one.
    throw empty("inputs");
  } else if (first(list).is_string()) {
    // TEI: a first element that is a string makes the whole list ONE sequence, so ["a", "b"]
    // is one (text, text_pair) pair, never a batch of two texts.
    request.inputs.push_back(predict_sequence(list, "inputs"));
    request.single = true;
  } else if (first(list).is_array()) {
    request.inputs.reserve(list.size());
    std::size_t i = 0;
    for (const element e : list) {
      const std::string label = item("inputs", i++);
      array seq;
      if (e.get(seq) != simdjson::SUCCESS)
        throw validation(ticked(label) + " must be [str] or [str, str]", "inputs");
      request.inputs.push_back(predict_sequence(seq, label));
    }
  } else {
    throw validation(shape, "inputs");
  }
  request.raw_scores = bool_or(obj, "raw_scores", false);
  request.truncate = optional_bool(obj, "truncate");
  request.truncation_direction = truncation_direction(obj, TruncationDirection::Right);
  request.model = model_field(obj);
  return request;
}

CohereEmbedRequest parse_cohere_embed(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  CohereEmbedRequest request;
  if (!optional_field(obj, "texts") && (optional_field(obj, "images") || optional_field(obj, "inputs"))) {
    throw ApiError(422, "Validation", "only `texts` can be embedded here: images are not supported", "texts");
  }
  request.texts = string_list(required_field(obj, "texts"), "texts");
  for (std::size_t i = 0; i < request.texts.size(); ++i) {
    if (request.texts[i].empty())
      throw ApiError(400, "Empty", ticked(item("texts", i)) + " cannot be empty", "texts");
  }
  request.model = model_field(obj);
  request.input_type = optional_string(obj, "input_type");
  if (const std::optional<element> types = optional_field(obj, "embedding_types")) {
    const std::vector<std::string> names = string_list(*types, "embedding_types");
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::optional<EmbeddingType> t = parse_embedding_type(names[i]);
      if (!t) {
        throw validation(ticked(item("embedding_types", i)) +
                             " must be one of float, int8, uint8, binary, ubinary, base64",
                         "embedding_types");
      }
      if (std::find(request.embedding_types.begin(), request.embedding_types.end(), *t) ==
          request.embedding_types.end()) {
        request.embedding_types.push_back(*t);
      }
    }
  }
  if (const std::optional<std::string> truncate = optional_string(obj, "truncate")) {
    if (*truncate == "NONE") {
      request.truncate = false;
    } else if (*truncate == "END") {
      request.truncate = true;
    } else if (*truncate == "START") {
      request.truncate = true;
      request.truncation_direction = TruncationDirection::Left;
    } else {
      throw validation("`truncate` must be NONE, START or END", "truncate");
    }
  }
  request.output_dimension = optional_positive(obj, "output_dimension");
  return request;
}

RootRequest parse_root(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  RootRequest request;
  request.model = model_field(obj);
  request.has_query = optional_field(obj, "query").has_value();
  const std::optional<element> inputs = optional_field(obj, "inputs");
  request.similarity = inputs && inputs->is_object();
  return request;
}

AdminModelRequest parse_admin_model(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  AdminModelRequest request;
  request.source = required_string(obj, "model");
  request.name = optional_string(obj, "name").value_or("");
  if (request.source.size() > 200) throw validation("`model` is longer than 200 bytes", "model");
  for (const char c : request.source) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      throw validation("`model` contains a control character", "model");
    }
  }
  if (request.source.empty()) throw validation("`model` cannot be empty", "model");
  if (!request.name.empty() && !serving::is_valid_alias(request.name)) {
    throw validation(fmt::format("`name` must be {}", serving::kAliasRule), "name");
  }
  request.dtype = optional_string(obj, "dtype").value_or("");
  if (!request.dtype.empty() && request.dtype != "auto" && !parse_precision(request.dtype)) {
    throw validation("`dtype` must be one of float32, bfloat16, int8, auto", "dtype");
  }
  return request;
}

serving::tasks::Tokenization tokenization(std::optional<bool> truncate, TruncationDirection direction,
                                          std::optional<std::string> prompt_name) {
  return {truncate, direction == TruncationDirection::Left ? TruncationSide::Left : TruncationSide::Right,
          std::move(prompt_name)};
}

}  // namespace warden::http
