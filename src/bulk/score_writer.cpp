#include "bulk/score_writer.hpp"

#include "core/json_writer.hpp"

namespace warden::bulk {

namespace {

class ScoreSink final : public Sink {
 public:
  explicit ScoreSink(const ScoreSinkOptions& options)
      : out_(options.path, options.resume), query_ids_(options.query_ids) {}

  void write(const Record& record, std::span<const float> row) override {
    for (std::size_t q = 0; q < row.size(); ++q) {
      const std::string& query_id = query_ids_.empty() ? record.pair_id : query_ids_[q];
      JsonWriter json;
      json.begin_object().key("id").raw(record.id);
      if (!query_id.empty()) json.key("query_id").raw(query_id);
      json.key("score").value(row[q]).end_object();
      line_ = json.take();
      line_.push_back('\n');
      out_.write(line_);
    }
  }
  void sync() override { out_.sync(); }
  void finish() override { out_.close(); }
  [[nodiscard]] std::vector<std::filesystem::path> files() const override { return {out_.name()}; }
  [[nodiscard]] std::vector<std::uint64_t> lengths() const override { return {out_.length()}; }

 private:
  OutputStream out_;
  std::vector<std::string> query_ids_;
  std::string line_;
};

}  // namespace

std::unique_ptr<Sink> make_score_sink(const ScoreSinkOptions& options) {
  return std::make_unique<ScoreSink>(options);
}

}  // namespace warden::bulk
