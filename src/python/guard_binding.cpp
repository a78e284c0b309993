// _warden.Guard: the prompt-injection guard as `warden guard` builds it (the embedder, the
// shipped bank or the user's, the probe fitted on it, cached, or a saved fit; or the classifier
// method over a *ForSequenceClassification model), each verdict the JSON object /guard gives.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "core/error.hpp"
#include "guard/bank.hpp"
#include "guard/guard.hpp"
#include "guard/language.hpp"
#include "guard/probe_file.hpp"
#include "python/bindings.hpp"
#include "python/opened_model.hpp"
#include "python/texts.hpp"

namespace py = pybind11;

namespace warden::python {

namespace {

struct GuardConfig {
  ModelOptions model;          // the probe's embedder (default: use-lite when converted)
  std::string bank;            // empty: the shipped bank
  std::string probe;           // a saved fit (`warden guard fit --out`); empty: fit on the bank
  std::string guard_model;     // the classifier method's model; empty: the probe
  std::string positive_label;  // its attack label(s)
  std::optional<float> threshold;
  double fpr = 0.01;
  std::optional<std::string> languages;  // "en,de", "any"; absent: the embedder's own
  bool cache = true;
};

class Guard {
 public:
  explicit Guard(const GuardConfig& config) {
    guard::GuardOptions o;
    o.threshold = config.threshold;
    o.target_fpr = config.fpr;
    o.use_cache = config.cache;
    o.positive_label = config.positive_label;
    if (config.languages) o.languages = guard::parse_language_list(*config.languages);
    if (!config.guard_model.empty()) {
      if (!config.probe.empty() || !config.model.source.empty()) {
        throw Error(ErrorKind::InvalidArgument,
                    "guard_model decides by itself: give it without model or probe");
      }
      ModelOptions m = config.model;
      m.source = config.guard_model;
      model_ = std::make_unique<OpenedModel>(m, ModelKind::Classifier, "Guard");
      guard_ = std::make_unique<guard::Guard>(*model_->opened().loaded->classifier, o);
      return;
    }
    if (!config.positive_label.empty()) {
      throw Error(ErrorKind::InvalidArgument, "positive_label needs guard_model");
    }
    model_ = std::make_unique<OpenedModel>(config.model, ModelKind::Embedding, "Guard");
    const embed::Embedder& embedder = *model_->opened().loaded->embedder;
    if (!config.probe.empty()) {
      guard_ = std::make_unique<guard::Guard>(embedder, guard::load_probe(config.probe), o);
      return;
    }
    const guard::Bank bank = guard::load_bank(config.bank.empty() ? guard::default_bank_path()
                                                                  : std::filesystem::path(config.bank));
    guard_ = std::make_unique<guard::Guard>(embedder, bank, o);
  }

  [[nodiscard]] py::dict info() const {
    py::dict d;
    d["model"] = model_->opened().model.spec.name;
    d["method"] = guard_->classifier() != nullptr ? "classifier" : "probe";
    d["abstains_always"] = guard_->abstains_always();
    d["threshold"] = guard_->threshold();
    d["cache"] = guard_->probe_info().cache;
    d["fallback_reason"] = model_->opened().fallback_reason;
    return d;
  }

  // One JSON object per text, as /guard writes it (GuardResult::to_json).
  std::vector<std::string> check(py::handle texts) {
    const Texts t = read_texts(texts, "input");
    std::vector<std::string> out;
    const py::gil_scoped_release unlocked;
    const auto turn = model_->turn();
    const std::vector<guard::GuardResult> verdicts = guard_->decide_texts(t.views);
    out.reserve(verdicts.size());
    for (const guard::GuardResult& v : verdicts) out.push_back(v.to_json());
    return out;
  }

 private:
  std::unique_ptr<OpenedModel> model_;  // before the guard, which holds its model
  std::unique_ptr<guard::Guard> guard_;
};

}  // namespace

void register_guard(py::module_& m) {
  py::class_<Guard>(m, "Guard")
      .def(py::init([](const std::string& model, const std::string& bank, const std::string& probe,
                       const std::string& guard_model, const std::string& positive_label,
                       std::optional<float> threshold, double fpr, std::optional<std::string> languages,
                       bool cache, std::size_t threads) {
             GuardConfig c;
             c.model.source = model;
             c.model.threads = threads;
             c.bank = bank;
             c.probe = probe;
             c.guard_model = guard_model;
             c.positive_label = positive_label;
             c.threshold = threshold;
             c.fpr = fpr;
             c.languages = std::move(languages);
             c.cache = cache;
             const py::gil_scoped_release unlocked;
             return std::make_unique<Guard>(c);
           }),
           py::arg("model") = "", py::arg("bank") = "", py::arg("probe") = "", py::arg("guard_model") = "",
           py::arg("positive_label") = "", py::arg("threshold") = py::none(), py::arg("fpr") = 0.01,
           py::arg("languages") = py::none(), py::arg("cache") = true, py::arg("threads") = 0)
      .def("info", &Guard::info)
      .def("check", &Guard::check, py::arg("texts"));
}

}  // namespace warden::python
