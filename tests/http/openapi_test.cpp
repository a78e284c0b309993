// GET /openapi.json's document (src/http/openapi.hpp): valid JSON, OpenAPI 3.0, every route
// with its methods, and every $ref pointing at a component that exists.

#include "http/openapi.hpp"
#include "http/routes.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warden::http {
namespace {

simdjson::dom::element parse(simdjson::dom::parser& parser) {
  simdjson::dom::element doc;
  const simdjson::error_code err = parser.parse(openapi_json().data(), openapi_json().size()).get(doc);
  EXPECT_EQ(err, simdjson::SUCCESS) << simdjson::error_message(err);
  return doc;
}

TEST(OpenApi, ParsesAndIsOpenApi3) {
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parse(parser);
  const std::string_view version = doc["openapi"].get_string();
  EXPECT_TRUE(version.starts_with("3.0.")) << version;
  EXPECT_EQ(std::string_view(doc["components"]["securitySchemes"]["bearerAuth"]["scheme"].get_string()),
            "bearer");
}

// Exactly the router's routes (http/routes.hpp), each with its method: the table and the
// document cannot drift apart.
TEST(OpenApi, ListsEveryRoute) {
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parse(parser);
  std::vector<std::pair<std::string, std::string>> routes;
  for (const Route& r : http::routes()) {
    std::string method(r.method);
    for (char& c : method) c = static_cast<char>(c - 'A' + 'a');
    routes.emplace_back(std::string(r.path), method);
  }
  const simdjson::dom::object paths = doc["paths"].get_object();
  std::set<std::string> distinct;
  for (const auto& [path, method] : routes) distinct.insert(path);
  EXPECT_EQ(paths.size(), distinct.size());
  std::size_t operations = 0;
  for (const auto [path, item] : paths) {
    EXPECT_TRUE(distinct.contains(std::string(path))) << "documented but not routed: " << path;
    operations += item.get_object().size() - (item["parameters"].error() == simdjson::SUCCESS ? 1U : 0U);
  }
  EXPECT_EQ(operations, routes.size());
  for (const auto& [path, method] : routes) {
    ASSERT_EQ(paths[path][method].error(), simdjson::SUCCESS) << method << " " << path;
    const simdjson::dom::element op = paths[path][method];
    EXPECT_TRUE(op["responses"]["200"].is_object()) << path;
    if (method == "post") {
      EXPECT_EQ(op["requestBody"]["content"]["application/json"]["schema"].error(), simdjson::SUCCESS)
          << path;
    }
  }
  std::string_view metrics_type;
  EXPECT_EQ(paths["/metrics"]["get"]["responses"]["200"]["content"]["text/plain"].error(), simdjson::SUCCESS);
}

TEST(OpenApi, DocumentsTheErrorStatuses) {
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parse(parser);
  const simdjson::dom::element embed = doc["paths"]["/embed"]["post"]["responses"];
  for (const char* status : {"400", "401", "405", "413", "415", "422", "424", "429", "431", "503", "504"}) {
    EXPECT_EQ(embed[status].error(), simdjson::SUCCESS) << status;
  }
  EXPECT_EQ(doc["paths"]["/health"]["get"]["responses"]["503"].error(), simdjson::SUCCESS);
  EXPECT_EQ(doc["components"]["responses"]["NotFound"].error(), simdjson::SUCCESS);
  // The /v1 routes answer OpenAI's error body, the others TEI's.
  EXPECT_EQ(std::string_view(doc["paths"]["/v1/embeddings"]["post"]["responses"]["422"]["$ref"].get_string()),
            "#/components/responses/OpenAIValidation");
  EXPECT_EQ(std::string_view(embed["422"]["$ref"].get_string()), "#/components/responses/Validation");
}

// Every "$ref" resolves: a typo in a hand-written document is otherwise invisible.
void check_refs(simdjson::dom::element root, simdjson::dom::element e, int& count) {
  simdjson::dom::object obj;
  simdjson::dom::array arr;
  if (e.get(obj) == simdjson::SUCCESS) {
    for (const auto field : obj) {
      std::string_view ref;
      if (field.key == "$ref" && field.value.get(ref) == simdjson::SUCCESS) {
        ++count;
        ASSERT_TRUE(ref.starts_with("#/")) << ref;
        EXPECT_EQ(root.at_pointer(ref.substr(1)).error(), simdjson::SUCCESS) << ref;
      } else {
        check_refs(root, field.value, count);
      }
    }
  } else if (e.get(arr) == simdjson::SUCCESS) {
    for (const simdjson::dom::element item : arr) check_refs(root, item, count);
  }
}

TEST(OpenApi, EveryRefResolves) {
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parse(parser);
  int count = 0;
  check_refs(doc, doc, count);
  EXPECT_GT(count, 50);
}

}  // namespace
}  // namespace warden::http
