// The retrieval routes beside /embed: TEI's POST /embed_sparse (lexical weights, TEI's answer
// shape [[{"index", "value"}, ...], ...]) and POST /embed_hybrid, which answers any subset of a
// model's dense, sparse and multi-vector (ColBERT) outputs for each input, from one forward pass
// (docs/api.md). Both are serving/tasks' EmbedRetrieval, formatted here.

#include "core/json_writer.hpp"
#include "http/app.hpp"
#include "http/embed_rows.hpp"
#include "http/requests.hpp"
#include "http/route_handlers.hpp"

namespace warden::http {

namespace {

void write_sparse(JsonWriter& w, const SparseVector& v) {
  w.begin_array();
  for (std::size_t k = 0; k < v.size(); ++k) {
    w.begin_object()
        .key("index")
        .value(std::uint64_t{v.indices[k]})
        .key("value")
        .value(v.values[k])
        .end_object();
  }
  w.end_array();
}

}  // namespace

void embed_retrieval(App& app, std::shared_ptr<Call> call, std::string_view body, bool sparse_only) {
  HybridEmbedRequest request = sparse_only ? parse_sparse_embed(body) : parse_hybrid_embed(body);
  EmbedRequest& rq = request.embed;
  call->characters += serving::tasks::characters(rq.inputs);
  serving::tasks::EmbedRetrieval task;
  task.inputs = std::move(rq.inputs);
  task.tokenization = tokenization(rq.truncate, rq.truncation_direction, std::move(rq.prompt_name));
  task.outputs = request.outputs;
  task.dimensions = rq.dimensions;
  task.normalize = rq.normalize;
  task.top_k = request.top_k;
  task.threshold = request.threshold;
  task.query = request.query;
  app.tasks.embed_retrieval(
      app.task_context(*call, std::move(rq.model)), std::move(task),
      app.answer<serving::tasks::Retrieved>(call, [sparse_only](serving::tasks::Retrieved& r) {
        JsonWriter w;
        w.begin_array();
        for (const RetrievalVectors& v : r.vectors) {
          if (sparse_only) {
            write_sparse(w, v.sparse);
            continue;
          }
          w.begin_object();
          if (r.outputs.dense) {
            w.key("dense");
            write_row(w, v.dense);
          }
          if (r.outputs.sparse) {
            w.key("sparse");
            write_sparse(w, v.sparse);
          }
          if (r.outputs.multi) {
            w.key("multi").begin_array();
            for (std::size_t t = 0; t < v.multi.rows(); ++t) write_row(w, v.multi.row(t));
            w.end_array();
          }
          w.end_object();
        }
        w.end_array();
        return json_response(200, w.take());
      }));
}

}  // namespace warden::http
