// The embedding routes: TEI's /embed, /embed_all and /similarity, OpenAI's /v1/embeddings.
// Each parses on the I/O thread, tokenizes on a worker, computes in the scheduler's
// batches and formats its answer on a worker (router.hpp).

#include <cmath>
#include <exception>

#include <atomic>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "http/api_error.hpp"
#include "http/base64.hpp"
#include "http/embed_rows.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"
#include "http/router_metrics.hpp"
#include "serving/results.hpp"

namespace warden::http {

std::string input_key(const std::string& prefix, const Input& in) {
  return in.is_ids ? serving::ids_key(prefix, in.ids) : serving::text_key(prefix, in.text);
}

void Router::Impl::check_batch_size(std::size_t n, std::string_view param) const {
  if (n > options.max_client_batch_size) {
    // TEI's wording, so clients that match on it keep working.
    throw ApiError(
        422, "Validation",
        fmt::format("batch size {} > maximum allowed batch size {}", n, options.max_client_batch_size),
        std::string(param));
  }
}

void Router::Impl::check_response_floats(std::size_t floats, std::string_view param) const {
  if (floats > options.max_response_floats) {
    throw ApiError(413, "Validation",
                   fmt::format("the answer would hold {} vector values, more than the limit of {} "
                               "(--max-response-floats): send fewer or shorter inputs",
                               floats, options.max_response_floats),
                   std::string(param));
  }
}

InputOptions Router::Impl::input_options(const Embedder& e, std::optional<bool> truncate, bool left,
                                         const std::optional<std::string>& prompt_name) const {
  try {
    return serving::input_options(e, truncate.value_or(options.auto_truncate),
                                  left ? TruncationSide::Left : TruncationSide::Right, prompt_name);
  } catch (const Error& err) {
    throw ApiError(422, "Validation", err.what(), "prompt_name");
  }
}

PreparedInput Router::Impl::prepare_one(const Embedder& e, std::string_view text,
                                        const std::vector<std::uint32_t>* ids, const InputOptions& o,
                                        std::size_t index, std::string_view param) {
  try {
    if (ids != nullptr) {
      // Ids are already tokenized by the client: a prompt (even the model's default) does
      // not apply to them.
      InputOptions no_prompt = o;
      no_prompt.prompt = {};
      return e.prepare_ids(*ids, no_prompt);
    }
    return e.prepare(text, o);
  } catch (const Error& err) {
    if (err.kind() == ErrorKind::Unsupported) throw ApiError(424, "Backend", err.what(), std::string(param));
    if (err.kind() == ErrorKind::InvalidInput || err.kind() == ErrorKind::InvalidArgument) {
      throw ApiError(422, "Validation", fmt::format("{}[{}]: {}", param, index, err.what()),
                     std::string(param));
    }
    throw;
  }
}

void Router::Impl::embed(std::shared_ptr<Call> call, std::string_view body, bool all) {
  auto request = std::make_shared<EmbedRequest>(parse_tei_embed(body));
  // A malformed body is the client's first problem: 400/422 before 404 or 424.
  check_batch_size(request->inputs.size(), "inputs");
  for (std::size_t i = 0; i < request->inputs.size(); ++i) {
    const Input& in = request->inputs[i];
    // TEI's rule: an empty text is refused (there is nothing to embed), with its Empty type.
    if (!in.is_ids && in.text.empty()) {
      throw ApiError(400, "Empty", fmt::format("`inputs[{}]` cannot be empty", i), "inputs");
    }
  }
  with_model(call, request->model, {ModelKind::Embedding}, [this, call, request, all] {
    const Embedder& e = all ? embedder(*call) : dense_embedder(*call);
    const serving::LoadedModel& m = call->lease->model();
    if (!all) check_dimensions(request->dimensions, e.dim());
    const InputOptions o =
        input_options(e, request->truncate, request->truncation_direction == TruncationDirection::Left,
                      request->prompt_name);
    for (const Input& in : request->inputs) call->characters += code_points(in.text);
    const std::size_t n = request->inputs.size();
    if (!all) check_response_floats(n * request->dimensions.value_or(e.dim()), "inputs");
    // /embed_all answers tokens x dim values: counted as the inputs are tokenized, so that an
    // answer over the limit is refused before anything is computed.
    auto token_floats = std::make_shared<std::atomic<std::size_t>>(0);
    auto prepare = [this, &e, request, o, all, token_floats](std::size_t i) {
      const Input& in = request->inputs[i];
      PreparedInput p = prepare_one(e, in.text, in.is_ids ? &in.ids : nullptr, o, i, "inputs");
      if (all)
        check_response_floats(token_floats->fetch_add(p.tokens * e.dim()) + p.tokens * e.dim(), "inputs");
      return p;
    };
    serving::InferenceRequest job =
        serving::InferenceRequest::on(m, all ? serving::Output::PerToken : serving::Output::Pooled);
    job.inputs = n;
    job.prepare = std::move(prepare);
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, all ? "tokens" : "pooled", o), request](std::size_t i) {
        return input_key(prefix, request->inputs[i]);
      };
    }
    if (all) {
      return infer(call, std::move(job), [this](serving::Inference& r) {
        // Inputs found in the result cache were not tokenized: the whole answer is counted
        // again before it is written.
        std::size_t floats = 0;
        for (const Embeddings& tokens : r.result.per_token) floats += tokens.values().size();
        check_response_floats(floats, "inputs");
        JsonWriter w;
        w.begin_array();
        for (const Embeddings& tokens : r.result.per_token) {
          w.begin_array();
          for (std::size_t t = 0; t < tokens.rows(); ++t) write_row(w, tokens.row(t));
          w.end_array();
        }
        w.end_array();
        return json_response(200, w.take());
      });
    }
    const bool unit = e.unit_vectors();
    infer(call, std::move(job), [request, unit](serving::Inference& r) {
      const Embeddings rows =
          serving::finish_rows(std::move(r.result.rows), request->dimensions, request->normalize, unit);
      JsonWriter w;
      w.begin_array();
      for (std::size_t i = 0; i < rows.rows(); ++i) write_row(w, rows.row(i));
      w.end_array();
      return json_response(200, w.take());
    });
  });
}

void Router::Impl::openai_embed(std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<OpenAiEmbedRequest>(parse_openai_embed(body));
  // A malformed body is the client's first problem: 400/422 before 404 or 424.
  check_batch_size(request->input.size(), "input");
  with_model(call, request->model, {ModelKind::Embedding}, [this, call, request] {
    const Embedder& e = dense_embedder(*call);
    check_dimensions(request->dimensions, e.dim());
    const InputOptions o = input_options(e, std::nullopt, false, std::nullopt);
    check_response_floats(request->input.size() * request->dimensions.value_or(e.dim()), "input");
    for (const Input& in : request->input) call->characters += code_points(in.text);
    auto prepare = [&e, request, o](std::size_t i) {
      const Input& in = request->input[i];
      return prepare_one(e, in.text, in.is_ids ? &in.ids : nullptr, o, i, "input");
    };
    serving::InferenceRequest job =
        serving::InferenceRequest::on(call->lease->model(), serving::Output::Pooled);
    job.inputs = request->input.size();
    job.prepare = std::move(prepare);
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, "pooled", o), request](std::size_t i) {
        return input_key(prefix, request->input[i]);
      };
    }
    // The response names the model that answered: the name it is served under.
    const std::string model_name = call->lease->spec().name;
    const bool unit = e.unit_vectors();
    infer(call, std::move(job), [request, model_name, unit](serving::Inference& r) {
      // OpenAI's vectors are unit length, also when shortened with `dimensions`.
      const Embeddings rows = serving::finish_rows(std::move(r.result.rows), request->dimensions, true, unit);
      std::size_t tokens = 0;
      for (const std::size_t t : r.tokens) tokens += t;
      JsonWriter w;
      w.begin_object().key("object").value("list").key("data").begin_array();
      for (std::size_t i = 0; i < rows.rows(); ++i) {
        w.begin_object().key("object").value("embedding").key("embedding");
        if (request->base64) {
          w.value(base64_floats(rows.row(i)));
        } else {
          write_row(w, rows.row(i));
        }
        w.key("index").value(static_cast<std::uint64_t>(i)).end_object();
      }
      w.end_array();
      w.key("model").value(model_name);
      w.key("usage").begin_object();
      w.key("prompt_tokens").value(static_cast<std::uint64_t>(tokens));
      w.key("total_tokens").value(static_cast<std::uint64_t>(tokens));
      w.end_object().end_object();
      return json_response(200, w.take());
    });
  });
}

void Router::Impl::similarity(std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<SimilarityRequest>(parse_similarity(body));
  // A malformed body is the client's first problem: 400/422 before 404 or 424.
  check_batch_size(request->sentences.size() + 1, "sentences");
  if (request->source_sentence.empty()) {
    throw ApiError(400, "Empty", "`source_sentence` cannot be empty", "source_sentence");
  }
  for (std::size_t i = 0; i < request->sentences.size(); ++i) {
    if (request->sentences[i].empty()) {
      throw ApiError(400, "Empty", fmt::format("`sentences[{}]` cannot be empty", i), "sentences");
    }
  }
  with_model(call, request->model, {ModelKind::Embedding}, [this, call, request] {
    const Embedder& e = dense_embedder(*call);
    const InputOptions o =
        input_options(e, request->truncate, request->truncation_direction == TruncationDirection::Left,
                      request->prompt_name);
    call->characters += code_points(request->source_sentence);
    for (const std::string& s : request->sentences) call->characters += code_points(s);
    // Input 0 is the source, input i the sentence i - 1.
    auto prepare = [&e, request, o](std::size_t i) {
      if (i == 0) return prepare_one(e, request->source_sentence, nullptr, o, 0, "source_sentence");
      return prepare_one(e, request->sentences[i - 1], nullptr, o, i - 1, "sentences");
    };
    serving::InferenceRequest job =
        serving::InferenceRequest::on(call->lease->model(), serving::Output::Pooled);
    job.inputs = request->sentences.size() + 1;
    job.prepare = std::move(prepare);
    if (caching()) {
      job.key = [prefix = cache_prefix(*call, "pooled", o), request](std::size_t i) {
        return serving::text_key(prefix, i == 0 ? request->source_sentence : request->sentences[i - 1]);
      };
    }
    const bool unit = e.unit_vectors();
    infer(call, std::move(job), [unit](serving::Inference& r) {
      // Cosine similarity of the source with each sentence: dot products of unit vectors.
      const Embeddings rows = serving::finish_rows(std::move(r.result.rows), std::nullopt, true, unit);
      const std::span<const float> source = rows.row(0);
      JsonWriter w;
      w.begin_array();
      for (std::size_t i = 1; i < rows.rows(); ++i) {
        const std::span<const float> s = rows.row(i);
        double dot = 0.0;
        for (std::size_t k = 0; k < s.size(); ++k)
          dot += static_cast<double>(source[k]) * static_cast<double>(s[k]);
        w.value(static_cast<float>(dot));
      }
      w.end_array();
      return json_response(200, w.take());
    });
  });
}

}  // namespace warden::http
