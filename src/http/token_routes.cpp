// TEI's /tokenize and /decode: serving/tasks' tokenizer tasks (on a worker, no batches),
// formatted here.

#include "core/json_writer.hpp"
#include "http/app.hpp"
#include "http/requests.hpp"
#include "http/route_handlers.hpp"

namespace warden::http {

namespace tasks = serving::tasks;

void tokenize(App& app, std::shared_ptr<Call> call, std::string_view body) {
  TokenizeRequest request = parse_tokenize(body);
  tasks::Tokenize task;
  task.inputs = std::move(request.inputs);
  task.prompt_name = std::move(request.prompt_name);
  task.add_special_tokens = request.add_special_tokens;
  app.tasks.tokenize(
      app.task_context(*call, std::move(request.model)), std::move(task),
      app.answer<std::vector<std::vector<TokenInfo>>>(call, [](std::vector<std::vector<TokenInfo>>& texts) {
        JsonWriter w;
        w.begin_array();
        for (const std::vector<TokenInfo>& tokens : texts) {
          w.begin_array();
          for (const TokenInfo& t : tokens) {
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
