// Cohere's POST /v1/embed and /v2/embed over the served embedding model: `input_type` picks
// the model's prompt of that purpose, `embedding_types` the forms of each vector
// (http/embedding_types.hpp), `truncate` and `output_dimension` as Cohere defines them.
// The vectors are unit length, as Cohere's are.

#include <string>
#include <vector>

#include "core/json_writer.hpp"
#include "http/cohere_embed_route.hpp"
#include "http/embed_rows.hpp"
#include "serving/results.hpp"

namespace warden::http {

// The body.

using namespace body;

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

void cohere_embed(App& app, std::shared_ptr<Call> call, std::string_view body, int version) {
  auto request = std::make_shared<CohereEmbedRequest>(parse_cohere_embed(body));
  // v1 without embedding_types answers a plain list of float vectors; otherwise by type.
  const bool by_type = version >= 2 || !request->embedding_types.empty();
  if (request->embedding_types.empty()) request->embedding_types.push_back(EmbeddingType::Float);
  serving::tasks::Embed task;
  task.field.name = "texts";
  for (const std::string& t : request->texts) {
    task.inputs.push_back(Input{t, {}, false});
    call->characters += code_points(t);
  }
  task.tokenization = tokenization(request->truncate, request->truncation_direction);
  if (request->input_type) task.purposes = serving::input_type_purposes(*request->input_type);
  task.dimensions = request->output_dimension;
  task.dimensions_field = "output_dimension";
  task.normalize = true;  // Cohere's vectors are unit length
  task.refuse_empty = false;
  task.copies = request->embedding_types.size();
  app.tasks.embed(
      app.task_context(*call, request->model), std::move(task),
      app.answer<Embeddings>(call, [call, request, version, by_type](Embeddings& rows) {
        JsonWriter w;
        w.begin_object();
        w.key("id").value(response_id());
        w.key("embeddings");
        if (by_type) w.begin_object();
        for (const EmbeddingType type : request->embedding_types) {
          if (by_type) w.key(embedding_type_name(type));
          w.begin_array();
          for (std::size_t i = 0; i < rows.rows(); ++i) write_embedding(w, rows.row(i), type);
          w.end_array();
        }
        if (by_type) w.end_object();
        w.key("texts").begin_array();
        for (const std::string& t : request->texts) w.value(t);
        w.end_array();
        w.key("meta").begin_object();
        w.key("api_version").begin_object().key("version").value(std::to_string(version)).end_object();
        w.key("billed_units")
            .begin_object()
            .key("input_tokens")
            .value(static_cast<std::uint64_t>(call->tokens));
        w.end_object().end_object();
        w.key("response_type").value(by_type ? "embeddings_by_type" : "embeddings_floats");
        w.end_object();
        return json_response(200, w.take());
      }));
}

}  // namespace warden::http
