// The embedding routes: TEI's /embed, /embed_all and /similarity, OpenAI's /v1/embeddings.
// Each parses its body on the I/O thread, hands the task to serving/tasks (which tokenizes
// on a worker and computes in the scheduler's batches) and formats the result on a worker.

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "http/app.hpp"
#include "http/base64.hpp"
#include "http/embed_rows.hpp"
#include "http/requests.hpp"
#include "http/route_handlers.hpp"
#include "serving/tasks/task_error.hpp"

namespace warden::http {

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
  const tasks::Tokenization tok =
      tokenization(request.truncate, request.truncation_direction, std::move(request.prompt_name));
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
