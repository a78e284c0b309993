// Cohere's POST /v1/embed and /v2/embed over the served embedding model: `input_type` picks
// the model's prompt of that purpose, `embedding_types` the forms of each vector
// (http/embedding_types.hpp), `truncate` and `output_dimension` as Cohere defines them.
// The vectors are unit length, as Cohere's are.

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "http/api_error.hpp"
#include "http/embed_rows.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"
#include "serving/results.hpp"

namespace warden::http {

namespace {

// The model's prompt for a Cohere input_type: one named exactly so, else the
// sentence-transformers names that mean the same (search_query: "query"; search_document:
// "document", "passage", "corpus"); none: no prompt beyond the model's default.
const std::string* prompt_for(const Embedder& e, const std::string& input_type) {
  std::vector<std::string_view> names = {input_type};
  if (input_type == "search_query") names.push_back("query");
  if (input_type == "search_document") names.insert(names.end(), {"document", "passage", "corpus"});
  const auto& prompts = e.prompts();
  for (const std::string_view n : names) {
    const auto it = prompts.find(std::string(n));
    if (it != prompts.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

void Router::Impl::cohere_embed(std::shared_ptr<Call> call, std::string_view body, int version) {
  auto request = std::make_shared<CohereEmbedRequest>(parse_cohere_embed(body));
  check_batch_size(request->texts.size(), "texts");
  with_model(call, request->model, {ModelKind::Embedding}, [this, call, request, version] {
    const Embedder& e = dense_embedder(*call);
    check_dimensions(request->output_dimension, e.dim(), "output_dimension");
    // v1 without embedding_types answers a plain list of float vectors; otherwise by type.
    const bool by_type = version >= 2 || !request->embedding_types.empty();
    auto types = std::make_shared<std::vector<EmbeddingType>>(request->embedding_types);
    if (types->empty()) types->push_back(EmbeddingType::Float);
    const std::size_t n = request->texts.size();
    check_response_floats(n * request->output_dimension.value_or(e.dim()) * types->size(), "texts");
    InputOptions o = input_options(e, request->truncate,
                                   request->truncation_direction == TruncationDirection::Left, std::nullopt);
    if (request->input_type) {
      if (const std::string* prompt = prompt_for(e, *request->input_type)) o.prompt = *prompt;
    }
    for (const std::string& t : request->texts) call->characters += code_points(t);
    auto prepare = [&e, request, o](std::size_t i) {
      return prepare_one(e, request->texts[i], nullptr, o, i, "texts");
    };
    serving::InferenceRequest job =
        serving::InferenceRequest::on(call->lease->model(), serving::Output::Pooled);
    job.inputs = n;
    job.prepare = std::move(prepare);
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, "pooled", o), request](std::size_t i) {
        return serving::text_key(prefix, request->texts[i]);
      };
    }
    const bool unit = e.unit_vectors();
    infer(call, std::move(job), [request, version, by_type, types, unit](serving::Inference& r) {
      const Embeddings rows =
          serving::finish_rows(std::move(r.result.rows), request->output_dimension, true, unit);
      std::size_t tokens = 0;
      for (const std::size_t t : r.tokens) tokens += t;
      JsonWriter w;
      w.begin_object();
      w.key("id").value(response_id());
      w.key("embeddings");
      if (by_type) w.begin_object();
      for (const EmbeddingType type : *types) {
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
      w.key("billed_units").begin_object().key("input_tokens").value(static_cast<std::uint64_t>(tokens));
      w.end_object().end_object();
      w.key("response_type").value(by_type ? "embeddings_by_type" : "embeddings_floats");
      w.end_object();
      return json_response(200, w.take());
    });
  });
}

}  // namespace warden::http
