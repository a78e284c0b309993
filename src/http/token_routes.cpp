// TEI's /tokenize and /decode: serving/tasks' tokenizer tasks (on a worker, no batches),
// formatted here.

#include "http/token_routes.hpp"
#include "core/json_writer.hpp"

namespace warden::http {

// The body.

using namespace body;

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

namespace tasks = serving::tasks;

void tokenize(App& app, std::shared_ptr<Call> call, std::string_view body) {
  TokenizeRequest request = parse_tokenize(body);
  tasks::Tokenize task;
  task.inputs = std::move(request.inputs);
  task.prompt_name = std::move(request.prompt_name);
  task.add_special_tokens = request.add_special_tokens;
  app.tasks.tokenize(app.task_context(*call, std::move(request.model)), std::move(task),
                     app.answer<std::vector<std::vector<embed::TokenInfo>>>(
                         call, [](std::vector<std::vector<embed::TokenInfo>>& texts) {
                           JsonWriter w;
                           w.begin_array();
                           for (const std::vector<embed::TokenInfo>& tokens : texts) {
                             w.begin_array();
                             for (const embed::TokenInfo& t : tokens) {
                               w.begin_object();
                               w.key("id").value(static_cast<std::uint64_t>(t.id));
                               w.key("text").value(t.text);
                               w.key("special").value(t.special);
                               w.key("start");
                               if (t.start) {
                                 w.value(static_cast<std::uint64_t>(*t.start));
                               } else {
                                 w.value(nullptr);
                               }
                               w.key("stop");
                               if (t.stop) {
                                 w.value(static_cast<std::uint64_t>(*t.stop));
                               } else {
                                 w.value(nullptr);
                               }
                               w.end_object();
                             }
                             w.end_array();
                           }
                           w.end_array();
                           return json_response(200, w.take());
                         }));
}

void decode(App& app, std::shared_ptr<Call> call, std::string_view body) {
  DecodeRequest request = parse_decode(body);
  tasks::Decode task;
  task.ids = std::move(request.ids);
  task.skip_special_tokens = request.skip_special_tokens;
  app.tasks.decode(app.task_context(*call, std::move(request.model)), std::move(task),
                   app.answer<std::vector<std::string>>(call, [](std::vector<std::string>& texts) {
                     JsonWriter w;
                     w.begin_array();
                     for (const std::string& t : texts) w.value(t);
                     w.end_array();
                     return json_response(200, w.take());
                   }));
}

}  // namespace warden::http
