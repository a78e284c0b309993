// The request-body parsers of every route (each route family's header, src/http/<family>_routes.hpp, over
// src/http/body_fields.hpp): each accepted shape, each wrong type, empty lists, nulls, invalid UTF-8, depth
// bombs and out-of-range token ids.

#include "http/admin_routes.hpp"
#include "http/classify_routes.hpp"
#include "http/cohere_embed_route.hpp"
#include "http/embed_routes.hpp"
#include "http/guard_route.hpp"
#include "http/litellm_guardrail_route.hpp"
#include "http/retrieval_routes.hpp"
#include "http/root_route.hpp"
#include "http/token_routes.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "http/api_error.hpp"

namespace warden::http {
namespace {

using Ids = std::vector<std::uint32_t>;

// Runs parse(body) and checks it throws ApiError with the status, type and param given; the
// message must contain `needle` (a field name and index) when one is given.
template <typename Parse>
void expect_error(Parse parse, std::string_view body, int status, std::string_view param = {},
                  std::string_view needle = {}) {
  SCOPED_TRACE(std::string(body.substr(0, 200)));
  try {
    (void)parse(body);
    ADD_FAILURE() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_EQ(e.error_type(), status == 400 ? "Empty" : "Validation");
    EXPECT_EQ(e.param(), param) << e.what();
    if (!needle.empty()) {
      EXPECT_NE(std::string_view(e.what()).find(needle), std::string_view::npos) << e.what();
    }
  }
}

// The body-level failures every parser shares.
template <typename Parse>
void expect_common_body_errors(Parse parse) {
  expect_error(parse, R"({"inputs": )", 422, "", "not valid JSON");
  expect_error(parse, "", 422, "", "not valid JSON");
  expect_error(parse, "[]", 422, "", "JSON object");
  expect_error(parse, "\"text\"", 422, "", "JSON object");
  expect_error(parse, "null", 422, "", "JSON object");
  expect_error(parse, "{\"inputs\": \"\xff\xfe\"}", 422, "", "UTF-8");
  expect_error(parse, "{\"query\": \"a\xc3\"}", 422, "", "UTF-8");
  // A depth bomb: 10,000 unclosed brackets, and a closed one just over the limit.
  expect_error(parse, std::string(10000, '['), 422);
  expect_error(parse, std::string(10000, '[') + std::string(10000, ']'), 422, "", "deeper");
  expect_error(parse, "{\"inputs\": " + std::string(10000, '[') + std::string(10000, ']') + "}", 422, "",
               "deeper");
  expect_error(parse, "{\"inputs\": " + std::string(40, '[') + std::string(40, ']') + "}", 422, "", "deeper");
}

TEST(Requests, EveryParserRejectsBadBodies) {
  expect_common_body_errors(parse_tei_embed);
  expect_common_body_errors(parse_openai_embed);
  expect_common_body_errors(parse_similarity);
  expect_common_body_errors(parse_tokenize);
  expect_common_body_errors(parse_decode);
  expect_common_body_errors(parse_tei_rerank);
  expect_common_body_errors(parse_documents_rerank);
  expect_common_body_errors(parse_predict);
}

TEST(Requests, DepthWithinTheLimitIsAccepted) {
  // 31 levels of lists inside the object: the parser stops at 32, not earlier. (The shape is
  // wrong for /embed, so it fails on the type, not the depth.)
  const std::string body = "{\"inputs\": " + std::string(30, '[') + std::string(30, ']') + "}";
  try {
    (void)parse_tei_embed(body);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(std::string_view(e.what()).find("deeper"), std::string_view::npos) << e.what();
  }
}

// ---- /embed

TEST(TeiEmbed, OneString) {
  const EmbedRequest r = parse_tei_embed(R"({"inputs": "hello"})");
  ASSERT_EQ(r.inputs.size(), 1U);
  EXPECT_EQ(r.inputs[0].text, "hello");
  EXPECT_FALSE(r.inputs[0].is_ids);
  EXPECT_TRUE(r.normalize);
  EXPECT_FALSE(r.truncate.has_value());
  EXPECT_EQ(r.truncation_direction, TruncationDirection::Right);
  EXPECT_FALSE(r.prompt_name.has_value());
  EXPECT_FALSE(r.dimensions.has_value());
}

TEST(TeiEmbed, ListOfStringsIncludingAnEmptyOne) {
  const EmbedRequest r = parse_tei_embed(R"({"inputs": ["a", "", "ü"]})");
  ASSERT_EQ(r.inputs.size(), 3U);
  EXPECT_EQ(r.inputs[0].text, "a");
  EXPECT_EQ(r.inputs[1].text, "");
  EXPECT_EQ(r.inputs[2].text, "ü");
  EXPECT_EQ(parse_tei_embed(R"({"inputs": ""})").inputs.at(0).text, "");
}

TEST(TeiEmbed, FlatIdsAreOneSequence) {
  const EmbedRequest r = parse_tei_embed(R"({"inputs": [101, 0, 4294967295]})");
  ASSERT_EQ(r.inputs.size(), 1U);
  EXPECT_TRUE(r.inputs[0].is_ids);
  EXPECT_EQ(r.inputs[0].ids, (Ids{101, 0, 4294967295U}));
}

TEST(TeiEmbed, BatchOfIdsAndMixed) {
  const EmbedRequest r = parse_tei_embed(R"({"inputs": [[1, 2], [3]]})");
  ASSERT_EQ(r.inputs.size(), 2U);
  EXPECT_EQ(r.inputs[0].ids, (Ids{1, 2}));
  EXPECT_EQ(r.inputs[1].ids, (Ids{3}));
  const EmbedRequest m = parse_tei_embed(R"({"inputs": ["a", [7, 8], "b"]})");
  ASSERT_EQ(m.inputs.size(), 3U);
  EXPECT_FALSE(m.inputs[0].is_ids);
  EXPECT_TRUE(m.inputs[1].is_ids);
  EXPECT_EQ(m.inputs[1].ids, (Ids{7, 8}));
  EXPECT_EQ(m.inputs[2].text, "b");
}

TEST(TeiEmbed, AllFields) {
  const EmbedRequest r = parse_tei_embed(
      R"({"inputs": "a", "normalize": false, "truncate": true, "truncation_direction": "left",
          "prompt_name": "query", "dimensions": 64, "unknown": {"x": [1, 2]}})");
  EXPECT_FALSE(r.normalize);
  EXPECT_EQ(r.truncate, true);
  EXPECT_EQ(r.truncation_direction, TruncationDirection::Left);
  EXPECT_EQ(r.prompt_name, "query");
  EXPECT_EQ(r.dimensions, 64U);
  EXPECT_EQ(parse_tei_embed(R"({"inputs": "a", "truncate": false})").truncate, false);
  EXPECT_EQ(parse_tei_embed(R"({"inputs": "a", "truncation_direction": "Left"})").truncation_direction,
            TruncationDirection::Left);
  EXPECT_EQ(parse_tei_embed(R"({"inputs": "a", "truncation_direction": "RIGHT"})").truncation_direction,
            TruncationDirection::Right);
}

TEST(TeiEmbed, NullMeansAbsent) {
  const EmbedRequest r = parse_tei_embed(
      R"({"inputs": "a", "normalize": null, "truncate": null, "truncation_direction": null,
          "prompt_name": null, "dimensions": null})");
  EXPECT_TRUE(r.normalize);
  EXPECT_FALSE(r.truncate.has_value());
  EXPECT_EQ(r.truncation_direction, TruncationDirection::Right);
  EXPECT_FALSE(r.prompt_name.has_value());
  EXPECT_FALSE(r.dimensions.has_value());
  expect_error(parse_tei_embed, R"({"inputs": null})", 422, "inputs", "missing field `inputs`");
}

TEST(TeiEmbed, Errors) {
  const auto p = parse_tei_embed;
  expect_error(p, R"({})", 422, "inputs", "missing field `inputs`");
  expect_error(p, R"({"inputs": []})", 400, "inputs", "`inputs` cannot be empty");
  expect_error(p, R"({"inputs": 5})", 422, "inputs");
  expect_error(p, R"({"inputs": true})", 422, "inputs");
  expect_error(p, R"({"inputs": {"a": 1}})", 422, "inputs");
  expect_error(p, R"({"inputs": ["a", 5]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": ["a", null]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": ["a", {"text": "b"}]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": ["a", []]})", 422, "inputs", "`inputs[1]` cannot be an empty list");
  expect_error(p, R"({"inputs": [[]]})", 422, "inputs", "`inputs[0]`");
  expect_error(p, R"({"inputs": [["a"]]})", 422, "inputs", "`inputs[0][0]`");
  // Token ids: non-negative integers that fit in 32 bits.
  expect_error(p, R"({"inputs": [1, "a"]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": [1, -1]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": [4294967296]})", 422, "inputs", "`inputs[0]`");
  expect_error(p, R"({"inputs": [18446744073709551615]})", 422, "inputs", "`inputs[0]`");
  expect_error(p, R"({"inputs": [1.5]})", 422, "inputs", "`inputs[0]`");
  expect_error(p, R"({"inputs": [1.0]})", 422, "inputs", "`inputs[0]`");
  expect_error(p, R"({"inputs": [1e30]})", 422, "inputs", "`inputs[0]`");
  expect_error(p, R"({"inputs": [[1, 2], [3, true]]})", 422, "inputs", "`inputs[1][1]`");
  expect_error(p, R"({"inputs": [[1, 99999999999999999999999]]})", 422);  // bigger than 64 bits
  // Other fields.
  expect_error(p, R"({"inputs": "a", "normalize": "yes"})", 422, "normalize", "`normalize`");
  expect_error(p, R"({"inputs": "a", "normalize": 1})", 422, "normalize");
  expect_error(p, R"({"inputs": "a", "truncate": "true"})", 422, "truncate");
  expect_error(p, R"({"inputs": "a", "truncation_direction": "up"})", 422, "truncation_direction");
  expect_error(p, R"({"inputs": "a", "truncation_direction": 1})", 422, "truncation_direction");
  expect_error(p, R"({"inputs": "a", "prompt_name": 3})", 422, "prompt_name");
  expect_error(p, R"({"inputs": "a", "dimensions": 0})", 422, "dimensions");
  expect_error(p, R"({"inputs": "a", "dimensions": -4})", 422, "dimensions");
  expect_error(p, R"({"inputs": "a", "dimensions": 2.5})", 422, "dimensions");
  expect_error(p, R"({"inputs": "a", "dimensions": true})", 422, "dimensions");
  expect_error(p, R"({"inputs": "a", "dimensions": "8"})", 422, "dimensions");
}

// ---- /v1/embeddings

TEST(OpenAiEmbed, Shapes) {
  const OpenAiEmbedRequest one = parse_openai_embed(R"({"input": "a"})");
  ASSERT_EQ(one.input.size(), 1U);
  EXPECT_EQ(one.input[0].text, "a");
  EXPECT_TRUE(one.model.empty());
  EXPECT_FALSE(one.base64);
  EXPECT_FALSE(one.dimensions.has_value());
  EXPECT_TRUE(one.user.empty());
  EXPECT_EQ(parse_openai_embed(R"({"input": ["a", "b"]})").input.size(), 2U);
  const OpenAiEmbedRequest ids = parse_openai_embed(R"({"input": [1, 2, 3]})");
  ASSERT_EQ(ids.input.size(), 1U);
  EXPECT_EQ(ids.input[0].ids, (Ids{1, 2, 3}));
  const OpenAiEmbedRequest batch = parse_openai_embed(R"({"input": [[1], [2, 3]]})");
  ASSERT_EQ(batch.input.size(), 2U);
  EXPECT_EQ(batch.input[1].ids, (Ids{2, 3}));
}

TEST(OpenAiEmbed, AllFields) {
  const OpenAiEmbedRequest r = parse_openai_embed(
      R"({"input": "a", "model": "m", "encoding_format": "base64", "dimensions": 3, "user": "u"})");
  EXPECT_EQ(r.model, "m");
  EXPECT_TRUE(r.base64);
  EXPECT_EQ(r.dimensions, 3U);
  EXPECT_EQ(r.user, "u");
  EXPECT_FALSE(parse_openai_embed(R"({"input": "a", "encoding_format": "float"})").base64);
  const OpenAiEmbedRequest nulls = parse_openai_embed(
      R"({"input": "a", "model": null, "encoding_format": null, "dimensions": null, "user": null})");
  EXPECT_TRUE(nulls.model.empty());
  EXPECT_FALSE(nulls.base64);
}

TEST(OpenAiEmbed, Errors) {
  const auto p = parse_openai_embed;
  expect_error(p, R"({"inputs": "a"})", 422, "input", "missing field `input`");
  expect_error(p, R"({"input": []})", 400, "input");
  expect_error(p, R"({"input": 5})", 422, "input");
  expect_error(p, R"({"input": ""})", 422, "input", "`input` cannot be an empty string");
  expect_error(p, R"({"input": ["a", "", "b"]})", 422, "input", "`input[1]` cannot be an empty string");
  expect_error(p, R"({"input": [[1], []]})", 422, "input", "`input[1]`");
  expect_error(p, R"({"input": [-3]})", 422, "input", "`input[0]`");
  expect_error(p, R"({"input": "a", "encoding_format": "int8"})", 422, "encoding_format");
  expect_error(p, R"({"input": "a", "encoding_format": "Float"})", 422, "encoding_format");
  expect_error(p, R"({"input": "a", "encoding_format": true})", 422, "encoding_format");
  expect_error(p, R"({"input": "a", "model": 1})", 422, "model");
  expect_error(p, R"({"input": "a", "user": []})", 422, "user");
  expect_error(p, R"({"input": "a", "dimensions": 0})", 422, "dimensions");
  expect_error(p, R"({"input": "a", "dimensions": false})", 422, "dimensions");
}

// ---- /similarity

TEST(Similarity, TeiShape) {
  const SimilarityRequest r = parse_similarity(
      R"({"inputs": {"source_sentence": "q", "sentences": ["a", "b"]},
          "parameters": {"truncate": true, "truncation_direction": "Left", "prompt_name": "p"}})");
  EXPECT_EQ(r.source_sentence, "q");
  EXPECT_EQ(r.sentences, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.truncate, true);
  EXPECT_EQ(r.truncation_direction, TruncationDirection::Left);
  EXPECT_EQ(r.prompt_name, "p");
}

TEST(Similarity, TopLevelParametersAndPrecedence) {
  const SimilarityRequest r = parse_similarity(
      R"({"inputs": {"source_sentence": "q", "sentences": ["a"]}, "truncate": false,
          "truncation_direction": "left", "prompt_name": "top"})");
  EXPECT_EQ(r.truncate, false);
  EXPECT_EQ(r.truncation_direction, TruncationDirection::Left);
  EXPECT_EQ(r.prompt_name, "top");
  const SimilarityRequest both = parse_similarity(
      R"({"inputs": {"source_sentence": "q", "sentences": ["a"]}, "truncate": false, "prompt_name": "top",
          "parameters": {"truncate": true, "prompt_name": "nested", "truncation_direction": null}})");
  EXPECT_EQ(both.truncate, true);
  EXPECT_EQ(both.prompt_name, "nested");
  EXPECT_EQ(both.truncation_direction, TruncationDirection::Right);
  const SimilarityRequest plain =
      parse_similarity(R"({"inputs": {"source_sentence": "", "sentences": ["a"]}, "parameters": null})");
  EXPECT_FALSE(plain.truncate.has_value());
  EXPECT_FALSE(plain.prompt_name.has_value());
}

TEST(Similarity, Errors) {
  const auto p = parse_similarity;
  expect_error(p, R"({})", 422, "inputs");
  expect_error(p, R"({"inputs": "q"})", 422, "inputs");
  expect_error(p, R"({"inputs": ["q", "a"]})", 422, "inputs");
  expect_error(p, R"({"inputs": {"sentences": ["a"]}})", 422, "inputs", "`inputs.source_sentence`");
  expect_error(p, R"({"inputs": {"source_sentence": 1, "sentences": ["a"]}})", 422, "inputs",
               "`inputs.source_sentence`");
  expect_error(p, R"({"inputs": {"source_sentence": "q"}})", 422, "inputs", "`inputs.sentences`");
  expect_error(p, R"({"inputs": {"source_sentence": "q", "sentences": []}})", 400, "inputs",
               "`inputs.sentences` cannot be empty");
  expect_error(p, R"({"inputs": {"source_sentence": "q", "sentences": "a"}})", 422, "inputs");
  expect_error(p, R"({"inputs": {"source_sentence": "q", "sentences": ["a", 2]}})", 422, "inputs",
               "`inputs.sentences[1]`");
  const std::string ok = R"("inputs": {"source_sentence": "q", "sentences": ["a"]})";
  expect_error(p, "{" + ok + R"(, "parameters": [1]})", 422, "parameters");
  expect_error(p, "{" + ok + R"(, "parameters": {"truncate": 1}})", 422, "truncate");
  expect_error(p, "{" + ok + R"(, "parameters": {"truncation_direction": "middle"}})", 422,
               "truncation_direction");
  expect_error(p, "{" + ok + R"(, "prompt_name": false})", 422, "prompt_name");
}

// ---- /tokenize

TEST(Tokenize, Shapes) {
  const TokenizeRequest one = parse_tokenize(R"({"inputs": "hello"})");
  EXPECT_TRUE(one.single);
  EXPECT_EQ(one.inputs, (std::vector<std::string>{"hello"}));
  EXPECT_TRUE(one.add_special_tokens);
  EXPECT_FALSE(one.prompt_name.has_value());
  const TokenizeRequest many =
      parse_tokenize(R"({"inputs": ["a", "b"], "add_special_tokens": false, "prompt_name": "q"})");
  EXPECT_FALSE(many.single);
  EXPECT_EQ(many.inputs, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(many.add_special_tokens);
  EXPECT_EQ(many.prompt_name, "q");
  EXPECT_TRUE(parse_tokenize(R"({"inputs": "a", "add_special_tokens": null})").add_special_tokens);
}

TEST(Tokenize, Errors) {
  const auto p = parse_tokenize;
  expect_error(p, R"({})", 422, "inputs");
  expect_error(p, R"({"inputs": []})", 400, "inputs");
  expect_error(p, R"({"inputs": 3})", 422, "inputs");
  expect_error(p, R"({"inputs": [1, 2]})", 422, "inputs", "`inputs[0]`");
  expect_error(p, R"({"inputs": ["a", ["b"]]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": "a", "add_special_tokens": "no"})", 422, "add_special_tokens");
  expect_error(p, R"({"inputs": "a", "prompt_name": ["q"]})", 422, "prompt_name");
}

// ---- /decode

TEST(Decode, Shapes) {
  const DecodeRequest one = parse_decode(R"({"ids": [1, 2, 3]})");
  EXPECT_TRUE(one.single);
  ASSERT_EQ(one.ids.size(), 1U);
  EXPECT_EQ(one.ids[0], (Ids{1, 2, 3}));
  EXPECT_TRUE(one.skip_special_tokens);
  const DecodeRequest many = parse_decode(R"({"ids": [[1], [2, 3]], "skip_special_tokens": false})");
  EXPECT_FALSE(many.single);
  ASSERT_EQ(many.ids.size(), 2U);
  EXPECT_EQ(many.ids[1], (Ids{2, 3}));
  EXPECT_FALSE(many.skip_special_tokens);
}

TEST(Decode, Errors) {
  const auto p = parse_decode;
  expect_error(p, R"({})", 422, "ids");
  expect_error(p, R"({"ids": []})", 400, "ids");
  expect_error(p, R"({"ids": 5})", 422, "ids");
  expect_error(p, R"({"ids": "1 2"})", 422, "ids");
  expect_error(p, R"({"ids": [1, [2]]})", 422, "ids", "`ids[1]`");
  expect_error(p, R"({"ids": [[1], 2]})", 422, "ids", "`ids[1]`");
  expect_error(p, R"({"ids": [[1], []]})", 422, "ids", "`ids[1]`");
  expect_error(p, R"({"ids": [[1], [2, 4294967296]]})", 422, "ids", "`ids[1][1]`");
  expect_error(p, R"({"ids": [true]})", 422, "ids", "`ids[0]`");
  expect_error(p, R"({"ids": ["1"]})", 422, "ids", "`ids[0]`");
  expect_error(p, R"({"ids": [1], "skip_special_tokens": 0})", 422, "skip_special_tokens");
}

// ---- /rerank

TEST(TeiRerank, Fields) {
  const RerankRequest r = parse_tei_rerank(R"({"query": "q", "texts": ["a", "", "c"]})");
  EXPECT_EQ(r.query, "q");
  EXPECT_EQ(r.texts, (std::vector<std::string>{"a", "", "c"}));
  EXPECT_FALSE(r.raw_scores);
  EXPECT_FALSE(r.return_text);
  EXPECT_FALSE(r.truncate.has_value());
  const RerankRequest all = parse_tei_rerank(
      R"({"query": "q", "texts": ["a"], "raw_scores": true, "return_text": true, "truncate": true,
          "truncation_direction": "Left"})");
  EXPECT_TRUE(all.raw_scores);
  EXPECT_TRUE(all.return_text);
  EXPECT_EQ(all.truncate, true);
  EXPECT_EQ(all.truncation_direction, TruncationDirection::Left);
}

TEST(TeiRerank, Errors) {
  const auto p = parse_tei_rerank;
  expect_error(p, R"({"texts": ["a"]})", 422, "query", "missing field `query`");
  expect_error(p, R"({"query": "", "texts": ["a"]})", 422, "query", "`query` cannot be empty");
  expect_error(p, R"({"query": 1, "texts": ["a"]})", 422, "query");
  expect_error(p, R"({"query": "q"})", 422, "texts");
  expect_error(p, R"({"query": "q", "texts": []})", 400, "texts", "`texts` cannot be empty");
  expect_error(p, R"({"query": "q", "texts": "a"})", 422, "texts");
  expect_error(p, R"({"query": "q", "texts": [[1, 2]]})", 422, "texts", "`texts[0]`");
  expect_error(p, R"({"query": "q", "texts": ["a", null]})", 422, "texts", "`texts[1]`");
  expect_error(p, R"({"query": "q", "texts": ["a"], "raw_scores": "yes"})", 422, "raw_scores");
  expect_error(p, R"({"query": "q", "texts": ["a"], "return_text": 1})", 422, "return_text");
}

// ---- /v1/rerank

TEST(V1Rerank, Fields) {
  const DocumentsRerankRequest r =
      parse_documents_rerank(R"({"model": "m", "query": "q", "documents": ["a", {"text": "b", "id": 7}]})");
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.query, "q");
  EXPECT_EQ(r.documents, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(r.top_n.has_value());
  EXPECT_FALSE(r.return_documents);  // Cohere's default: documents only when asked
  const DocumentsRerankRequest r2 =
      parse_documents_rerank(R"({"query": "q", "documents": ["a"], "top_n": 1, "return_documents": true})");
  EXPECT_TRUE(r2.model.empty());
  EXPECT_EQ(r2.top_n, 1U);
  EXPECT_TRUE(r2.return_documents);
  // Jina's and llama.cpp's names: top_k for top_n, input for documents.
  const DocumentsRerankRequest r3 =
      parse_documents_rerank(R"({"query": "q", "input": ["a", "b"], "top_k": 1})");
  EXPECT_EQ(r3.documents, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r3.documents_field, "input");
  EXPECT_EQ(r3.top_n, 1U);
  EXPECT_EQ(parse_documents_rerank(R"({"query": "q", "documents": ["a"], "top_n": 2, "top_k": 2})").top_n,
            2U);
  expect_error(parse_documents_rerank, R"({"query": "q", "documents": ["a"], "top_n": 2, "top_k": 1})", 422,
               "top_k");
  expect_error(parse_documents_rerank, R"({"query": "q", "input": []})", 400, "input");
  EXPECT_FALSE(
      parse_documents_rerank(R"({"query": "q", "documents": ["a"], "top_n": null})").top_n.has_value());
}

TEST(V1Rerank, Errors) {
  const auto p = parse_documents_rerank;
  expect_error(p, R"({"documents": ["a"]})", 422, "query");
  expect_error(p, R"({"query": "", "documents": ["a"]})", 422, "query");
  expect_error(p, R"({"query": "q"})", 422, "documents");
  expect_error(p, R"({"query": "q", "documents": []})", 400, "documents");
  expect_error(p, R"({"query": "q", "documents": "a"})", 422, "documents");
  expect_error(p, R"({"query": "q", "documents": ["a", 3]})", 422, "documents", "`documents[1]`");
  expect_error(p, R"({"query": "q", "documents": [{"txt": "a"}]})", 422, "documents", "`documents[0].text`");
  expect_error(p, R"({"query": "q", "documents": [{"text": 1}]})", 422, "documents", "`documents[0].text`");
  expect_error(p, R"({"query": "q", "documents": ["a"], "top_n": 0})", 422, "top_n");
  expect_error(p, R"({"query": "q", "documents": ["a"], "top_n": -1})", 422, "top_n");
  expect_error(p, R"({"query": "q", "documents": ["a"], "top_n": true})", 422, "top_n");
  expect_error(p, R"({"query": "q", "documents": ["a"], "top_n": 1.5})", 422, "top_n");
  expect_error(p, R"({"query": "q", "documents": ["a"], "return_documents": "no"})", 422, "return_documents");
  expect_error(p, R"({"query": "q", "documents": ["a"], "model": 5})", 422, "model");
}

// ---- /predict

TEST(Predict, SingleText) {
  const PredictRequest r = parse_predict(R"({"inputs": "a"})");
  EXPECT_TRUE(r.single);
  ASSERT_EQ(r.inputs.size(), 1U);
  EXPECT_EQ(r.inputs[0].text, "a");
  EXPECT_FALSE(r.inputs[0].text_pair.has_value());
  EXPECT_FALSE(r.raw_scores);
  EXPECT_FALSE(r.truncate.has_value());
  const PredictRequest list = parse_predict(R"({"inputs": ["a"]})");
  EXPECT_TRUE(list.single);
  ASSERT_EQ(list.inputs.size(), 1U);
  EXPECT_FALSE(list.inputs[0].text_pair.has_value());
}

TEST(Predict, TwoStringsAreOnePairAsInTei) {
  const PredictRequest r = parse_predict(R"({"inputs": ["a", "b"]})");
  EXPECT_TRUE(r.single);
  ASSERT_EQ(r.inputs.size(), 1U);
  EXPECT_EQ(r.inputs[0].text, "a");
  EXPECT_EQ(r.inputs[0].text_pair, "b");
}

TEST(Predict, Batch) {
  const PredictRequest r = parse_predict(
      R"({"inputs": [["a"], ["b", "c"]], "raw_scores": true, "truncate": false, "truncation_direction": "left"})");
  EXPECT_FALSE(r.single);
  ASSERT_EQ(r.inputs.size(), 2U);
  EXPECT_EQ(r.inputs[0].text, "a");
  EXPECT_FALSE(r.inputs[0].text_pair.has_value());
  EXPECT_EQ(r.inputs[1].text, "b");
  EXPECT_EQ(r.inputs[1].text_pair, "c");
  EXPECT_TRUE(r.raw_scores);
  EXPECT_EQ(r.truncate, false);
  EXPECT_EQ(r.truncation_direction, TruncationDirection::Left);
  // A batch of one is still a batch (the response is a list of lists).
  EXPECT_FALSE(parse_predict(R"({"inputs": [["a"]]})").single);
}

TEST(Predict, Errors) {
  const auto p = parse_predict;
  expect_error(p, R"({})", 422, "inputs");
  expect_error(p, R"({"inputs": []})", 400, "inputs");
  expect_error(p, R"({"inputs": 1})", 422, "inputs");
  expect_error(p, R"({"inputs": [1]})", 422, "inputs");
  expect_error(p, R"({"inputs": ["a", "b", "c"]})", 422, "inputs", "3 elements");
  expect_error(p, R"({"inputs": ["a", 2]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": ["a", ["b"]]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": [["a"], "b"]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": [["a"], []]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": [["a"], ["b", "c", "d"]]})", 422, "inputs", "`inputs[1]`");
  expect_error(p, R"({"inputs": [["a"], ["b", 3]]})", 422, "inputs", "`inputs[1][1]`");
  expect_error(p, R"({"inputs": "a", "raw_scores": 1})", 422, "raw_scores");
  expect_error(p, R"({"inputs": "a", "truncate": "no"})", 422, "truncate");
}

// POST /admin/models: an optional "dtype", checked here so that a wrong one is the
// request's 422 on that field; empty means the server's --dtype.
TEST(AdminModel, Dtype) {
  AdminModelRequest r = parse_admin_model(R"({"model": "hashing-ngram-256"})");
  EXPECT_EQ(r.source, "hashing-ngram-256");
  EXPECT_EQ(r.dtype, "");
  EXPECT_EQ(parse_admin_model(R"({"model": "m", "dtype": null})").dtype, "");
  for (const std::string dtype : {"float32", "fp32", "bfloat16", "bf16", "int8", "i8", "auto"}) {
    r = parse_admin_model(R"({"model": "m", "name": "n", "dtype": ")" + dtype + R"("})");
    EXPECT_EQ(r.dtype, dtype);
    EXPECT_EQ(r.name, "n");
  }
  const auto p = parse_admin_model;
  expect_error(p, R"({"model": "m", "dtype": "fp64"})", 422, "dtype", "`dtype` must be one of");
  expect_error(p, R"({"model": "m", "dtype": "INT8"})", 422, "dtype");
  expect_error(p, R"({"model": "m", "dtype": 8})", 422, "dtype");
  expect_error(p, R"({"model": "m", "dtype": ["int8"]})", 422, "dtype");
}

}  // namespace
}  // namespace warden::http
