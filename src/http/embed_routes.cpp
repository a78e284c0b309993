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

namespace warden::http {

std::string text_key(const std::string& prefix, std::string_view text) {
  serving::CacheKey k;
  k.add("text").add(text);
  return prefix + k.str();
}

std::string input_key(const std::string& prefix, const Input& in) {
  if (!in.is_ids) return text_key(prefix, in.text);
  serving::CacheKey k;
  k.add("ids").add(std::span<const std::uint32_t>(in.ids));
  return prefix + k.str();
}

namespace {

Router::Impl::KeyOf input_keys(std::string prefix, std::shared_ptr<const EmbedRequest> request) {
  return [prefix = std::move(prefix), request = std::move(request)](std::size_t i) {
    return input_key(prefix, request->inputs[i]);
  };
}

}  // namespace

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
  InputOptions o;
  o.truncate = truncate.value_or(options.auto_truncate);
  o.side = left ? TruncationSide::Left : TruncationSide::Right;
  std::optional<std::string> name = prompt_name;
  if (!name) name = e.default_prompt_name();
  if (name) {
    const auto& prompts = e.prompts();
    const auto it = prompts.find(*name);
    if (it == prompts.end()) {
      std::string known;
      for (const auto& [k, v] : prompts) known += (known.empty() ? "" : ", ") + k;
      throw ApiError(422, "Validation",
                     fmt::format("prompt_name `{}` is not one of the model's prompts ({})", *name,
                                 known.empty() ? "it has none" : known),
                     "prompt_name");
    }
    o.prompt = it->second;  // the map lives as long as the embedder
  }
  return o;
}

PreparedInput Router::Impl::prepare_one(const Embedder& e, const std::string& text,
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

bool Router::Impl::fail_outcome(Call& call, const serving::Job& job, serving::Outcome outcome) const {
  switch (outcome) {
    case serving::Outcome::Done:
      return false;
    case serving::Outcome::Rejected:
      fail(call, 429, "Overloaded", "model is overloaded: the wait queue is full, retry later");
      return true;
    case serving::Outcome::TimedOut:
      fail(call, 504, "Overloaded",
           fmt::format("request waited longer than the queue timeout of {} ms and was not computed",
                       scheduler.options().queue_timeout.count()));
      return true;
    case serving::Outcome::Cancelled:
      // The client is gone; the answer goes nowhere but keeps the bookkeeping whole.
      fail(call, 499, "Cancelled", "client closed the connection before its answer");
      return true;
    case serving::Outcome::Stopped:
      fail(call, 503, "Unhealthy", "server is shutting down");
      return true;
    case serving::Outcome::Failed: {
      const MappedError e = map_exception(job.exception(), {});
      fail(call, e.status, e.error_type, e.message, e.param);
      return true;
    }
  }
  return false;
}

bool Router::Impl::refuse_if_saturated(Call& call) const {
  // Refuse before tokenizing when the queue is already full: overload costs little.
  if (!scheduler.saturated()) return false;
  metrics->on_rejected();
  fail(call, 429, "Overloaded", "model is overloaded: the wait queue is full, retry later");
  return true;
}

std::optional<std::vector<PreparedInput>> Router::Impl::prepare_timed(Call& call,
                                                                      const Prepare& prepare) const {
  std::vector<PreparedInput> inputs;
  const Clock::time_point start = Clock::now();
  try {
    inputs = prepare();
  } catch (...) {
    const MappedError e = map_exception(std::current_exception(), {});
    fail(call, e.status, e.error_type, e.message, e.param);
    return std::nullopt;
  }
  call.tokenization = Clock::now() - start;
  for (const PreparedInput& in : inputs) call.tokens += in.tokens;
  return inputs;
}

void Router::Impl::respond_on_worker(std::shared_ptr<Call> call, std::function<Response()> make) {
  workers.post([this, call = std::move(call), make = std::move(make)] {
    try {
      finish(*call, make());
    } catch (...) {
      const MappedError e = map_exception(std::current_exception(), {});
      fail(*call, e.status, e.error_type, e.message, e.param);
    }
  });
}

void Router::Impl::run_job(std::shared_ptr<Call> call, serving::BatchRunner& runner, Prepare prepare,
                           Format format) {
  if (refuse_if_saturated(*call)) return;
  workers.post([this, call, &runner, prepare = std::move(prepare), format = std::move(format)]() mutable {
    std::optional<std::vector<PreparedInput>> inputs = prepare_timed(*call, prepare);
    if (!inputs) return;
    const serving::LoadedModel& m = call->lease->model();
    const std::size_t dim = &runner == m.embed_runner.get() ? m.embedder->dim() : 0;
    auto job = std::make_shared<serving::EmbedJob>(
        runner, std::move(*inputs), dim, call->cancelled,
        [this, call, format = std::move(format)](serving::EmbedJob& done, serving::Outcome outcome) mutable {
          // On the compute thread: take the rows and leave; the JSON is written on a worker.
          call->job = done.timings();
          // Timing headers describe computed work only; a refused request carries none.
          call->computed = outcome == serving::Outcome::Done;
          if (fail_outcome(*call, done, outcome)) return;
          auto result = std::make_shared<EmbedResult>();
          result->pooled = std::move(done.pooled);
          result->per_token = std::move(done.per_token);
          for (const PreparedInput& in : done.prepared()) result->tokens.push_back(in.tokens);
          result->prepared = done.take_prepared();
          respond_on_worker(call, [result, format = std::move(format)] { return format(*result); });
        });
    scheduler.submit(std::move(job));
  });
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
  with_model(call, request->model, {model::ModelKind::Embedding}, [this, call, request, all] {
    const Embedder& e = embedder(*call);
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
    KeyOf key_of;
    if (caching()) key_of = input_keys(cache_prefix(*call, all ? "tokens" : "pooled", o), request);
    if (all) {
      return run_embed(call, *m.token_runner, n, std::move(prepare), std::move(key_of), false,
                       [this](EmbedResult& r) {
                         // Inputs found in the result cache were not tokenized: the whole answer
                         // is counted again before it is written.
                         std::size_t floats = 0;
                         for (const Embeddings& tokens : r.per_token) floats += tokens.values().size();
                         check_response_floats(floats, "inputs");
                         JsonWriter w;
                         w.begin_array();
                         for (const Embeddings& tokens : r.per_token) {
                           w.begin_array();
                           for (std::size_t t = 0; t < tokens.rows(); ++t) write_row(w, tokens.row(t));
                           w.end_array();
                         }
                         w.end_array();
                         return json_response(200, w.take());
                       });
    }
    const bool unit = e.unit_vectors();
    run_embed(call, *m.embed_runner, n, std::move(prepare), std::move(key_of), false,
              [request, unit](EmbedResult& r) {
                const Embeddings rows =
                    finish_rows(std::move(r.pooled), request->dimensions, request->normalize, unit);
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
  with_model(call, request->model, {model::ModelKind::Embedding}, [this, call, request] {
    const Embedder& e = embedder(*call);
    check_dimensions(request->dimensions, e.dim());
    const InputOptions o = input_options(e, std::nullopt, false, std::nullopt);
    check_response_floats(request->input.size() * request->dimensions.value_or(e.dim()), "input");
    for (const Input& in : request->input) call->characters += code_points(in.text);
    auto prepare = [&e, request, o](std::size_t i) {
      const Input& in = request->input[i];
      return prepare_one(e, in.text, in.is_ids ? &in.ids : nullptr, o, i, "input");
    };
    KeyOf key_of;
    if (caching()) {
      key_of = [prefix = cache_prefix(*call, "pooled", o), request](std::size_t i) {
        return input_key(prefix, request->input[i]);
      };
    }
    // The response names the model that answered: the name it is served under.
    const std::string model_name = call->lease->spec().name;
    const bool unit = e.unit_vectors();
    run_embed(call, *call->lease->model().embed_runner, request->input.size(), std::move(prepare),
              std::move(key_of), false, [request, model_name, unit](EmbedResult& r) {
                // OpenAI's vectors are unit length, also when shortened with `dimensions`.
                const Embeddings rows = finish_rows(std::move(r.pooled), request->dimensions, true, unit);
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
  with_model(call, request->model, {model::ModelKind::Embedding}, [this, call, request] {
    const Embedder& e = embedder(*call);
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
    KeyOf key_of;
    if (caching()) {
      key_of = [prefix = cache_prefix(*call, "pooled", o), request](std::size_t i) {
        return text_key(prefix, i == 0 ? request->source_sentence : request->sentences[i - 1]);
      };
    }
    const bool unit = e.unit_vectors();
    run_embed(call, *call->lease->model().embed_runner, request->sentences.size() + 1, std::move(prepare),
              std::move(key_of), false, [unit](EmbedResult& r) {
                // Cosine similarity of the source with each sentence: dot products of unit vectors.
                const Embeddings rows = finish_rows(std::move(r.pooled), std::nullopt, true, unit);
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
