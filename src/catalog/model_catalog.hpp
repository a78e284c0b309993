#pragma once
// What the user names as a model (`--model`, POST /admin/models) turned into a ModelSpec
// the model manager can load: a built-in embedder (use-lite, hashing-ngram-256), a local
// HuggingFace folder, or a HuggingFace id ORG/NAME[@REVISION] fetched into the hub cache.
//
// Making a spec checks what can be checked without loading the weights, so that a wrong
// --model stops the server at start-up instead of failing its first request: the folder
// exists, config.json parses and names a supported architecture, a tokenizer and
// safetensors weights are there. Hub ids are downloaded (or found in the cache) here.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "core/precision.hpp"
#include "hub/hub.hpp"
#include "serving/model_manager.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::catalog {

// `[ALIAS=]SOURCE`: the alias is what requests call the model. An alias is 1-200 bytes
// of [A-Za-z0-9._/:-], not starting with '/' or '.', so a path with '=' in it stays a path.
struct ModelArg {
  std::string alias;  // empty: the name derives from the source
  std::string source;
  std::string dtype;  // float32|bfloat16|int8|auto (docs/precision.md); empty: CatalogOptions::dtype
  std::string rerank_template =
      {};  // a causal LM's reranker template; empty: CatalogOptions::rerank_template
};
ModelArg parse_model_arg(std::string_view text);

// What to do when a model cannot be used: stop (the caller exits 2), or serve the hashing
// embedder under its name, marked non-semantic, with the reason.
enum class OnModelError { Exit, Fallback };

struct CatalogOptions {
  ThreadPool* pool = nullptr;  // runs every neural model's kernels (one batch at a time)
  hub::HubOptions hub;         // where and how HF ids are fetched
  hub::ProgressFn progress;    // download progress (may be empty)
  OnModelError on_error = OnModelError::Exit;
  std::string dtype = "float32";  // for models whose ModelArg names none
  // Overrides every embedding folder's pooling (TEI's --pooling: cls, mean, max, lasttoken,
  // splade; model::override_pooling); empty: each folder's own.
  std::string pooling;
  // The reranker template (classify/rerank_template.hpp: a name or a .json file) that makes a
  // causal LM's folder without a Pooling module an LLM reranker; empty: its family's own, if any.
  std::string rerank_template;
};

// "float32", "bfloat16", "int8" (or their aliases) or "auto" (the fastest this CPU runs
// within the accuracy bar) -> the precision models load in. Error(InvalidArgument) naming
// the choices for anything else.
Precision resolve_precision(std::string_view dtype);

// A resolved model: its spec, and what start-up sizing needs before any model is loaded.
struct CatalogModel {
  serving::ModelSpec spec;
  std::size_t width = 0;      // hidden size (batches' activations scale with it)
  std::filesystem::path dir;  // the folder the weights load from (empty for hashing)
};

// Resolves, fetches and checks one model. Throws warden::Error naming the model and the
// cause (NotFound: no such folder / id; CorruptFile, Unsupported: a folder Warden cannot
// serve; Io: a download failed) — unless on_error is Fallback, which returns the hashing
// embedder's spec instead (fallback_reason set) and never throws for the model itself.
CatalogModel make_model_spec(const ModelArg& arg, const CatalogOptions& options);

// The default model when the user names none: use-lite when converted, else the hashing
// embedder with a tier_reason saying why (and a warning is the caller's to print).
CatalogModel default_model(const CatalogOptions& options);

}  // namespace warden::catalog
