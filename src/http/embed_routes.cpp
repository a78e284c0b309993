// The embedding routes: TEI's /embed, /embed_all and /similarity, OpenAI's /v1/embeddings.
// Each parses its body on the I/O thread, hands the task to serving/tasks (which tokenizes
// on a worker and computes in the scheduler's batches) and formats the result on a worker.

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "http/base64.hpp"
#include "http/embed_routes.hpp"
#include "http/embed_rows.hpp"
#include "serving/results.hpp"
#include "serving/tasks/task_error.hpp"

namespace warden::http {

// The body.

using namespace body;

namespace {

// `prompt_name`, or `task` (jina's word: the prompt, and a task adapter of that name) in its
// place; both given must name the same prompt. `field` says which named it, for errors.
void read_prompt(object obj, std::optional<std::string>& prompt_name, std::string& field) {
  prompt_name = optional_string(obj, "prompt_name");
  if (std::optional<std::string> task = optional_string(obj, "task")) {
    if (prompt_name && *prompt_name != *task)
      throw validation("`task` and `prompt_name` name different prompts", "task");
    prompt_name = std::move(task);
    field = "task";
  }
}

}  // namespace

EmbedRequest tei_embed_fields(object obj) {
  EmbedRequest request;
  request.inputs = embedding_inputs(obj, "inputs");
  request.normalize = bool_or(obj, "normalize", true);
  request.truncate = optional_bool(obj, "truncate");
  request.truncation_direction = truncation_direction(obj, TruncationDirection::Right);
  read_prompt(obj, request.prompt_name, request.prompt_field);
  request.dimensions = optional_positive(obj, "dimensions");
  // Empty strings pass: the parser checks shapes, not content. (TEI itself answers 400 Empty
  // for an empty text, in its tokenization step; that is the router's call.)
  request.model = model_field(obj);
  return request;
}

EmbedRequest parse_tei_embed(std::string_view body) {
  simdjson::dom::parser parser;
  return tei_embed_fields(parse_object(parser, body));
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
  read_prompt(obj, request.prompt_name, request.prompt_field);
  request.input_type = optional_string(obj, "input_type");
  if (request.prompt_name && request.input_type)
    throw validation(fmt::format("give `{}` or `input_type`, not both", request.prompt_field), "input_type");
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

namespace tasks = serving::tasks;

namespace {

Response rows_response(const Embeddings& rows) {
  JsonWriter w;
  w.begin_array();
  for (std::size_t i = 0; i < rows.rows(); ++i) write_row(w, rows.row(i));
  w.end_array();
  return json_response(200, w.take());
}

}  // namespace

void embed(App& app, std::shared_ptr<Call> call, std::string_view body, bool all) {
  EmbedRequest request = parse_tei_embed(body);
  call->characters += tasks::characters(request.inputs);
  tasks::Context context = app.task_context(*call, std::move(request.model));
  tasks::Tokenization tok =
      tokenization(request.truncate, request.truncation_direction, std::move(request.prompt_name));
  tok.prompt_field = request.prompt_field;
  if (all) {
    tasks::EmbedTokens task;
    task.inputs = std::move(request.inputs);
    task.tokenization = tok;
    return app.tasks.embed_tokens(
        std::move(context), std::move(task),
        app.answer<std::vector<Embeddings>>(call, [](std::vector<Embeddings>& per_input) {
          JsonWriter w;
          w.begin_array();
          for (const Embeddings& tokens : per_input) {
            w.begin_array();
            for (std::size_t t = 0; t < tokens.rows(); ++t) write_row(w, tokens.row(t));
            w.end_array();
          }
          w.end_array();
          return json_response(200, w.take());
        }));
  }
  tasks::Embed task;
  task.inputs = std::move(request.inputs);
  task.tokenization = tok;
  task.dimensions = request.dimensions;
  task.normalize = request.normalize;
  app.tasks.embed(std::move(context), std::move(task), app.answer<Embeddings>(call, rows_response));
}

void openai_embed(App& app, std::shared_ptr<Call> call, std::string_view body) {
  OpenAiEmbedRequest request = parse_openai_embed(body);
  call->characters += tasks::characters(request.input);
  tasks::Embed task;
  task.inputs = std::move(request.input);
  task.field.name = "input";
  // OpenAI's vectors are unit length, also when shortened with `dimensions`; its parser has
  // refused an empty text already (422, as OpenAI does).
  task.normalize = true;
  task.refuse_empty = false;
  task.dimensions = request.dimensions;
  task.tokenization.prompt_name = std::move(request.prompt_name);
  task.tokenization.prompt_field = request.prompt_field;
  if (request.input_type) task.purposes = serving::input_type_purposes(*request.input_type);
  const bool base64 = request.base64;
  app.tasks.embed(app.task_context(*call, std::move(request.model)), std::move(task),
                  app.answer<Embeddings>(call, [call, base64](Embeddings& rows) {
                    std::size_t tokens = call->tokens;
                    JsonWriter w;
                    w.begin_object().key("object").value("list").key("data").begin_array();
                    for (std::size_t i = 0; i < rows.rows(); ++i) {
                      w.begin_object().key("object").value("embedding").key("embedding");
                      if (base64) {
                        w.value(base64_floats(rows.row(i)));
                      } else {
                        write_row(w, rows.row(i));
                      }
                      w.key("index").value(static_cast<std::uint64_t>(i)).end_object();
                    }
                    w.end_array();
                    // The response names the model that answered: the name it is served under.
                    w.key("model").value(call->lease->spec().name);
                    w.key("usage").begin_object();
                    w.key("prompt_tokens").value(static_cast<std::uint64_t>(tokens));
                    w.key("total_tokens").value(static_cast<std::uint64_t>(tokens));
                    w.end_object().end_object();
                    return json_response(200, w.take());
                  }));
}

void similarity(App& app, std::shared_ptr<Call> call, std::string_view body) {
  SimilarityRequest request = parse_similarity(body);
  call->characters += utf8::code_points(request.source_sentence);
  for (const std::string& s : request.sentences) call->characters += utf8::code_points(s);
  tasks::Similarity task{
      std::move(request.source_sentence), std::move(request.sentences),
      tokenization(request.truncate, request.truncation_direction, std::move(request.prompt_name))};
  app.tasks.similarity(app.task_context(*call, std::move(request.model)), std::move(task),
                       app.answer<std::vector<float>>(call, [](std::vector<float>& scores) {
                         JsonWriter w;
                         w.begin_array();
                         for (const float s : scores) w.value(s);
                         w.end_array();
                         return json_response(200, w.take());
                       }));
}

}  // namespace warden::http
