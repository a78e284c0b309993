// _warden.Embedder: an embedding model's dense vectors, sparse vectors and token vectors, as
// the server's /embed, /embed_sparse and /embed_hybrid give them (the same input options,
// prompts and row finishing: serving/results.hpp).

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "core/error.hpp"
#include "embed/embedder.hpp"
#include "python/arrays.hpp"
#include "python/batches.hpp"
#include "python/bindings.hpp"
#include "python/opened_model.hpp"
#include "python/texts.hpp"
#include "serving/results.hpp"

namespace py = pybind11;

namespace warden::python {

namespace {

// How a call encodes its texts: a prompt by name, else by purpose ("query", "passage": the
// names Cohere's and OpenAI-style `input_type` go by), else the model's default prompt.
struct Encoding {
  std::optional<std::string> prompt_name;
  std::optional<std::string> input_type;
  bool query = false;  // ColBERT's query encoding
  bool truncate = true;
};

class Embedder {
 public:
  explicit Embedder(const ModelOptions& options) : model_(options, ModelKind::Embedding, "TextEmbedding") {}

  [[nodiscard]] const embed::Embedder& e() const { return *model_.opened().loaded->embedder; }

  [[nodiscard]] py::dict info() const {
    const embed::Embedder& m = e();
    py::dict d;
    d["name"] = model_.opened().model.spec.name;
    d["id"] = std::string(m.id());
    d["dim"] = m.dim();
    d["semantic"] = m.semantic();
    d["max_input_tokens"] = m.max_input_tokens();
    d["pooling"] = std::string(m.pooling());
    d["dtype"] = model_.dtype();
    d["prompts"] = m.prompts();
    d["default_prompt_name"] = m.default_prompt_name();
    d["tasks"] = std::vector<std::string>(m.tasks().begin(), m.tasks().end());
    const embed::RetrievalOutputs o = m.retrieval_outputs();
    std::vector<std::string> outputs;
    if (o.dense) outputs.emplace_back("dense");
    if (o.sparse) outputs.emplace_back("sparse");
    if (o.multi) outputs.emplace_back("multi");
    d["outputs"] = outputs;
    d["multi_vector_dim"] = m.multi_vector_dim();
    d["fallback_reason"] = model_.opened().fallback_reason;
    return d;
  }

  // (n, dim) float32: unit vectors unless normalize is false, cut to `dimensions` first.
  py::array embed(py::handle texts, std::size_t batch_size, const Encoding& encoding, bool normalize,
                  std::optional<std::size_t> dimensions) {
    const Texts t = read_texts(texts, "input");
    check_dense(dimensions);
    const std::size_t width = dimensions.value_or(e().dim());
    std::vector<float> values;
    {
      const py::gil_scoped_release unlocked;
      const auto turn = model_.turn();
      values = dense(t.views, batch_size, encoding, normalize, dimensions).release();
    }
    return owned_floats(std::move(values), t.views.size(), width);
  }

  // What embed() costs without Python: the nanoseconds of each of `repeats` calls of its C++
  // part on `texts` (bench/run_python subtracts this from a Python call's time).
  std::vector<double> time_calls(py::handle texts, std::size_t batch_size, std::size_t repeats) {
    const Texts t = read_texts(texts, "input");
    check_dense(std::nullopt);
    std::vector<double> ns(repeats);
    const py::gil_scoped_release unlocked;
    const auto turn = model_.turn();
    for (double& d : ns) {
      const auto start = std::chrono::steady_clock::now();
      const Embeddings rows = dense(t.views, batch_size, Encoding{}, true, std::nullopt);
      d = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      if (rows.rows() != t.views.size()) throw Error(ErrorKind::Internal, "time_calls: rows lost");
    }
    return ns;
  }

  // Per text: (indices uint32, values float32) of its sparse vector (SPLADE, bge-m3's lexical weights).
  py::list embed_sparse(py::handle texts, std::size_t batch_size, const Encoding& encoding) {
    std::vector<embed::RetrievalVectors> out =
        retrieval(texts, batch_size, encoding, &embed::RetrievalOutputs::sparse, "sparse vectors",
                  "SparseTextEmbedding");
    py::list result;
    for (embed::RetrievalVectors& v : out) {
      py::array ids = owned_ids(std::move(v.sparse.indices));
      py::array values = owned_floats(std::move(v.sparse.values), 0, 0);
      result.append(py::make_tuple(std::move(ids), std::move(values)));
    }
    return result;
  }

  // Per text: its (tokens, multi_vector_dim) float32 unit rows (ColBERT, bge-m3's multi-vector head).
  py::list embed_multi(py::handle texts, std::size_t batch_size, const Encoding& encoding) {
    std::vector<embed::RetrievalVectors> out =
        retrieval(texts, batch_size, encoding, &embed::RetrievalOutputs::multi, "token vectors",
                  "LateInteractionTextEmbedding");
    const std::size_t dim = e().multi_vector_dim();
    py::list result;
    for (embed::RetrievalVectors& v : out) {
      const std::size_t rows = v.multi.rows();
      result.append(owned_floats(std::move(v.multi).release(), rows, dim));
    }
    return result;
  }

 private:
  [[nodiscard]] embed::InputOptions options(const Encoding& encoding) const {
    const embed::Embedder& m = e();
    if (encoding.prompt_name && encoding.input_type) {
      throw Error(ErrorKind::InvalidArgument, "give prompt_name or input_type, not both");
    }
    embed::InputOptions o =
        serving::input_options(m, encoding.truncate, embed::TruncationSide::Right, encoding.prompt_name);
    if (encoding.input_type) {
      const std::vector<std::string> purposes = serving::input_type_purposes(*encoding.input_type);
      serving::apply_purposes(m, purposes, o);
    }
    o.query = encoding.query;
    return o;
  }

  std::vector<embed::RetrievalVectors> retrieval(py::handle texts, std::size_t batch_size,
                                                 const Encoding& encoding,
                                                 bool embed::RetrievalOutputs::*output, std::string_view what,
                                                 std::string_view cls) {
    const Texts t = read_texts(texts, "input");
    const embed::Embedder& m = e();
    if (!(m.retrieval_outputs().*output)) {
      throw Error(ErrorKind::InvalidArgument, fmt::format("{} gives no {} ({} takes a model that does)",
                                                          model_.opened().model.spec.name, what, cls));
    }
    const py::gil_scoped_release unlocked;
    const auto turn = model_.turn();
    const embed::InputOptions o = options(encoding);
    const std::vector<embed::PreparedInput> prepared = prepare_all(
        t.views.size(), model_.pool(), "input", [&](std::size_t i) { return m.prepare(t.views[i], o); });
    std::vector<embed::RetrievalVectors> out(prepared.size());
    run_batches(prepared, batch_size, [&](auto batch, auto positions) {
      std::vector<embed::RetrievalVectors> vectors = m.embed_retrieval(batch);
      for (std::size_t k = 0; k < batch.size(); ++k) out[positions[k]] = std::move(vectors[k]);
    });
    return out;
  }

  void check_dense(std::optional<std::size_t> dimensions) const {
    const embed::Embedder& m = e();
    if (!m.retrieval_outputs().dense) {
      throw Error(
          ErrorKind::InvalidArgument,
          fmt::format("{} has no dense vector: use {}", model_.opened().model.spec.name,
                      m.retrieval_outputs().multi ? "LateInteractionTextEmbedding" : "SparseTextEmbedding"));
    }
    serving::check_dimensions(dimensions, m.dim(), "dimensions");
  }

  // The rows of embed(), computed without the GIL on the caller's turn.
  Embeddings dense(std::span<const std::string_view> texts, std::size_t batch_size, const Encoding& encoding,
                   bool normalize, std::optional<std::size_t> dimensions) {
    const embed::Embedder& m = e();
    const embed::InputOptions o = options(encoding);
    const std::vector<embed::PreparedInput> prepared = prepare_all(
        texts.size(), model_.pool(), "input", [&](std::size_t i) { return m.prepare(texts[i], o); });
    const std::size_t dim = m.dim();
    Embeddings rows(prepared.size(), dim);
    std::vector<float> batch_out;
    run_batches(prepared, batch_size, [&](auto batch, auto positions) {
      batch_out.assign(batch.size() * dim, 0.0F);
      m.embed_prepared(batch, batch_out);
      for (std::size_t k = 0; k < batch.size(); ++k) {
        std::copy_n(batch_out.begin() + static_cast<std::ptrdiff_t>(k * dim), dim,
                    rows.row(positions[k]).begin());
      }
    });
    return serving::finish_rows(std::move(rows), dimensions, normalize, m.unit_vectors());
  }

  OpenedModel model_;
};

}  // namespace

void register_embedder(py::module_& m) {
  py::class_<Encoding>(m, "Encoding")
      .def(py::init([](std::optional<std::string> prompt_name, std::optional<std::string> input_type,
                       bool query, bool truncate) {
             return Encoding{std::move(prompt_name), std::move(input_type), query, truncate};
           }),
           py::arg("prompt_name") = py::none(), py::arg("input_type") = py::none(), py::arg("query") = false,
           py::arg("truncate") = true);
  py::class_<Embedder>(m, "Embedder")
      .def(py::init([](const std::string& source, const std::string& dtype, std::size_t threads,
                       const std::string& pooling) {
             const ModelOptions o{source, dtype, threads, pooling, {}};
             const py::gil_scoped_release unlocked;
             return std::make_unique<Embedder>(o);
           }),
           py::arg("source"), py::arg("dtype") = "float32", py::arg("threads") = 0, py::arg("pooling") = "")
      .def("info", &Embedder::info)
      .def("embed", &Embedder::embed, py::arg("texts"), py::arg("batch_size"), py::arg("encoding"),
           py::arg("normalize") = true, py::arg("dimensions") = py::none())
      .def("_time_calls", &Embedder::time_calls, py::arg("texts"), py::arg("batch_size"), py::arg("repeats"))
      .def("embed_sparse", &Embedder::embed_sparse, py::arg("texts"), py::arg("batch_size"),
           py::arg("encoding"))
      .def("embed_multi", &Embedder::embed_multi, py::arg("texts"), py::arg("batch_size"),
           py::arg("encoding"));
}

}  // namespace warden::python
