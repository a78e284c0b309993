#include "model/quantize.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/families/registry.hpp"
#include "model/formats/weights.hpp"

namespace warden::model {

namespace fs = std::filesystem;

namespace {

// Whether load_encoder_model holds `name` in the model's precision: the word embeddings and
// the 2-D weights of the encoder layers (BERT/RoBERTa "encoder.layer.N.", DistilBERT
// "transformer.layer.N."), under any prefix.
bool converted_by_loader(const formats::Tensor& t) {
  const std::string_view name = t.name;
  if (t.shape.size() != 2 || !name.ends_with(".weight")) return false;
  if (name == "embeddings.word_embeddings.weight" || name.ends_with(".embeddings.word_embeddings.weight")) {
    return true;
  }
  // `part` at the start of the name or right after a '.' (a prefix such as "bert.").
  auto inside = [&](std::string_view part) {
    for (std::size_t at = name.find(part); at != std::string_view::npos; at = name.find(part, at + 1)) {
      if (at == 0 || name[at - 1] == '.') return true;
    }
    return false;
  };
  return inside("encoder.layer.") || inside("transformer.layer.");
}

// Weight files the copy leaves out: the converted safetensors replace them, and other
// frameworks' copies of the float weights would only mislead.
bool weight_file(const fs::path& p) {
  const std::string name = p.filename().string();
  const std::string ext = p.extension().string();
  return ext == ".safetensors" || name == "model.safetensors.index.json" || ext == ".bin" || ext == ".onnx" ||
         ext == ".h5" || ext == ".msgpack" || ext == ".ot" || ext == ".pt" || ext == ".pth" || ext == ".gguf";
}

template <typename T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}

}  // namespace

QuantizeReport quantize_model_folder(const fs::path& in, const fs::path& out, Precision precision) {
  if (precision == Precision::Float32) {
    throw Error(ErrorKind::Unsupported, "quantize to bfloat16 or int8 (float32 is the original)");
  }
  if (!fs::is_directory(in)) {
    throw Error(ErrorKind::NotFound, fmt::format("model folder {} does not exist", in.string()));
  }
  const metadata::ModelConfig config = families::read_model_config(in / "config.json");
  // By model_type, as the folder's config class is chosen.
  const model::families::Family* family = model::families::for_model_type(config.model_type);
  if (family == nullptr || !family->quantize_ahead) {
    std::string can;
    for (const model::families::Family* f : model::families::all()) {
      if (f->quantize_ahead) can += (can.empty() ? "" : ", ") + std::string(f->name);
    }
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: {} cannot be quantised ahead of time ({} can; USE-lite converts at load in "
                            "milliseconds: serve it with --dtype)",
                            (in / "config.json").string(),
                            family != nullptr ? "the " + std::string(family->name) + " family"
                                              : "model_type '" + config.model_type + "'",
                            can));
  }
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec))) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{} already exists and is not an empty folder", out.string()));
  }
  const formats::ModelWeights weights = formats::ModelWeights::open_dir(in);

  // Converted data lives here until the file is written (spans in `tensors` point into it).
  std::vector<std::vector<std::byte>> storage;
  std::vector<formats::TensorToWrite> tensors;
  QuantizeReport report;
  for (const std::string_view name : weights.names()) {
    const formats::Tensor& t = *weights.find(name);
    report.bytes_in += t.data.size();
    if (!converted_by_loader(t) || t.dtype == formats::Dtype::I8) {
      // I8 tensors are an earlier quantisation's: kept, with their scales, as they are.
      tensors.push_back({t.name, t.dtype, t.shape, t.data});
      ++report.copied;
      continue;
    }
    const std::vector<float> values = formats::to_float32(t);  // Unsupported for non-float dtypes, named
    const std::size_t n = t.shape[0];
    const std::size_t k = t.shape[1];
    if (precision == Precision::Int8) {
      kernels::QuantizedRows q;
      try {
        q = kernels::quantize_rows(values, n, k);
      } catch (const Error& e) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: tensor '{}': {}", weights.source().string(), name, e.what()));
      }
      std::vector<std::byte> data(q.values.size());
      std::memcpy(data.data(), q.values.data(), data.size());
      const auto& d = storage.emplace_back(std::move(data));
      tensors.push_back({t.name, formats::Dtype::I8, {n, k}, d});
      std::vector<std::byte> scale(q.scales.size() * sizeof(float));
      std::memcpy(scale.data(), q.scales.data(), scale.size());
      const auto& s = storage.emplace_back(std::move(scale));
      tensors.push_back({t.name + std::string(formats::kInt8ScaleSuffix), formats::Dtype::F32, {n}, s});
    } else {
      std::vector<std::uint16_t> bf(values.size());
      std::transform(values.begin(), values.end(), bf.begin(), formats::float_to_bf16);
      const auto b = bytes_of(bf);
      const auto& d = storage.emplace_back(b.begin(), b.end());
      tensors.push_back({t.name, formats::Dtype::BF16, {n, k}, d});
    }
    ++report.converted;
  }
  if (report.converted == 0) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: no encoder weights found to convert", weights.source().string()));
  }
  for (const formats::TensorToWrite& t : tensors) report.bytes_out += t.data.size();

  fs::create_directories(out);
  // Everything but the weights, subfolders included (1_Pooling/...); links are followed, so a
  // HuggingFace cache snapshot is copied as plain files.
  for (auto it = fs::recursive_directory_iterator(in); it != fs::recursive_directory_iterator(); ++it) {
    // Lexically: fs::relative would resolve a snapshot's links into ../../blobs/<sha>.
    const fs::path rel = it->path().lexically_relative(in);
    if (it->is_directory()) {
      fs::create_directories(out / rel);
    } else if (it->is_regular_file() && !weight_file(it->path())) {
      fs::copy_file(it->path(), out / rel, fs::copy_options::overwrite_existing);
    }
  }
  const std::map<std::string, std::string> metadata{{"format", "pt"},
                                                    {"warden_dtype", std::string(precision_name(precision))}};
  formats::write_safetensors(out / "model.safetensors", tensors, metadata);
  return report;
}

}  // namespace warden::model
