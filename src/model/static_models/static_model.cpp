#include "model/static_models/static_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/l2_normalize.hpp"
#include "model/formats/json_fields.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden::model::static_models {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxDim = 1 << 16;
constexpr std::size_t kMaxRows = 1 << 24;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A float tensor's values as float32: F32/F16/BF16 exactly, F64 rounded, I8 widened (model2vec's
// int8 tables keep no scale: the values are the vector).
std::vector<float> floats_of(const formats::Tensor& t, const fs::path& source) {
  const std::size_t n = t.element_count();
  std::vector<float> out(n);
  switch (t.dtype) {
    case formats::Dtype::F64:
      for (std::size_t i = 0; i < n; ++i) {
        double v = 0;
        std::memcpy(&v, t.data.data() + i * sizeof(double), sizeof(double));
        out[i] = static_cast<float>(v);
      }
      return out;
    case formats::Dtype::I8:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<std::int8_t>(t.data[i]));
      return out;
    case formats::Dtype::F32:
    case formats::Dtype::F16:
    case formats::Dtype::BF16:
      formats::to_float32(t, out);
      return out;
    default:
      throw Error(ErrorKind::CorruptFile, fmt::format("{}: tensor '{}' is {}, not a float or int8 tensor",
                                                      source.string(), t.name, formats::dtype_name(t.dtype)));
  }
}

const formats::Tensor& vector_tensor(const formats::ModelWeights& w, std::string_view name, std::size_t n) {
  const formats::Tensor* t = w.find(name);
  if (t == nullptr || t->shape.size() != 1 || t->shape[0] != n) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: tensor '{}' must have shape [{}] (one entry per token id){}",
                            w.source().string(), name, n, t == nullptr ? "" : ", it has another"));
  }
  return *t;
}

}  // namespace

std::optional<StaticLayout> find_static_layout(const fs::path& dir) {
  std::error_code ec;
  const fs::path config_path = dir / "config.json";
  if (fs::exists(config_path, ec)) {
    const std::string text = read_file(config_path);
    simdjson::dom::parser parser;
    const formats::json_fields::Fields f(
        formats::json_fields::parse_object(parser, text, config_path.string()), config_path.string());
    bool static_model = f.string("model_type").value_or("") == "model2vec";
    if (const auto archs = f.array("architectures")) {
      for (const auto a : *archs) {
        std::string_view name;
        if (a.get_string().get(name) == simdjson::SUCCESS && name == "StaticModel") static_model = true;
      }
    }
    if (static_model)
      return StaticLayout{StaticRules::Model2Vec, dir, f.boolean("normalize").value_or(false)};
  }
  const fs::path modules_path = dir / "modules.json";
  if (!fs::exists(modules_path, ec)) return std::nullopt;
  const metadata::StModules modules = metadata::read_st_modules(modules_path);
  if (modules.modules.empty() || !ends_with(modules.modules.front().type, "StaticEmbedding"))
    return std::nullopt;
  return StaticLayout{StaticRules::SentenceTransformers, dir / modules.modules.front().path,
                      modules.find("Normalize") != nullptr};
}

namespace {

// The table of a static layout's weights: "embedding.weight" (sentence-transformers) or
// "embeddings" (model2vec's name, which StaticEmbedding.load reads too), [rows x dim].
const formats::Tensor& find_table(const formats::ModelWeights& w, const StaticLayout& layout) {
  const char* name =
      layout.rules == StaticRules::SentenceTransformers && w.find("embedding.weight") != nullptr
          ? "embedding.weight"
          : "embeddings";
  const formats::Tensor* table = w.find(name);
  if (table == nullptr || table->shape.size() != 2 || table->shape[0] == 0 || table->shape[1] == 0 ||
      table->shape[0] > kMaxRows || table->shape[1] > kMaxDim) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: tensor '{}' must be a [tokens x dim] table (at most {} x {}){}", w.source().string(),
                    name, kMaxRows, kMaxDim, table == nullptr ? ", and there is none" : ""));
  }
  return *table;
}

}  // namespace

std::size_t StaticModel::table_width(const StaticLayout& layout) {
  const formats::ModelWeights w = formats::ModelWeights::open_file(layout.files / "model.safetensors");
  return find_table(w, layout).shape[1];
}

std::unique_ptr<StaticModel> StaticModel::load(const StaticLayout& layout) {
  std::unique_ptr<StaticModel> m(new StaticModel());
  m->layout_ = layout;
  m->weights_ = std::make_unique<formats::ModelWeights>(
      formats::ModelWeights::open_file(layout.files / "model.safetensors"));
  const formats::ModelWeights& w = *m->weights_;
  const formats::Tensor* table = &find_table(w, layout);
  const std::string& name = table->name;
  const std::size_t rows = table->shape[0];
  m->dim_ = table->shape[1];
  if (formats::is_aligned_float32(*table)) {
    m->table_ = formats::as_float32(*table);
  } else {
    m->widened_ = floats_of(*table, w.source());
    m->table_ = m->widened_;
  }
  m->vocab_ = rows;
  // model2vec's vocabulary quantisation: "mapping" sends each token id to a row, "weights"
  // scales it; without a mapping the ids are the rows. (sentence-transformers' StaticEmbedding
  // reads the table alone, so its layout ignores them, as it does.)
  if (layout.rules == StaticRules::Model2Vec) {
    if (const formats::Tensor* mapping = w.find("mapping")) {
      if (mapping->shape.size() != 1 || mapping->shape[0] == 0 || mapping->shape[0] > kMaxRows ||
          (mapping->dtype != formats::Dtype::I64 && mapping->dtype != formats::Dtype::I32)) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: tensor 'mapping' must be I64 or I32 [tokens]", w.source().string()));
      }
      m->vocab_ = mapping->shape[0];
      m->rows_.resize(m->vocab_);
      for (std::size_t i = 0; i < m->vocab_; ++i) {
        std::int64_t row = 0;
        if (mapping->dtype == formats::Dtype::I64) {
          std::memcpy(&row, mapping->data.data() + i * 8, 8);
        } else {
          std::int32_t r32 = 0;
          std::memcpy(&r32, mapping->data.data() + i * 4, 4);
          row = r32;
        }
        if (row < 0 || static_cast<std::uint64_t>(row) >= rows) {
          throw Error(
              ErrorKind::CorruptFile,
              fmt::format("{}: tensor 'mapping' sends token {} to row {}, outside the {} rows of '{}'",
                          w.source().string(), i, row, rows, name));
        }
        m->rows_[i] = static_cast<std::uint32_t>(row);
      }
    }
    if (w.find("weights") != nullptr) {
      m->token_weights_ = floats_of(vector_tensor(w, "weights", m->vocab_), w.source());
    }
  }
  return m;
}

std::size_t StaticModel::bytes() const noexcept {
  return table_.size_bytes() + token_weights_.size() * sizeof(float) + rows_.size() * sizeof(std::uint32_t);
}

void StaticModel::token_vector(std::uint32_t id, std::span<float> out) const {
  const float* row = table_.data() + static_cast<std::size_t>(rows_.empty() ? id : rows_[id]) * dim_;
  if (token_weights_.empty()) {
    std::memcpy(out.data(), row, dim_ * sizeof(float));
    return;
  }
  const float weight = token_weights_[id];
  for (std::size_t j = 0; j < dim_; ++j) out[j] = row[j] * weight;
}

void StaticModel::embed(std::span<const std::uint32_t> ids, std::span<float> out) const {
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(dim_), 0.0F);
  if (ids.empty()) return;  // model2vec: np.zeros; EmbeddingBag: an empty bag's mean is 0
  // Rows added in order, in float32, then one division: numpy's mean over axis 0 and
  // EmbeddingBag's mean both sum that way.
  for (const std::uint32_t id : ids) {
    const float* row = table_.data() + static_cast<std::size_t>(rows_.empty() ? id : rows_[id]) * dim_;
    if (token_weights_.empty()) {
      for (std::size_t j = 0; j < dim_; ++j) out[j] += row[j];
    } else {
      const float weight = token_weights_[id];
      for (std::size_t j = 0; j < dim_; ++j) out[j] += row[j] * weight;
    }
  }
  const auto n = static_cast<float>(ids.size());
  for (std::size_t j = 0; j < dim_; ++j) out[j] /= n;
  if (!layout_.normalize) return;
  if (layout_.rules == StaticRules::SentenceTransformers) {
    l2_normalize(out.first(dim_), dim_);
    return;
  }
  // model2vec: out / (np.linalg.norm(out) + 1e-32), the norm in float32.
  double sum = 0;
  for (std::size_t j = 0; j < dim_; ++j) sum += static_cast<double>(out[j]) * static_cast<double>(out[j]);
  const float norm = static_cast<float>(std::sqrt(sum)) + 1e-32F;
  for (std::size_t j = 0; j < dim_; ++j) out[j] /= norm;
}

}  // namespace warden::model::static_models
