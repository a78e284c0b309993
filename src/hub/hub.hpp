#pragma once
// Models by HuggingFace id: finds a model in the HuggingFace cache or downloads the files
// Warden reads (configs, tokenizer, safetensors weights) from the hub, in exactly the
// cache layout huggingface_hub uses, so files fetched by Python tools are reused and vice
// versa. Downloads are resumable, checked against the hub's sha256 and made visible only
// once complete (docs/hub.md).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace warden::hub {

// Which copy of the weights fetch_model takes from a repo that has several: the framework
// checkpoint (safetensors, else pytorch_model.bin), the ONNX graph (core/onnx_files.hpp's
// order, with its external data), or (auto) the checkpoint when there is one, else the graph.
enum class WeightFormat { Auto, Safetensors, Onnx };

struct HubOptions {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT (a mirror); no trailing slash
  std::string token;  // HF_TOKEN, else HUGGING_FACE_HUB_TOKEN, else the file $HF_HOME/token
  // HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub
  std::filesystem::path cache_dir;
  bool offline = false;  // HF_HUB_OFFLINE=1 (or true/yes/on)
  WeightFormat format = WeightFormat::Auto;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds stall_timeout{30000};  // abort when no byte arrives for this long
  static HubOptions from_environment();
};

struct ModelId {
  std::string repo;               // "ORG/NAME"
  std::string revision = "main";  // branch, tag or commit
  // "ORG/NAME" or "ORG/NAME@REV"; nullopt when it is not that shape (each part
  // [A-Za-z0-9._-]+, not starting with '.', no "..", at most 96 characters).
  static std::optional<ModelId> parse(std::string_view text);
};

struct Progress {
  std::string file;
  std::uint64_t done = 0;
  std::uint64_t total = 0;  // 0: unknown
  bool cached = false;      // already in the cache: nothing was downloaded
};
using ProgressFn = std::function<void(const Progress&)>;

struct Snapshot {
  std::filesystem::path dir;       // {cache}/models--ORG--NAME/snapshots/{commit}
  std::string commit;              // 40 hex digits
  std::vector<std::string> files;  // relative to dir
  // Non-empty when the hub could not be reached and the cache answered alone (what
  // huggingface_hub does too): why, for a warning. The snapshot may then be out of date.
  std::string offline_reason;
};

// Finds the model in the cache or downloads the files a Warden model needs, and returns
// its snapshot folder. Online it always asks the hub which commit the revision names, then
// downloads only what the snapshot lacks; offline it uses the cache alone, and so it does
// when the hub cannot be reached (network down, HTTP 5xx) but the cache has the model
// (offline_reason says so; without a cached copy the network error is thrown). Throws
// warden::Error: InvalidArgument (a token is needed or was refused), NotFound (no such
// model or file; not cached while offline), Unsupported (no weights Warden reads: neither
// safetensors, pytorch_model.bin nor an ONNX graph, or none of the format asked for),
// CorruptFile (sha256 mismatch, a hostile answer), Io (network, disk).
Snapshot fetch_model(const ModelId& id, const HubOptions& options, const ProgressFn& progress = {});

// Whether `name` is one of the files fetch_model may take: the configs, tokenizer files and
// sentence-transformers files Warden reads, bge-m3's head files, and weights (safetensors, or
// PyTorch's pytorch_model.bin, its index and shards, or an ONNX graph and its external data).
// Public for tests.
bool wanted_file(std::string_view name);
// The files fetch_model takes from a repo's listing: the wanted ones, with one copy of the
// weights in `format` — the safetensors when the repo has them, else pytorch_model.bin (or its
// shards); the first ONNX graph of core/onnx_files.hpp's order and its data files.
std::vector<std::string> wanted_files(std::span<const std::string> repo_files,
                                      WeightFormat format = WeightFormat::Auto);
// Whether a list of files holds model weights (safetensors, PyTorch or an ONNX graph).
bool has_weights(std::span<const std::string> files);

}  // namespace warden::hub
