// HubOptions from the environment (the variables huggingface_hub reads, with its
// precedence), model ids, and the list of files a Warden model needs.

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

#include "core/file.hpp"
#include "core/onnx_files.hpp"
#include "hub/hub.hpp"

namespace warden::hub {

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string trim(std::string s) {
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  return s;
}

bool truthy(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value == "1" || value == "true" || value == "yes" || value == "on";
}

// ~/.cache unless XDG_CACHE_HOME says otherwise, as huggingface_hub does.
std::filesystem::path cache_home() {
  if (const auto xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg;
  if (const auto home = env("HOME"); !home.empty()) return std::filesystem::path(home) / ".cache";
  return std::filesystem::temp_directory_path() / ".cache";
}

// A repo or revision part: [A-Za-z0-9._-]+, not starting with '.', no "..", at most 96.
bool valid_part(std::string_view part) {
  if (part.empty() || part.size() > 96 || part.front() == '.') return false;
  if (part.find("..") != std::string_view::npos) return false;
  return std::all_of(part.begin(), part.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

}  // namespace

HubOptions HubOptions::from_environment() {
  HubOptions o;
  if (auto endpoint = env("HF_ENDPOINT"); !endpoint.empty()) {
    while (endpoint.ends_with('/')) endpoint.pop_back();
    o.endpoint = endpoint;
  }
  const auto hf_home_env = env("HF_HOME");
  const std::filesystem::path hf_home =
      !hf_home_env.empty() ? std::filesystem::path(hf_home_env) : cache_home() / "huggingface";
  o.token = trim(env("HF_TOKEN"));
  if (o.token.empty()) o.token = trim(env("HUGGING_FACE_HUB_TOKEN"));
  if (o.token.empty()) o.token = trim(try_read_file(hf_home / "token").value_or(""));
  if (const auto cache = env("HF_HUB_CACHE"); !cache.empty()) {
    o.cache_dir = cache;
  } else {
    o.cache_dir = hf_home / "hub";
  }
  o.offline = truthy(env("HF_HUB_OFFLINE"));
  return o;
}

std::optional<ModelId> ModelId::parse(std::string_view text) {
  ModelId id;
  if (const auto at = text.find('@'); at != std::string_view::npos) {
    id.revision = std::string(text.substr(at + 1));
    if (!valid_part(id.revision)) return std::nullopt;
    text = text.substr(0, at);
  }
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto org = text.substr(0, slash), name = text.substr(slash + 1);
  if (!valid_part(org) || !valid_part(name)) return std::nullopt;
  id.repo = std::string(text);
  return id;
}

namespace {

// Top-level safetensors weights: model.safetensors or the shards an index names.
bool safetensors_weights(std::string_view name) {
  return name.find('/') == std::string_view::npos && name.size() > 12 && name.ends_with(".safetensors");
}

// Top-level PyTorch weights: pytorch_model.bin, or its index and the shards it names
// (pytorch_model-00001-of-00002.bin).
bool pytorch_weights(std::string_view name) {
  return name.find('/') == std::string_view::npos && name.starts_with("pytorch_model") &&
         (name.ends_with(".bin") || name == "pytorch_model.bin.index.json");
}

// An ONNX graph of a layout Warden reads, or the external data beside one.
bool onnx_graph(std::string_view name) {
  return std::find(kOnnxGraphFiles.begin(), kOnnxGraphFiles.end(), name) != kOnnxGraphFiles.end();
}
bool onnx_data(std::string_view name) {
  return std::any_of(kOnnxGraphFiles.begin(), kOnnxGraphFiles.end(), [name](std::string_view graph) {
    return std::any_of(kOnnxDataSuffixes.begin(), kOnnxDataSuffixes.end(), [&](std::string_view suffix) {
      return name.size() == graph.size() + suffix.size() && name.starts_with(graph) && name.ends_with(suffix);
    });
  });
}

}  // namespace

bool wanted_file(std::string_view name) {
  static constexpr std::array<std::string_view, 14> kNamed = {
      "config.json", "tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json",
      "modules.json", "config_sentence_transformers.json", "sentence_bert_config.json",
      "1_Pooling/config.json", "model.safetensors.index.json",
      // sentence-transformers' StaticEmbedding module
      "0_StaticEmbedding/model.safetensors", "0_StaticEmbedding/tokenizer.json",
      // bge-m3's retrieval heads
      "sparse_linear.pt", "colbert_linear.pt"};
  if (std::find(kNamed.begin(), kNamed.end(), name) != kNamed.end()) return true;
  return safetensors_weights(name) || pytorch_weights(name) || onnx_graph(name) || onnx_data(name);
}

std::vector<std::string> wanted_files(std::span<const std::string> repo_files, WeightFormat format) {
  const auto has = [&](auto&& pred) { return std::any_of(repo_files.begin(), repo_files.end(), pred); };
  const bool safetensors = has([](const std::string& f) { return safetensors_weights(f); });
  const bool checkpoint = safetensors || has([](const std::string& f) { return pytorch_weights(f); });
  // The one ONNX graph taken, when ONNX is what is taken.
  std::string graph;
  if (format == WeightFormat::Onnx || (format == WeightFormat::Auto && !checkpoint)) {
    for (const std::string_view g : kOnnxGraphFiles) {
      if (graph.empty() && has([g](const std::string& f) { return f == g; })) graph = g;
    }
  }
  std::vector<std::string> out;
  for (const std::string& f : repo_files) {
    if (!wanted_file(f)) continue;
    const bool framework = safetensors_weights(f) || pytorch_weights(f);
    const bool onnx = onnx_graph(f) || onnx_data(f);
    if (framework && (format == WeightFormat::Onnx || (safetensors && pytorch_weights(f)))) continue;
    if (onnx && (graph.empty() || !f.starts_with(graph) || (f != graph && !onnx_data(f)))) continue;
    out.push_back(f);
  }
  return out;
}

bool has_weights(std::span<const std::string> files) {
  return std::any_of(files.begin(), files.end(), [](const std::string& f) {
    return safetensors_weights(f) || (pytorch_weights(f) && f.ends_with(".bin")) || onnx_graph(f);
  });
}

}  // namespace warden::hub
