// TEI's /tokenize and /decode: the tokenizer alone, on a worker thread (no model, so they
// do not go through the scheduler's batches).

#include <exception>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "http/api_error.hpp"
#include "http/requests.hpp"
#include "http/router_impl.hpp"
#include "serving/results.hpp"

namespace warden::http {

void Router::Impl::tokenize(std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<TokenizeRequest>(parse_tokenize(body));
  // A malformed body is the client's first problem: 400/422 before 404 or 424.
  check_batch_size(request->inputs.size(), "inputs");
  with_model(call, request->model, {ModelKind::Embedding}, [this, call, request] {
    const Embedder& e = embedder(*call);
    InputOptions o = input_options(e, std::nullopt, false, request->prompt_name);
    o.add_special_tokens = request->add_special_tokens;
    pipeline.post([this, call, request, o, &e] {
      try {
        JsonWriter w;
        w.begin_array();
        for (std::size_t i = 0; i < request->inputs.size(); ++i) {
          std::vector<TokenInfo> tokens;
          try {
            tokens = serving::tei_tokens(e, request->inputs[i], o);
          } catch (const Error& err) {
            if (err.kind() != ErrorKind::InvalidInput) throw;
            throw ApiError(422, "Tokenizer", fmt::format("inputs[{}]: {}", i, err.what()), "inputs");
          }
          w.begin_array();
          for (const TokenInfo& t : tokens) {
            w.begin_object();
            w.key("id").value(static_cast<std::uint64_t>(t.id));
            w.key("text").value(t.text);
            w.key("special").value(t.special);
            w.key("start");
            if (t.start) {
              w.value(static_cast<std::uint64_t>(*t.start));
            } else {
              w.value(nullptr);
            }
            w.key("stop");
            if (t.stop) {
              w.value(static_cast<std::uint64_t>(*t.stop));
            } else {
              w.value(nullptr);
            }
            w.end_object();
          }
          w.end_array();
        }
        w.end_array();
        finish(*call, json_response(200, w.take()));
      } catch (...) {
        const MappedError m = map_exception(std::current_exception(), "inputs");
        fail(*call, m.status, m.error_type, m.message, m.param);
      }
    });
  });
}

void Router::Impl::decode(std::shared_ptr<Call> call, std::string_view body) {
  auto request = std::make_shared<DecodeRequest>(parse_decode(body));
  // A malformed body is the client's first problem: 400/422 before 404 or 424.
  check_batch_size(request->ids.size(), "ids");
  with_model(call, request->model, {ModelKind::Embedding}, [this, call, request] {
    const Embedder& e = embedder(*call);
    pipeline.post([this, call, request, &e] {
      try {
        JsonWriter w;
        w.begin_array();
        for (std::size_t i = 0; i < request->ids.size(); ++i) {
          try {
            w.value(e.decode(request->ids[i], request->skip_special_tokens));
          } catch (const Error& err) {
            if (err.kind() != ErrorKind::InvalidInput) throw;
            throw ApiError(422, "Tokenizer", fmt::format("ids[{}]: {}", i, err.what()), "ids");
          }
        }
        w.end_array();
        finish(*call, json_response(200, w.take()));
      } catch (...) {
        const MappedError m = map_exception(std::current_exception(), "ids");
        fail(*call, m.status, m.error_type, m.message, m.param);
      }
    });
  });
}

}  // namespace warden::http
