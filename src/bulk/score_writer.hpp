#pragma once
// The rerank job's sink: one JSON line per (passage, query) pair,
//   {"id": <passage id>, "query_id": <query id, when there is one>, "score": s}
// A record's row holds one score per query, in the order of `query_ids`.

#include <memory>
#include <string>
#include <vector>

#include "bulk/vector_writer.hpp"

namespace warden::bulk {

struct ScoreSinkOptions {
  std::filesystem::path path;  // "-": stdout
  bool resume = false;
  // The ids (as JSON) of the queries each row scores, in row order; "" for a query without
  // one. Empty: one score per record, whose query id is the record's own pair_id.
  std::vector<std::string> query_ids;
};

std::unique_ptr<Sink> make_score_sink(const ScoreSinkOptions& options);

}  // namespace warden::bulk
