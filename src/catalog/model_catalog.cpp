#include "catalog/model_catalog.hpp"

#include <algorithm>
#include <optional>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "classify/sequence_classifier.hpp"
#include "core/error.hpp"
#include "embed/hashing_embedder.hpp"
#include "embed/model_folder.hpp"
#include "embed/neural_embedder.hpp"
#include "embed/registry.hpp"
#include "embed/static_embedder.hpp"
#include "embed/use_lite_embedder.hpp"
#include "serving/model_name.hpp"

namespace warden::catalog {

namespace fs = std::filesystem;

namespace {

// Bytes of the regular files directly in `dir` (and one level down: 1_Pooling/ etc.).
std::size_t folder_bytes(const fs::path& dir) {
  std::size_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it.depth() > 1) continue;
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const auto n = it->file_size(size_ec);
      if (!size_ec) total += static_cast<std::size_t>(n);
    }
  }
  return total;
}

// What one float32 byte of weights becomes in each precision: bfloat16 halves it; int8 keeps
// a quarter plus per-row scales, column sums and padding (0.257x measured on bge-small).
double precision_factor(Precision precision) {
  switch (precision) {
    case Precision::Float32:
      return 1.0;
    case Precision::BFloat16:
      return 0.5;
    case Precision::Int8:
      return 0.27;
  }
  return 1.0;
}

// The memory a folder's model will hold once loaded: its weights as f32 (a half-precision
// checkpoint is widened when loaded) scaled to the precision it loads in, plus the rest of
// the files. An estimate from file sizes: the manager needs one before the first load, to
// make room.
// A top-level file of the weights: safetensors ones, or PyTorch's pytorch_model*.bin.
bool safetensors_file(const fs::path& p) {
  return p.extension() == ".safetensors";
}
bool pytorch_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.starts_with("pytorch_model") && p.extension() == ".bin";
}
// An ONNX graph or its external data (model.onnx, model.onnx_data, model.onnx.data), at the top
// or in onnx/: of those, only the file the engine reads (model::find_onnx_file) and its data
// count.
bool onnx_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return p.extension() == ".onnx" || p.extension() == ".onnx_data" ||
         name.find(".onnx.") != std::string::npos;
}

std::size_t estimate_bytes(const fs::path& dir, const embed::ModelFolder& folder, Precision precision) {
  // The engine reads the safetensors when there are any, else pytorch_model.bin (ModelWeights::
  // open_dir): those are the weights; the other format's copy is never read.
  std::size_t safetensors = 0;
  std::size_t pytorch = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::error_code size_ec;
    const auto n = e.is_regular_file(size_ec) ? static_cast<std::size_t>(e.file_size(size_ec)) : 0;
    if (size_ec) continue;
    if (safetensors_file(e.path())) safetensors += n;
    if (pytorch_file(e.path())) pytorch += n;
  }
  std::size_t weights = safetensors > 0 ? safetensors : pytorch;
  // Every ONNX file's bytes, and those of the graph the engine reads (with its data files).
  std::size_t onnx = 0;
  const auto read = weights == 0 ? folder.weights : std::nullopt;
  for (const fs::path& sub : {dir, dir / "onnx"}) {
    for (const fs::directory_entry& e : fs::directory_iterator(sub, ec)) {
      std::error_code size_ec;
      const auto n = e.is_regular_file(size_ec) ? static_cast<std::size_t>(e.file_size(size_ec)) : 0;
      if (size_ec || !onnx_file(e.path())) continue;
      onnx += n;
      if (read && e.path().parent_path() == read->parent_path() &&
          e.path().filename().string().starts_with(read->filename().string())) {
        weights += n;
      }
    }
    ec.clear();
  }
  const bool half = folder.half_precision_checkpoint;
  const std::size_t all = folder_bytes(dir);
  const std::size_t rest = all - std::min(all, safetensors + pytorch + onnx);
  const auto f32 = static_cast<double>(half ? 2 * weights : weights);
  return static_cast<std::size_t>(f32 * precision_factor(precision)) + rest;
}

// The cheap start-up check of a HuggingFace folder: everything but the weights' contents.
struct FolderCheck {
  ModelKind kind = ModelKind::Embedding;
  bool llm_reranker = false;
  std::size_t width = 0;
  std::size_t bytes = 0;
  std::string architecture;
  std::optional<model::static_models::StaticLayout> static_layout;
};
FolderCheck check_folder(const fs::path& dir, Precision precision, const std::string& rerank_template) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    throw Error(ErrorKind::NotFound, fmt::format("folder {} does not exist", dir.string()));
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::NotFound, fmt::format("{} is not a folder", dir.string()));
  const embed::ModelFolder folder =
      embed::inspect_model_folder(dir, rerank_template);  // NotFound / CorruptFile
  embed::require_tokenizer_files(dir);
  if (folder.static_layout) {
    // A static table is memory-mapped, whatever the dtype asked for: its file is its size.
    FolderCheck c;
    c.width = folder.hidden_size;
    c.bytes = folder_bytes(folder.static_layout->files);
    c.architecture = folder.architecture;
    c.static_layout = folder.static_layout;
    return c;
  }
  if (!folder.weights) {
    throw Error(
        ErrorKind::NotFound,
        fmt::format("{} has no weights (model.safetensors, model.safetensors.index.json, pytorch_model.bin, "
                    "pytorch_model.bin.index.json, or an ONNX graph: model.onnx, onnx/model.onnx, "
                    "model_optimized.onnx)",
                    dir.string()));
  }
  FolderCheck c;
  c.kind = folder.kind;
  c.llm_reranker = folder.llm_reranker;
  c.width = folder.hidden_size;
  c.bytes = estimate_bytes(dir, folder, precision);
  c.architecture = folder.architecture;
  return c;
}

// The name a folder is served under when no alias is given: its own name, as the engine's
// id() says it.
std::string folder_name(const fs::path& dir) {
  const fs::path p = fs::absolute(dir).lexically_normal();
  std::string n = p.filename().string();
  if (n.empty()) n = p.parent_path().filename().string();
  return n;
}

CatalogModel folder_model(const std::string& name, const std::string& source, const fs::path& dir,
                          std::string tier, ThreadPool* pool, Precision precision, const std::string& pooling,
                          const std::string& rerank_template) {
  FolderCheck c = check_folder(dir, precision, rerank_template);
  // What the files imply is the job unless a flag says otherwise: --pooling serves an LLM
  // reranker's folder (Qwen3 without sentence-transformers files) as an embedder so pooled.
  if (c.llm_reranker && !pooling.empty()) c.kind = ModelKind::Embedding;
  CatalogModel m;
  m.dir = dir;
  m.width = c.width;
  m.spec.name = name;
  m.spec.source = source;
  m.spec.kind = c.kind;
  m.spec.tier = std::move(tier);
  m.spec.estimated_bytes = c.bytes;
  m.spec.dtype = std::string(precision_name(precision));
  m.spec.architecture = c.architecture;
  const std::size_t bytes = c.bytes;
  if (c.static_layout) {
    m.spec.dtype = "float32";
    m.spec.load = [dir, layout = *c.static_layout, bytes] {
      return serving::make_loaded_model(
          std::unique_ptr<embed::Embedder>(std::make_unique<embed::StaticEmbedder>(dir, layout)), bytes);
    };
  } else if (c.kind == ModelKind::Embedding) {
    m.spec.load = [dir, pool, bytes, precision, pooling] {
      return serving::make_loaded_model(
          std::unique_ptr<embed::Embedder>(
              std::make_unique<embed::NeuralEmbedder>(dir, pool, precision, pooling)),
          bytes);
    };
  } else {
    // A template named for every model applies to the causal LMs among them only.
    const std::string llm_template = c.llm_reranker ? rerank_template : std::string();
    m.spec.load = [dir, pool, bytes, precision, llm_template] {
      return serving::make_loaded_model(
          std::unique_ptr<classify::SequenceClassifier>(
              std::make_unique<classify::NeuralClassifier>(dir, pool, precision, llm_template)),
          bytes);
    };
  }
  return m;
}

CatalogModel builtin_model(const std::string& name, const std::string& builtin, std::string tier,
                           ThreadPool* pool, Precision precision = Precision::Float32) {
  CatalogModel m;
  m.spec.name = name;
  m.spec.source = builtin;
  m.spec.tier = std::move(tier);
  m.spec.architecture = builtin;  // the built-ins are their own architectures
  if (builtin == embed::HashingEmbedder::kId) {
    m.spec.semantic = false;
    m.width = embed::HashingEmbedder::kDim;
    m.spec.load = [] {
      return serving::make_loaded_model(
          std::unique_ptr<embed::Embedder>(std::make_unique<embed::HashingEmbedder>()), 0);
    };
    return m;
  }
  // use-lite: its converted folder must be there (make_builtin_embedder says how to make it).
  const fs::path dir = embed::use_lite_model_dir();
  if (!embed::is_use_lite_model(dir)) {
    (void)embed::make_builtin_embedder(builtin, pool);  // throws the NotFound that says how to install it
  }
  m.dir = dir;
  m.width = 512;
  m.spec.estimated_bytes =
      static_cast<std::size_t>(static_cast<double>(folder_bytes(dir)) * precision_factor(precision));
  m.spec.dtype = std::string(precision_name(precision));
  const std::size_t bytes = m.spec.estimated_bytes;
  m.spec.load = [builtin, pool, bytes, precision] {
    return serving::make_loaded_model(embed::make_builtin_embedder(builtin, pool, precision), bytes);
  };
  return m;
}

CatalogModel resolve(const ModelArg& arg, const CatalogOptions& options) {
  const Precision precision = resolve_precision(arg.dtype.empty() ? options.dtype : arg.dtype);
  const std::string& rerank_template =
      arg.rerank_template.empty() ? options.rerank_template : arg.rerank_template;
  const std::vector<std::string> builtins = embed::builtin_embedder_names();
  if (std::find(builtins.begin(), builtins.end(), arg.source) != builtins.end()) {
    return builtin_model(arg.alias.empty() ? arg.source : arg.alias, arg.source, "builtin", options.pool,
                         precision);
  }
  std::error_code ec;
  const fs::path path(arg.source);
  const bool looks_like_path =
      arg.source.starts_with('/') || arg.source.starts_with('.') || arg.source.starts_with('~');
  if (fs::exists(path, ec) || looks_like_path) {
    return folder_model(arg.alias.empty() ? folder_name(path) : arg.alias, arg.source, path, "model-dir",
                        options.pool, precision, options.pooling, rerank_template);
  }
  const std::optional<hub::ModelId> id = hub::ModelId::parse(arg.source);
  if (!id) {
    throw Error(
        ErrorKind::NotFound,
        fmt::format("unknown model '{}': no folder {} here, and it is neither a built-in model ({}) nor a "
                    "HuggingFace id ORG/NAME[@REVISION]",
                    arg.source, arg.source, fmt::join(builtins, ", ")));
  }
  hub::Snapshot snapshot;
  try {
    snapshot = hub::fetch_model(*id, options.hub, options.progress);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::NotFound) throw;
    // "ORG/NAME" may also have been meant as a relative folder: say both.
    throw Error(ErrorKind::NotFound,
                fmt::format("no folder {} here, and as a HuggingFace id: {}", arg.source, e.what()));
  }
  CatalogModel m = folder_model(arg.alias.empty() ? id->repo : arg.alias, arg.source, snapshot.dir, "hub",
                                options.pool, precision, options.pooling, rerank_template);
  m.spec.tier_reason =
      fmt::format("{}@{} ({})", id->repo, snapshot.commit.substr(0, 12), snapshot.dir.string());
  return m;
}

}  // namespace

Precision resolve_precision(std::string_view dtype) {
  if (dtype == "auto") return fastest_precision();
  const std::optional<Precision> p = parse_precision(dtype);
  if (!p) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("unknown dtype '{}'; choose float32, bfloat16, int8 or auto", dtype));
  }
  return *p;
}

ModelArg parse_model_arg(std::string_view text) {
  ModelArg arg;
  const auto eq = text.find('=');
  const std::string_view before = text.substr(0, eq);
  // A folder or an HF id may hold a '=' too: what comes before one is an alias only when it
  // has no '/' and does not start like a path.
  const bool alias = eq != std::string_view::npos && before.find('/') == std::string_view::npos &&
                     !before.starts_with('.') && !before.starts_with('~');
  if (alias) {
    if (!serving::is_valid_alias(before)) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("--model {}=...: a model name is {}", before, serving::kAliasRule));
    }
    arg.alias = std::string(before);
    arg.source = std::string(text.substr(eq + 1));
  } else {
    arg.source = std::string(text);
  }
  if (arg.source.empty()) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("--model '{}': the model source is empty", text));
  }
  return arg;
}

CatalogModel make_model_spec(const ModelArg& arg, const CatalogOptions& options) {
  if (!arg.alias.empty() && !serving::is_valid_alias(arg.alias)) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("a model name is {}", serving::kAliasRule));
  }
  try {
    return resolve(arg, options);
  } catch (const Error& e) {
    // Every message names the model once: an unknown source's does already.
    const std::string_view message = e.what();
    const std::string what =
        message.starts_with("unknown model '")
            ? std::string(message)
            : fmt::format("model '{}': {}", arg.alias.empty() ? arg.source : arg.alias, message);
    if (options.on_error == OnModelError::Exit) throw Error(e.kind(), what);
    // --on-model-error fallback: the lexical embedder answers under the name asked for,
    // and says so (semantic = false, /info's fallback_reason, a response header).
    CatalogModel m =
        builtin_model(arg.alias.empty() ? arg.source : arg.alias, std::string(embed::HashingEmbedder::kId),
                      "lexical-fallback", options.pool);
    m.spec.source = arg.source;
    m.spec.fallback_reason = what;
    m.spec.tier_reason = what;
    return m;
  }
}

CatalogModel default_model(const CatalogOptions& options) {
  const embed::DefaultEmbedder d = embed::default_embedder();
  CatalogModel m =
      builtin_model(d.name, d.name, d.fallback_reason.empty() ? "semantic-default" : "lexical-fallback",
                    options.pool, resolve_precision(options.dtype));
  m.spec.tier_reason = d.fallback_reason;
  return m;
}

}  // namespace warden::catalog
