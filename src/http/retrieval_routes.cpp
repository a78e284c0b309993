// The retrieval routes beside /embed: TEI's POST /embed_sparse (lexical weights, TEI's answer
// shape [[{"index", "value"}, ...], ...]) and POST /embed_hybrid, which answers any subset of a
// model's dense, sparse and multi-vector (ColBERT) outputs for each input, from one forward pass
// (docs/api.md). Both compute every output the model has (serving::Output::Retrieval) and keep
// the ones asked for, so that all subsets share one result cache entry.

#include <atomic>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "http/api_error.hpp"
#include "http/embed_rows.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"
#include "serving/results.hpp"

namespace warden::http {

namespace {

std::string output_list(const RetrievalOutputs& o) {
  std::vector<std::string_view> names;
  if (o.dense) names.emplace_back("dense");
  if (o.sparse) names.emplace_back("sparse");
  if (o.multi) names.emplace_back("multi");
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

// 424 naming what the model can give when it cannot give everything the request asks for.
void require_outputs(const Call& call, const Embedder& e, const RetrievalOutputs& wanted) {
  const RetrievalOutputs has = e.retrieval_outputs();
  const bool missing =
      (wanted.dense && !has.dense) || (wanted.sparse && !has.sparse) || (wanted.multi && !has.multi);
  if (!missing) return;
  std::string lacking;
  for (const auto& [asked, given, name] :
       {std::tuple{wanted.dense, has.dense, "dense"}, std::tuple{wanted.sparse, has.sparse, "sparse"},
        std::tuple{wanted.multi, has.multi, "multi"}}) {
    if (asked && !given) lacking += lacking.empty() ? name : std::string(", ") + name;
  }
  throw ApiError(
      424, "Backend",
      fmt::format("model {} cannot give {} output: it gives {} (sparse needs a lexical head such as "
                  "bge-m3's sparse_linear.pt, multi a multi-vector head such as its colbert_linear.pt)",
                  call.lease->spec().name, lacking, output_list(has)),
      "outputs");
}

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

void Router::Impl::embed_retrieval(std::shared_ptr<Call> call, std::string_view body, bool sparse_only) {
  auto request =
      std::make_shared<HybridEmbedRequest>(sparse_only ? parse_sparse_embed(body) : parse_hybrid_embed(body));
  const std::vector<Input>& inputs = request->embed.inputs;
  // A malformed body is the client's first problem: 400/422 before 404 or 424.
  check_batch_size(inputs.size(), "inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_ids && inputs[i].text.empty()) {
      throw ApiError(400, "Empty", fmt::format("`inputs[{}]` cannot be empty", i), "inputs");
    }
  }
  with_model(call, request->embed.model, {ModelKind::Embedding}, [this, call, request, sparse_only] {
    const Embedder& e = embedder(*call);
    const RetrievalOutputs wanted = request->outputs.value_or(e.retrieval_outputs());
    require_outputs(*call, e, wanted);
    const EmbedRequest& rq = request->embed;
    if (wanted.dense) check_dimensions(rq.dimensions, e.dim());
    InputOptions o =
        input_options(e, rq.truncate, rq.truncation_direction == TruncationDirection::Left, rq.prompt_name);
    o.query = request->query;
    for (const Input& in : rq.inputs) call->characters += code_points(in.text);
    const std::size_t n = rq.inputs.size();
    const std::size_t dense_floats = wanted.dense ? rq.dimensions.value_or(e.dim()) : 0;
    // Per token, at most one sparse entry (an id and a weight) and one multi-vector row.
    const std::size_t per_token = (wanted.sparse ? 2 : 0) + (wanted.multi ? e.multi_vector_dim() : 0);
    check_response_floats(n * dense_floats, "inputs");
    auto counted = std::make_shared<std::atomic<std::size_t>>(n * dense_floats);
    auto prepare = [this, &e, request, o, per_token, counted](std::size_t i) {
      const Input& in = request->embed.inputs[i];
      PreparedInput p = prepare_one(e, in.text, in.is_ids ? &in.ids : nullptr, o, i, "inputs");
      check_response_floats(counted->fetch_add(p.tokens * per_token) + p.tokens * per_token, "inputs");
      return p;
    };
    serving::InferenceRequest job =
        serving::InferenceRequest::on(call->lease->model(), serving::Output::Retrieval);
    job.inputs = n;
    job.prepare = std::move(prepare);
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, "retrieval", o), request](std::size_t i) {
        return input_key(prefix, request->embed.inputs[i]);
      };
    }
    const bool unit = e.unit_vectors();
    infer(call, std::move(job), [this, request, wanted, unit, sparse_only](serving::Inference& r) {
      const EmbedRequest& asked = request->embed;
      std::vector<RetrievalVectors>& outs = r.result.retrieval;
      // Inputs found in the result cache were not counted as they were tokenized.
      std::size_t floats = 0;
      for (const RetrievalVectors& v : outs) {
        floats += (wanted.dense ? asked.dimensions.value_or(v.dense.size()) : 0) +
                  (wanted.sparse ? 2 * v.sparse.size() : 0) + (wanted.multi ? v.multi.values().size() : 0);
      }
      check_response_floats(floats, "inputs");
      JsonWriter w;
      w.begin_array();
      for (RetrievalVectors& v : outs) {
        if (sparse_only) {
          write_sparse(w, serving::prune_sparse(v.sparse, request->top_k, request->threshold));
          continue;
        }
        w.begin_object();
        if (wanted.dense) {
          Embeddings row(1, v.dense.size());
          std::copy(v.dense.begin(), v.dense.end(), row.values().begin());
          row = serving::finish_rows(std::move(row), asked.dimensions, asked.normalize, unit);
          w.key("dense");
          write_row(w, row.row(0));
        }
        if (wanted.sparse) {
          w.key("sparse");
          write_sparse(w, serving::prune_sparse(v.sparse, request->top_k, request->threshold));
        }
        if (wanted.multi) {
          w.key("multi").begin_array();
          for (std::size_t t = 0; t < v.multi.rows(); ++t) write_row(w, v.multi.row(t));
          w.end_array();
        }
        w.end_object();
      }
      w.end_array();
      return json_response(200, w.take());
    });
  });
}

}  // namespace warden::http
