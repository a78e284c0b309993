#include "serving/results.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "classify/sequence_classifier.hpp"
#include "core/error.hpp"
#include "core/l2_normalize.hpp"

namespace warden::serving {

namespace {

// Softmax of one row of logits, in double (the shift by the largest keeps exp in range).
std::vector<float> softmax(std::span<const float> logits) {
  const float top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> e(logits.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < logits.size(); ++i)
    sum += e[i] = std::exp(static_cast<double>(logits[i] - top));
  std::vector<float> out(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<float>(e[i] / sum);
  return out;
}

}  // namespace

std::string_view task_named(const embed::Embedder& e, const std::string& prompt_name) {
  for (const std::string& t : e.tasks()) {
    if (t == prompt_name) return t;
  }
  return {};
}

std::vector<std::string> input_type_purposes(const std::string& input_type) {
  std::vector<std::string> names = {input_type};
  if (input_type == "search_query" || input_type == "query") {
    names.insert(names.end(), {"query", "search_query", "retrieval.query"});
  } else if (input_type == "search_document" || input_type == "document" || input_type == "passage") {
    names.insert(names.end(), {"document", "passage", "corpus", "search_document", "retrieval.passage"});
  } else if (input_type == "clustering") {
    names.emplace_back("separation");
  }
  return names;
}

void apply_purposes(const embed::Embedder& e, std::span<const std::string> purposes, embed::InputOptions& o) {
  for (const std::string& purpose : purposes) {
    if (const auto it = e.prompts().find(purpose); it != e.prompts().end()) {
      o.prompt = it->second;
      o.task = task_named(e, it->first);
      return;
    }
  }
}

embed::InputOptions input_options(const embed::Embedder& e, bool truncate, embed::TruncationSide side,
                                  const std::optional<std::string>& prompt_name) {
  embed::InputOptions o;
  o.truncate = truncate;
  o.side = side;
  std::optional<std::string> name = prompt_name;
  if (!name) name = e.default_prompt_name();
  if (name) {
    const auto& prompts = e.prompts();
    const auto it = prompts.find(*name);
    if (it == prompts.end()) {
      std::string known;
      for (const auto& [k, v] : prompts) known += (known.empty() ? "" : ", ") + k;
      throw Error(ErrorKind::InvalidArgument, fmt::format("`{}` is not one of the model's prompts ({})",
                                                          *name, known.empty() ? "it has none" : known));
    }
    o.prompt = it->second;  // the map lives as long as the embedder
    o.task = task_named(e, it->first);
  }
  return o;
}

SparseVector prune_sparse(SparseVector v, std::optional<std::size_t> top_k, std::optional<float> threshold) {
  std::vector<std::size_t> keep;
  keep.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!threshold || v.values[i] >= *threshold) keep.push_back(i);
  }
  if (top_k && keep.size() > *top_k) {
    // The largest weights, the lower id first among equals; then back to id order.
    std::stable_sort(keep.begin(), keep.end(),
                     [&v](std::size_t a, std::size_t b) { return v.values[a] > v.values[b]; });
    keep.resize(*top_k);
    std::sort(keep.begin(), keep.end());
  }
  if (keep.size() == v.size()) return v;
  SparseVector out;
  out.indices.reserve(keep.size());
  out.values.reserve(keep.size());
  for (const std::size_t i : keep) {
    out.indices.push_back(v.indices[i]);
    out.values.push_back(v.values[i]);
  }
  return out;
}

Embeddings finish_rows(Embeddings rows, std::optional<std::size_t> dimensions, bool normalize, bool unit) {
  if (unit && !(dimensions && *dimensions < rows.dim())) return rows;
  if (dimensions && *dimensions < rows.dim()) {
    Embeddings cut(rows.rows(), *dimensions);
    for (std::size_t i = 0; i < rows.rows(); ++i)
      std::copy_n(rows.row(i).data(), *dimensions, cut.row(i).data());
    rows = std::move(cut);
  }
  if (normalize) {
    l2_normalize(rows.values(), rows.dim());
  }
  return rows;
}

void check_dimensions(std::optional<std::size_t> dimensions, std::size_t dim, std::string_view field) {
  if (dimensions && (*dimensions == 0 || *dimensions > dim)) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("`{}` must be between 1 and the model's {}, got {}", field, dim, *dimensions));
  }
}

std::vector<float> class_scores(std::span<const float> logits, bool raw) {
  std::vector<float> scores(logits.begin(), logits.end());
  if (raw || scores.empty()) return scores;
  if (scores.size() == 1) {
    scores[0] = classify::sigmoid(scores[0]);
    return scores;
  }
  return softmax(logits);
}

std::vector<std::size_t> by_score(std::span<const float> scores) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  return order;
}

std::vector<embed::TokenInfo> tei_tokens(const embed::Embedder& e, const std::string& text,
                                         const embed::InputOptions& options) {
  std::vector<embed::TokenInfo> tokens = e.tokenize(text, options);
  const std::string full = std::string(options.prompt) + text;
  for (embed::TokenInfo& t : tokens) {
    if (!t.special && t.start && t.stop && *t.start <= *t.stop && *t.stop <= full.size()) {
      t.text = full.substr(*t.start, *t.stop - *t.start);
    }
  }
  return tokens;
}

}  // namespace warden::serving
