// The retrieval routes beside /embed: TEI's POST /embed_sparse (lexical weights, TEI's answer
// shape [[{"index", "value"}, ...], ...]) and POST /embed_hybrid, which answers any subset of a
// model's dense, sparse and multi-vector (ColBERT) outputs for each input, from one forward pass
// (docs/api.md). Both are serving/tasks' EmbedRetrieval, formatted here.

#include "http/retrieval_routes.hpp"
#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "http/embed_rows.hpp"

namespace warden::http {

// The body.

using namespace body;

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
  request.outputs = embed::RetrievalOutputs{false, true, false};
  return request;
}

HybridEmbedRequest parse_hybrid_embed(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  HybridEmbedRequest request = sparse_fields(obj);
  const std::optional<element> field = optional_field(obj, "outputs");
  if (!field) return request;
  const std::vector<std::string> names = string_list(*field, "outputs");  // an empty list is 400 Empty
  embed::RetrievalOutputs o{false, false, false};
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
  task.tokenization.prompt_field = rq.prompt_field;
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
        for (const embed::RetrievalVectors& v : r.vectors) {
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
