#pragma once
// One model opened for one command (`warden embed`, `rerank`, `guard`, `guard-eval`): the same
// `--model` forms as `warden serve` — a built-in, a HuggingFace folder, an HF id fetched into
// the hub cache — and the same `--dtype`, resolved and checked by the catalog, then loaded.

#include <memory>
#include <string>
#include <string_view>

#include "catalog/model_catalog.hpp"
#include "core/model_kind.hpp"

namespace warden::catalog {

struct OpenModel {
  CatalogModel model;                            // the spec (name, tier, dtype) and its folder
  std::shared_ptr<serving::LoadedModel> loaded;  // the embedder or the classifier, loaded
  // The default embedder was the lexical fallback: why (for the command's warning; never silent).
  std::string fallback_reason;
};

// `source` as --model takes it (ALIAS= is not for commands); empty: the default embedder
// (use-lite when converted, else hashing-ngram-256 with fallback_reason set). Throws what
// make_model_spec throws (options.on_error is ignored: a command never falls back), or
// Error(InvalidArgument) when the model is not of `kind`'s family (an embedder for
// Embedding, a classifier for Reranker and Classifier), naming `command`.
OpenModel open_model(std::string_view source, const CatalogOptions& options, ModelKind kind,
                     std::string_view command);

// The source a command's job fingerprint records: the folder (absolute) for a folder or hub
// model, else the built-in's name. A resumed job must name the same model.
std::string model_identity(const OpenModel& m);

}  // namespace warden::catalog
