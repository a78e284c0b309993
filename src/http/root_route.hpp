#pragma once
// TEI's POST / and /invocations: what picks the route, and the handler.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/app.hpp"
#include "http/body_fields.hpp"

namespace warden::http {

// TEI's POST / and /invocations: what picks the route (embed, rerank or predict) before the
// body is parsed again by that route's own parser.
struct RootRequest {
  std::string model;       // empty when absent
  bool has_query = false;  // a rerank request ({"query", "texts"}) rather than /predict's
  bool similarity =
      false;  // {"inputs": {"source_sentence", "sentences"}}: /similarity's (HF's sentence-similarity)
};
RootRequest parse_root(std::string_view body);

// root_route.cpp: TEI's POST / and /invocations: the route of the model's own kind (embed,
// rerank or predict).
void root(App& app, std::shared_ptr<Call> call, std::string_view body);

}  // namespace warden::http
