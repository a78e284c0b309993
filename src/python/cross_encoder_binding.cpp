// _warden.CrossEncoder: a *ForSequenceClassification model's scores, as the server's /rerank
// (a reranker: the sigmoid of its logit, or the logit when raw) and /predict (a classifier:
// the softmax of its logits) give them.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "classify/sequence_classifier.hpp"
#include "core/error.hpp"
#include "python/arrays.hpp"
#include "python/batches.hpp"
#include "python/bindings.hpp"
#include "python/opened_model.hpp"
#include "python/texts.hpp"
#include "serving/results.hpp"

namespace py = pybind11;

namespace warden::python {

namespace {

class CrossEncoder {
 public:
  explicit CrossEncoder(const ModelOptions& options)
      : model_(options, ModelKind::Reranker, "TextCrossEncoder") {}

  [[nodiscard]] const classify::SequenceClassifier& c() const { return *model_.opened().loaded->classifier; }

  [[nodiscard]] py::dict info() const {
    py::dict d;
    d["name"] = model_.opened().model.spec.name;
    d["id"] = std::string(c().id());
    d["kind"] = std::string(classify::classifier_kind_name(c().kind()));
    d["labels"] = c().labels();
    d["max_input_tokens"] = c().max_input_tokens();
    d["takes_instruction"] = c().takes_instruction();
    d["dtype"] = model_.dtype();
    return d;
  }

  // One score per document for `query`, in the documents' order: (n,) float32.
  py::array rerank(py::handle query, py::handle documents, std::size_t batch_size, bool raw,
                   const std::string& instruction, bool truncate) {
    const std::string_view q = read_text(query, "query");
    const Texts docs = read_texts(documents, "document");
    if (c().labels().size() != 1) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{} is a classifier with {} labels, not a reranker: use classify()",
                              model_.opened().model.spec.name, c().labels().size()));
    }
    if (!instruction.empty() && !c().takes_instruction()) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{} takes no instruction (only an LLM reranker's template does)",
                              model_.opened().model.spec.name));
    }
    std::vector<float> scores =
        run(docs.views.size(), batch_size, raw, truncate, instruction, "document", [&](std::size_t i) {
          return std::pair{q, std::optional<std::string_view>(docs.views[i])};
        });
    return owned_floats(std::move(scores), 0, 0);
  }

  // Scores of each text (or (text, pair) when `pairs` is given): (n, labels) float32.
  py::array classify(py::handle texts, std::optional<py::handle> pairs, std::size_t batch_size, bool raw,
                     bool truncate) {
    const Texts t = read_texts(texts, "input");
    std::optional<Texts> p;
    if (pairs && !pairs->is_none()) {
      p = read_texts(*pairs, "pair");
      if (p->views.size() != t.views.size()) {
        throw Error(ErrorKind::InvalidInput, fmt::format("{} texts but {} pairs: give one pair per text",
                                                         t.views.size(), p->views.size()));
      }
    }
    std::vector<float> scores =
        run(t.views.size(), batch_size, raw, truncate, {}, "input", [&](std::size_t i) {
          return std::pair{t.views[i], p ? std::optional<std::string_view>(p->views[i]) : std::nullopt};
        });
    return owned_floats(std::move(scores), t.views.size(), c().labels().size());
  }

 private:
  using Pair = std::pair<std::string_view, std::optional<std::string_view>>;

  std::vector<float> run(std::size_t n, std::size_t batch_size, bool raw, bool truncate,
                         const std::string& instruction, std::string_view what,
                         const std::function<Pair(std::size_t)>& pair_of) {
    const classify::SequenceClassifier& m = c();
    const std::size_t labels = m.labels().size();
    std::vector<float> scores(n * labels);
    const py::gil_scoped_release unlocked;
    const auto turn = model_.turn();
    embed::InputOptions o;
    o.truncate = truncate;
    o.prompt = instruction;
    const std::vector<embed::PreparedInput> prepared =
        prepare_all(n, model_.pool(), what, [&](std::size_t i) {
          const Pair pair = pair_of(i);
          return m.prepare(pair.first, pair.second, o);
        });
    std::vector<float> logits;
    run_batches(prepared, batch_size, [&](auto batch, auto positions) {
      logits.assign(batch.size() * labels, 0.0F);
      m.classify_prepared(batch, logits);
      for (std::size_t k = 0; k < batch.size(); ++k) {
        const std::vector<float> row =
            serving::class_scores(std::span<const float>(logits).subspan(k * labels, labels), raw);
        std::copy(row.begin(), row.end(),
                  scores.begin() + static_cast<std::ptrdiff_t>(positions[k] * labels));
      }
    });
    return scores;
  }

  OpenedModel model_;
};

}  // namespace

void register_cross_encoder(py::module_& m) {
  py::class_<CrossEncoder>(m, "CrossEncoder")
      .def(py::init([](const std::string& source, const std::string& dtype, std::size_t threads,
                       const std::string& rerank_template) {
             const ModelOptions o{source, dtype, threads, {}, rerank_template};
             const py::gil_scoped_release unlocked;
             return std::make_unique<CrossEncoder>(o);
           }),
           py::arg("source"), py::arg("dtype") = "float32", py::arg("threads") = 0,
           py::arg("rerank_template") = "")
      .def("info", &CrossEncoder::info)
      .def("rerank", &CrossEncoder::rerank, py::arg("query"), py::arg("documents"), py::arg("batch_size"),
           py::arg("raw") = false, py::arg("instruction") = "", py::arg("truncate") = true)
      .def("classify", &CrossEncoder::classify, py::arg("texts"), py::arg("pairs") = py::none(),
           py::arg("batch_size"), py::arg("raw") = false, py::arg("truncate") = true);
}

}  // namespace warden::python
