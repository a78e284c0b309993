#include "bulk/score_writer.hpp"

#include "core/json_writer.hpp"

namespace warden::bulk {

namespace {

class ScoreSink final : public JsonLinesSink {
 public:
  explicit ScoreSink(const ScoreSinkOptions& options)
      : JsonLinesSink(options.path, options.resume), query_ids_(options.query_ids) {}

  void write(const Record& record, std::span<const float> row) override {
    for (std::size_t q = 0; q < row.size(); ++q) {
      const std::string& query_id = query_ids_.empty() ? record.pair_id : query_ids_[q];
      JsonWriter json;
      json.begin_object().key("id").raw(record.id);
      if (!query_id.empty()) json.key("query_id").raw(query_id);
      json.key("score").value(row[q]).end_object();
      write_line(json.take());
    }
  }

 private:
  std::vector<std::string> query_ids_;
};

}  // namespace

std::unique_ptr<Sink> make_score_sink(const ScoreSinkOptions& options) {
  return std::make_unique<ScoreSink>(options);
}

}  // namespace warden::bulk
