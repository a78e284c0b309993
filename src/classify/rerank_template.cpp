#include "classify/rerank_template.hpp"

#include <set>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "model/formats/json_fields.hpp"

namespace warden::classify {

namespace {

// Qwen3-Reranker's model card (Qwen/Qwen3-Reranker-*, README's format_instruction and
// process_inputs): one body between the chat turns, "yes" against "no" by vocabulary entry.
RerankTemplate qwen3_reranker() {
  return {
      .name = "qwen3-reranker",
      .layout = RerankTemplate::Layout::Joint,
      .prefix =
          "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and "
          "the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
          "<|im_start|>user\n",
      .suffix = {"<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
      .body = "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}",
      .default_instruction = "Given a web search query, retrieve relevant passages that answer the query",
      .score_tokens = {"yes", "no"},
  };
}

// mixedbread-ai/mxbai-rerank's MxbaiRerankV2 (mxbai_rerank_v2.py): the chat prefix, the query
// (after "instruction: ...\n" when given) cut to 3/4 of max_length, "\n", the document, then
// "\n", the task prompt and the assistant turn, each piece tokenized apart; "1" against "0".
RerankTemplate mxbai_rerank_v2() {
  return {
      .name = "mxbai-rerank-v2",
      .layout = RerankTemplate::Layout::Pair,
      .prefix =
          "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
          "assistant.<|im_end|>\n<|im_start|>user\n",
      .suffix =
          {"\n",
           "You are a search relevance expert who evaluates how well documents match search queries. "
           "For each query-document pair, carefully analyze the semantic relationship between them, then "
           "provide your binary relevance judgment (0 for not relevant, 1 for relevant).\nRelevance:",
           "<|im_end|>\n<|im_start|>assistant\n"},
      .query = "query: {query}",
      .query_with_instruction = "instruction: {instruction}\nquery: {query}",
      .separator = "\n",
      .document = "document: {document}",
      .max_length = 8192,  // MxbaiRerankV2's default max_length
      .score_tokens = {"1", "0"},
      .token_ids_by_text = true,
  };
}

// FlagEmbedding's BaseLLMReranker (inference/reranker/decoder_only/base.py) as
// BAAI/bge-reranker-v2-gemma runs in it: <bos>, "A: {query}" cut to 3/4 of max_length, "\n",
// "B: {document}", then "\n" and the prompt; the raw "Yes" logit.
RerankTemplate bge_reranker_v2_gemma() {
  return {
      .name = "bge-reranker-v2-gemma",
      .layout = RerankTemplate::Layout::Pair,
      .suffix = {"\n",
                 "Given a query A and a passage B, determine whether the passage contains an answer to the "
                 "query by providing a prediction of either 'Yes' or 'No'."},
      .bos = true,
      .query = "A: {query}",
      .separator = "\n",
      .document = "B: {document}",
      .max_length = 512,  // compute_score's default max_length
      .pair_budget_adds_suffix = true,
      .score_tokens = {"Yes"},
      .token_ids_by_text = true,
  };
}

bool has_placeholder(std::string_view text, std::string_view name) {
  return text.find(fmt::format("{{{}}}", name)) != std::string_view::npos;
}

}  // namespace

RerankTemplate parse_rerank_template(std::string_view text, std::string_view source) {
  simdjson::dom::parser parser;
  const simdjson::dom::object object = model::formats::json_fields::parse_object(parser, text, source);
  const model::formats::json_fields::Fields f(object, source);
  static const std::set<std::string_view> kKeys{"layout",
                                                "prefix",
                                                "suffix",
                                                "bos",
                                                "body",
                                                "query",
                                                "query_with_instruction",
                                                "separator",
                                                "document",
                                                "default_instruction",
                                                "max_length",
                                                "pair_budget_adds_suffix",
                                                "score_tokens",
                                                "token_ids_by_text"};
  for (const auto field : object) {
    if (!kKeys.contains(field.key)) throw f.fail(field.key, "is not a reranker template key");
  }
  RerankTemplate t;
  t.name = std::string(source);
  const std::string layout = f.string("layout").value_or("pair");
  if (layout == "joint") {
    t.layout = RerankTemplate::Layout::Joint;
  } else if (layout == "pair") {
    t.layout = RerankTemplate::Layout::Pair;
  } else {
    throw f.fail("layout", "must be \"joint\" or \"pair\"");
  }
  const auto strings = [&](std::string_view key) {
    std::vector<std::string> out;
    const auto array = f.array(key);
    if (!array) return out;
    for (const auto element : *array) {
      std::string_view s;
      if (element.get_string().get(s) != simdjson::SUCCESS) throw f.fail(key, "must be an array of strings");
      out.emplace_back(s);
    }
    return out;
  };
  t.prefix = f.string("prefix").value_or("");
  t.suffix = strings("suffix");
  t.bos = f.boolean("bos").value_or(false);
  t.body = f.string("body").value_or("");
  t.query = f.string("query").value_or("{query}");
  t.query_with_instruction = f.string("query_with_instruction").value_or("");
  t.separator = f.string("separator").value_or("");
  t.document = f.string("document").value_or("{document}");
  t.default_instruction = f.string("default_instruction").value_or("");
  t.max_length = static_cast<std::size_t>(f.integer("max_length").value_or(0));
  if (f.integer("max_length").value_or(0) < 0) throw f.fail("max_length", "must not be negative");
  t.pair_budget_adds_suffix = f.boolean("pair_budget_adds_suffix").value_or(false);
  t.score_tokens = strings("score_tokens");
  t.token_ids_by_text = f.boolean("token_ids_by_text").value_or(false);
  if (t.layout == RerankTemplate::Layout::Joint) {
    if (!has_placeholder(t.body, "query") || !has_placeholder(t.body, "document")) {
      throw f.fail("body", "must hold {query} and {document} (a joint template's one text)");
    }
  } else {
    if (!has_placeholder(t.query, "query")) throw f.fail("query", "must hold {query}");
    if (!t.query_with_instruction.empty() && !has_placeholder(t.query_with_instruction, "query")) {
      throw f.fail("query_with_instruction", "must hold {query}");
    }
    if (!has_placeholder(t.document, "document")) throw f.fail("document", "must hold {document}");
  }
  if (t.score_tokens.empty() || t.score_tokens.size() > 2) {
    throw f.fail("score_tokens",
                 "must name one token (its logit) or two (the first's logit less the second's)");
  }
  return t;
}

std::vector<std::string_view> rerank_template_names() {
  return {"qwen3-reranker", "mxbai-rerank-v2", "bge-reranker-v2-gemma"};
}

RerankTemplate rerank_template(std::string_view spec) {
  if (spec == "qwen3-reranker") return qwen3_reranker();
  if (spec == "mxbai-rerank-v2") return mxbai_rerank_v2();
  if (spec == "bge-reranker-v2-gemma") return bge_reranker_v2_gemma();
  if (spec.ends_with(".json")) return parse_rerank_template(read_file(std::filesystem::path(spec)), spec);
  throw Error(ErrorKind::InvalidArgument,
              fmt::format("unknown reranker template '{}': name one of {} or a .json file", spec,
                          fmt::join(rerank_template_names(), ", ")));
}

}  // namespace warden::classify
