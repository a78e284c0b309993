// libFuzzer: any bytes given to the request-body parsers of the HTTP routes either parse or
// throw http::ApiError with a client status (400 or 422); nothing else may escape, and a
// parsed request keeps the invariants the routes rely on.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http/admin_routes.hpp"
#include "http/api_error.hpp"
#include "http/classify_routes.hpp"
#include "http/cohere_embed_route.hpp"
#include "http/embed_routes.hpp"
#include "http/guard_route.hpp"
#include "http/litellm_guardrail_route.hpp"
#include "http/retrieval_routes.hpp"
#include "http/root_route.hpp"
#include "http/token_routes.hpp"

namespace {

template <typename Parse, typename Check>
void run(Parse parse, std::string_view body, Check check) {
  try {
    check(parse(body));
  } catch (const warden::http::ApiError& e) {
    if (e.status() != 400 && e.status() != 422) std::abort();
  }
}

void check_inputs(const auto& inputs) {
  if (inputs.empty()) std::abort();
  for (const auto& in : inputs) {
    if (in.is_ids == in.ids.empty()) std::abort();  // ids inputs are never empty, texts carry none
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace h = warden::http;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  run(h::parse_tei_embed, body, [](const h::EmbedRequest& r) {
    check_inputs(r.inputs);
    if (r.dimensions && *r.dimensions == 0) std::abort();
  });
  const auto check_retrieval = [](const h::HybridEmbedRequest& r) {
    check_inputs(r.embed.inputs);
    if (r.top_k && *r.top_k == 0) std::abort();
    if (r.threshold && !(*r.threshold >= 0.0F)) std::abort();
    if (r.outputs && !r.outputs->dense && !r.outputs->sparse && !r.outputs->multi) std::abort();
  };
  run(h::parse_sparse_embed, body, check_retrieval);
  run(h::parse_hybrid_embed, body, check_retrieval);
  run(h::parse_openai_embed, body, [](const h::OpenAiEmbedRequest& r) {
    check_inputs(r.input);
    for (const auto& in : r.input) {
      if (!in.is_ids && in.text.empty()) std::abort();
    }
  });
  run(h::parse_similarity, body, [](const h::SimilarityRequest& r) {
    if (r.sentences.empty()) std::abort();
  });
  run(h::parse_tokenize, body, [](const h::TokenizeRequest& r) {
    if (r.inputs.empty() || (r.single && r.inputs.size() != 1)) std::abort();
  });
  run(h::parse_decode, body, [](const h::DecodeRequest& r) {
    if (r.ids.empty() || (r.single && r.ids.size() != 1)) std::abort();
    for (const auto& ids : r.ids) {
      if (ids.empty()) std::abort();
    }
  });
  // Parsed retrieval weights are usable as divisors: each >= 0, their sum > 0.
  auto check_weights = [](const std::optional<warden::embed::RetrievalWeights>& w) {
    if (w &&
        (!(w->dense >= 0) || !(w->sparse >= 0) || !(w->multi >= 0) || !(w->dense + w->sparse + w->multi > 0)))
      std::abort();
  };
  run(h::parse_tei_rerank, body, [&](const h::RerankRequest& r) {
    if (r.query.empty() || r.texts.empty()) std::abort();
    check_weights(r.retrieval_weights);
  });
  run(h::parse_documents_rerank, body, [&](const h::DocumentsRerankRequest& r) {
    if (r.query.empty() || r.documents.empty() || (r.top_n && *r.top_n == 0)) std::abort();
    check_weights(r.retrieval_weights);
  });
  run(h::parse_cohere_embed, body, [](const h::CohereEmbedRequest& r) {
    if (r.texts.empty() || (r.output_dimension && *r.output_dimension == 0)) std::abort();
    for (const auto& t : r.texts) {
      if (t.empty()) std::abort();
    }
  });
  run(h::parse_root, body, [](const h::RootRequest&) {});
  run(h::parse_guard, body, [](const h::GuardRequest& r) {
    if (r.inputs.empty()) std::abort();
  });
  run(h::parse_litellm_guardrail, body, [](const h::GuardrailRequest& r) {
    if (r.input_type != "request" && r.input_type != "response") std::abort();
  });
  run(h::parse_predict, body, [](const h::PredictRequest& r) {
    if (r.inputs.empty() || (r.single && r.inputs.size() != 1)) std::abort();
  });
  run(h::parse_admin_model, body, [](const h::AdminModelRequest& r) {
    if (r.source.empty() || r.source.size() > 200 || r.name.size() > 128) std::abort();
  });
  return 0;
}
