#include "guard/guard.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/fnv1a.hpp"
#include "core/json_writer.hpp"
#include "core/l2_normalize.hpp"
#include "core/utf8.hpp"
#include "guard/classification_metrics.hpp"
#include "guard/exemplar_similarity.hpp"
#include "guard/probe_file.hpp"

namespace warden::guard {

namespace {

constexpr std::string_view kFitVersion = "warden guard fit 4";
constexpr std::size_t kEmbedChunk = 64;  // texts per embed_prepared call: bounds the batch's memory
constexpr std::size_t kFolds = 4;
constexpr double kL2Candidates[] = {0.1, 1.0, 10.0};
// Windows of one long benign train text that become examples: enough to teach what long
// documents look like without one document outweighing the rest.
constexpr std::size_t kMaxWindowsPerText = 8;
// The cache folder's bound: a fit of the shipped bank on use-lite is ~10 MB (its exemplars'
// vectors); the least recently used fits go first.
constexpr std::uintmax_t kMaxCacheBytes = std::uintmax_t{256} << 20;

// Identifies what a fit depends on: the embedder's id and width, the train split (texts and
// labels, in order), the languages it reads (text in others is left out), the target
// false-positive rate and the fitting procedure's version (bump kFitVersion when it
// changes). The embedder's weights are not in the key: two different models that share an
// id (two folders of the same name) are told apart when a cached fit is loaded, by
// embedding its first exemplars again (same_vectors).
std::uint64_t bank_key(const embed::Embedder& embedder, std::span<const BankEntry> train,
                       std::span<const std::string> languages, std::optional<double> target_fpr) {
  std::uint64_t h = fnv1a(kFitVersion);
  h = fnv1a(embedder.id(), h);
  h = fnv1a(fmt::format("/{}/", embedder.dim()), h);
  for (const BankEntry& e : train) {
    h = fnv1a(e.attack ? "A" : "B", h);
    h = fnv1a(e.text, h);
    h = fnv1a(std::string_view("\0", 1), h);
  }
  for (const std::string& l : languages) h = fnv1a(l + ",", h);
  if (target_fpr) h = fnv1a(fmt::format("fpr {}", *target_fpr), h);
  return h;
}

std::string file_safe(std::string_view id) {
  std::string out;
  for (const char c : id)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

// Unit rows of `texts`, embedded in chunks; FitStopped once `stop` is requested.
std::vector<float> embed_units(const embed::Embedder& embedder, std::span<const std::string> texts,
                               const std::stop_token& stop = {}) {
  const std::size_t dim = embedder.dim();
  std::vector<float> out(texts.size() * dim);
  for (std::size_t begin = 0; begin < texts.size(); begin += kEmbedChunk) {
    if (stop.stop_requested()) throw FitStopped();
    const std::size_t end = std::min(texts.size(), begin + kEmbedChunk);
    std::vector<std::string_view> views(texts.begin() + static_cast<std::ptrdiff_t>(begin),
                                        texts.begin() + static_cast<std::ptrdiff_t>(end));
    const Embeddings e = embedder.embed(views);
    std::copy(e.values().begin(), e.values().end(), out.begin() + static_cast<std::ptrdiff_t>(begin * dim));
  }
  l2_normalize({out.data(), texts.size() * dim}, dim);
  return out;
}

double log_loss(std::span<const double> p, std::span<const std::uint8_t> y) {
  double loss = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double q = std::clamp(y[i] != 0 ? p[i] : 1.0 - p[i], 1e-12, 1.0);
    loss -= std::log(q);
  }
  return loss;
}

// The threshold with the best F1 on (scores, truth): candidates are the midpoints between
// consecutive distinct scores; ties go to the one nearest 0.5.
float best_threshold(std::span<const double> scores, const std::vector<bool>& truth) {
  std::vector<double> sorted(scores.begin(), scores.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<double> candidates{0.5};
  for (std::size_t i = 0; i + 1 < sorted.size(); ++i) candidates.push_back((sorted[i] + sorted[i + 1]) / 2.0);
  double best = 0.5, best_f1 = -1.0;
  std::vector<bool> predicted(scores.size());
  for (const double t : candidates) {
    for (std::size_t i = 0; i < scores.size(); ++i) predicted[i] = scores[i] >= t;
    const BinaryMetrics m = binary_metrics(truth, predicted);
    if (m.f1 > best_f1 + 1e-12 ||
        (std::abs(m.f1 - best_f1) <= 1e-12 && std::abs(t - 0.5) < std::abs(best - 0.5))) {
      best_f1 = m.f1;
      best = t;
    }
  }
  return static_cast<float>(best);
}

// The threshold at which at most `fpr` of the benign texts are flagged: `benign` holds each
// benign text's score (the highest of its windows); a threshold just above the score of the
// first benign text it must not flag.
float threshold_for_fpr(std::vector<double> benign, double fpr) {
  if (benign.empty()) return 0.5F;
  std::sort(benign.begin(), benign.end(), std::greater<>());
  const auto allowed = static_cast<std::size_t>(std::floor(fpr * static_cast<double>(benign.size())));
  if (allowed >= benign.size()) return 0.0F;
  const double above = allowed == 0 ? 1.0 : benign[allowed - 1];
  const double t = (benign[allowed] + above) / 2.0;
  return static_cast<float>(std::clamp(std::max(t, std::nextafter(benign[allowed], 2.0)), 0.0, 1.0));
}

// Chooses l2 by the out-of-fold log-loss of a k-fold split of the examples (fold = the owning
// train text's index mod k, so that the windows of one text share a fold), and the threshold
// for the target false-positive rate on the benign train texts' out-of-fold scores at that
// l2 (or the best out-of-fold F1 without a target); then fits on all of `probe`'s exemplars.
// The test split is never seen here.
void fit_probe(FittedProbe& probe, std::span<const std::size_t> owner, std::optional<double> target_fpr) {
  const std::size_t n = probe.texts.size();
  const std::size_t dim = probe.dim;
  const std::size_t width = dim + kSimilarityFeatures;
  const std::span<const float> rows = probe.rows;
  const std::vector<std::uint8_t> labels(probe.attack.begin(), probe.attack.end());
  probe.features = kSimilarityFeatures;
  // Each example's exemplar similarity as each fit sees it: setting s < kFolds is the fit
  // without fold s (its exemplars are the other folds'), setting kFolds the final fit (all
  // of them); a text's own windows never count, so a train text is not its own neighbour.
  std::vector<std::vector<SimilarityFeatures>> features(kFolds + 1, std::vector<SimilarityFeatures>(n));
  {
    const ExemplarIndex index(rows, n, dim);
    constexpr std::size_t kBlock = 256;  // rows of similarities at a time: bounds the memory
    std::vector<float> sims;
    for (std::size_t b = 0; b < n; b += kBlock) {
      const std::size_t m = std::min(kBlock, n - b);
      sims.resize(m * n);
      index.similarities(rows.subspan(b * dim, m * dim), m, sims);
      for (std::size_t i = b; i < b + m; ++i) {
        const std::span<const float> row(sims.data() + (i - b) * n, n);
        for (std::size_t setting = 0; setting <= kFolds; ++setting) {
          features[setting][i] = similarity_features(row, probe.attack, [&](std::size_t j) {
            return owner[j] != owner[i] && (setting == kFolds || owner[j] % kFolds != setting);
          });
        }
      }
    }
  }
  const auto append = [&](std::vector<float>& out, std::size_t i, std::size_t setting) {
    out.insert(out.end(), rows.begin() + static_cast<std::ptrdiff_t>(i * dim),
               rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
    out.insert(out.end(), features[setting][i].begin(), features[setting][i].end());
  };
  double best_loss = std::numeric_limits<double>::infinity();
  std::vector<double> best_oof;
  for (const double l2 : kL2Candidates) {
    std::vector<double> oof(n, 0.5);
    for (std::size_t fold = 0; fold < kFolds; ++fold) {
      std::vector<float> fit_rows;
      std::vector<std::uint8_t> fit_labels;
      for (std::size_t i = 0; i < n; ++i) {
        if (owner[i] % kFolds == fold) continue;
        append(fit_rows, i, fold);
        fit_labels.push_back(labels[i]);
      }
      const LogisticModel m = fit_logistic(fit_rows, width, fit_labels, {.l2 = l2});
      std::vector<float> x;
      for (std::size_t i = 0; i < n; ++i) {
        if (owner[i] % kFolds != fold) continue;
        x.clear();
        append(x, i, fold);
        oof[i] = m.probability(x);
      }
    }
    const double loss = log_loss(oof, labels);
    if (loss < best_loss) {
      best_loss = loss;
      probe.l2 = l2;
      best_oof = std::move(oof);
    }
  }
  // Per train text: its highest window's out-of-fold score.
  std::map<std::size_t, std::pair<double, bool>> per_text;
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, fresh] = per_text.emplace(owner[i], std::make_pair(best_oof[i], labels[i] != 0));
    if (!fresh) it->second.first = std::max(it->second.first, best_oof[i]);
  }
  std::vector<double> scores, benign;
  std::vector<bool> truth;
  for (const auto& [o, v] : per_text) {
    scores.push_back(v.first);
    truth.push_back(v.second);
    if (!v.second) benign.push_back(v.first);
  }
  probe.threshold = target_fpr ? threshold_for_fpr(benign, *target_fpr) : best_threshold(scores, truth);
  probe.cv = CrossValidation{};
  probe.cv.texts = scores.size();
  probe.cv.auc = roc_auc(scores, truth);
  std::size_t caught = 0, false_alarms = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const bool flagged = scores[i] >= static_cast<double>(probe.threshold);
    probe.cv.attacks += truth[i] ? 1 : 0;
    caught += truth[i] && flagged ? 1 : 0;
    false_alarms += !truth[i] && flagged ? 1 : 0;
  }
  const std::size_t benign_texts = probe.cv.texts - probe.cv.attacks;
  probe.cv.recall =
      probe.cv.attacks > 0 ? static_cast<double>(caught) / static_cast<double>(probe.cv.attacks) : 0.0;
  probe.cv.false_positive_rate =
      benign_texts > 0 ? static_cast<double>(false_alarms) / static_cast<double>(benign_texts) : 0.0;
  std::vector<float> all;
  all.reserve(n * width);
  for (std::size_t i = 0; i < n; ++i) append(all, i, kFolds);
  probe.model = fit_logistic(all, width, labels, {.l2 = probe.l2});
}

// Whether `embedder` is the one `probe` was fitted with: its first exemplars, embedded
// again, point where the stored vectors do (to within the noise of another thread count or
// batch shape). Cheap: a handful of texts.
bool same_vectors(const embed::Embedder& embedder, const FittedProbe& probe, std::string& why) {
  if (probe.dim != embedder.dim()) {
    why = fmt::format("it was fitted on {}-d vectors, this embedder makes {}-d", probe.dim, embedder.dim());
    return false;
  }
  // Eight exemplars, the shortest: any change of weights moves their vectors as surely as a
  // long text's, and this check runs on every server start with a cached fit, before the
  // server listens (the first eight, windows of up to 512 tokens, had been most of a
  // bge-small start).
  std::vector<std::size_t> order(probe.texts.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const std::size_t n = std::min<std::size_t>(8, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](std::size_t a, std::size_t b) {
                      return probe.texts[a].size() != probe.texts[b].size()
                                 ? probe.texts[a].size() < probe.texts[b].size()
                                 : a < b;
                    });
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < n; ++i) texts.push_back(probe.texts[order[i]]);
  const std::vector<float> rows = embed_units(embedder, texts);
  for (std::size_t i = 0; i < n; ++i) {
    const float* fitted = probe.rows.data() + order[i] * probe.dim;
    double dot = 0.0;
    for (std::size_t j = 0; j < probe.dim; ++j) {
      dot += static_cast<double>(rows[i * probe.dim + j]) * static_cast<double>(fitted[j]);
    }
    if (dot < 0.999) {
      why = fmt::format(
          "this embedder's vectors differ from those it was fitted on (cosine {:.4f} on exemplar {})", dot,
          order[i]);
      return false;
    }
  }
  return true;
}

}  // namespace

std::filesystem::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    return std::filesystem::path(xdg) / "warden" / "guard";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".cache" / "warden" /
         "guard";
}

std::string GuardResult::to_json(std::optional<std::string_view> text) const {
  JsonWriter w;
  w.begin_object();
  w.key("flagged");
  flagged ? w.value(*flagged) : w.value(nullptr);
  w.key("score");
  score ? w.value(*score) : w.value(nullptr);
  w.key("method").value(method);
  if (!label.empty()) w.key("label").value(label);
  if (!closest_exemplar.empty()) w.key("closest_exemplar").value(closest_exemplar);
  w.key("embedder").value(embedder);
  w.key("semantic").value(semantic);
  if (!reason.empty()) w.key("reason").value(reason);
  if (!language.empty()) w.key("language").value(language);
  if (window) {
    w.key("window").begin_object().key("start").value(static_cast<std::uint64_t>(window->first));
    w.key("end").value(static_cast<std::uint64_t>(window->second)).end_object();
  }
  if (!evidence.empty()) {
    w.key("evidence").begin_array();
    for (const std::string& e : evidence) w.value(e);
    w.end_array();
  }
  if (text) w.key("text").value(*text);
  w.end_object();
  return w.take();
}

namespace {

void check_threshold(const GuardOptions& options) {
  if (options.threshold && !(*options.threshold >= 0.0F && *options.threshold <= 1.0F)) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("the guard threshold must lie in [0, 1], not {}", *options.threshold));
  }
  if (options.target_fpr && !(*options.target_fpr >= 0.0 && *options.target_fpr < 1.0)) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("the guard's target false-positive rate must lie in [0, 1), not {}",
                            *options.target_fpr));
  }
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool Guard::names_attack(std::string_view label) {
  const std::string u = upper(label);
  for (const std::string_view word : {"INJECTION", "ATTACK", "JAILBREAK", "UNSAFE", "MALICIOUS"}) {
    if (u.find(word) != std::string::npos) return true;
  }
  return false;
}

Guard::Guard(const classify::SequenceClassifier& classifier, GuardOptions options)
    : classifier_(&classifier) {
  check_threshold(options);
  info_.cache = "off";
  // A classifier's probabilities are calibrated by its own training: 0.5 unless told otherwise.
  threshold_ = options.threshold.value_or(0.5F);
  const std::vector<std::string>& labels = classifier.labels();
  const std::string listed = fmt::format("{}", fmt::join(labels, ", "));
  if (labels.empty()) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("guard model {} has no labels", classifier.id()));
  }
  positives_.clear();
  if (!options.positive_label.empty()) {
    std::string_view rest = options.positive_label;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view name = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      const auto it = std::find(labels.begin(), labels.end(), name);
      if (it == labels.end()) {
        throw Error(
            ErrorKind::InvalidArgument,
            fmt::format("--guard-positive-label {} is not a label of guard model {}; its labels are: {}",
                        name, classifier.id(), listed));
      }
      positives_.push_back(static_cast<std::size_t>(it - labels.begin()));
    }
  } else if (labels.size() == 1) {
    positives_.push_back(0);  // the single logit is the attack score
  } else {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (names_attack(labels[i])) positives_.push_back(i);
    }
    if (positives_.empty() && labels.size() == 2 && labels[0] == "LABEL_0" && labels[1] == "LABEL_1") {
      positives_.push_back(1);  // transformers' default names of a binary classifier: 1 is the positive class
    }
  }
  std::sort(positives_.begin(), positives_.end());
  positives_.erase(std::unique(positives_.begin(), positives_.end()), positives_.end());
  if (positives_.empty()) {
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("no label of guard model {} names an attack (INJECTION, ATTACK, JAILBREAK, UNSAFE or "
                    "MALICIOUS): name the positive one(s) with --guard-positive-label; its labels are: {}",
                    classifier.id(), listed));
  }
  if (positives_.size() == labels.size() && labels.size() > 1) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("every label of guard model {} would count as an attack; its labels are: {}",
                            classifier.id(), listed));
  }
}

std::string Guard::positive_label_names() const {
  if (classifier_ == nullptr) return {};
  std::vector<std::string_view> names;
  for (const std::size_t i : positives_) names.emplace_back(classifier_->labels()[i]);
  return fmt::format("{}", fmt::join(names, ","));
}

Guard::Guard(const embed::Embedder& embedder, const Bank& bank, GuardOptions options) : embedder_(&embedder) {
  check_threshold(options);
  languages_ = options.languages.value_or(embedder.languages());
  info_.cache = "off";
  threshold_ = options.threshold.value_or(threshold_);
  if (!embedder.semantic()) return;  // nothing to fit: every decision abstains

  const std::vector<BankEntry> train = bank.split(false);
  std::size_t attacks = 0;
  for (const BankEntry& e : train) attacks += e.attack ? 1 : 0;
  if (attacks < kFolds || train.size() - attacks < kFolds) {
    throw Error(
        ErrorKind::InvalidInput,
        fmt::format("{}: the train split needs at least {} attacks and {} benign texts (it has {} and {})",
                    bank.source, kFolds, kFolds, attacks, train.size() - attacks));
  }
  const std::uint64_t key = bank_key(embedder, train, languages_, options.target_fpr);
  std::filesystem::path file;
  if (options.use_cache) {
    file = options.cache_dir.value_or(default_cache_dir()) /
           fmt::format("{}-{:016x}.probe", file_safe(embedder.id()), key);
    info_.cache_file = file.string();
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) {
      std::string why;
      try {
        FittedProbe cached = parse_probe(read_file(file, kMaxProbeFileBytes), file.string());
        if (cached.bank_key != key) {
          why = "written for another bank";
        } else if (same_vectors(embedder, cached, why)) {
          adopt(std::move(cached), options);
          info_.cache = "hit";
          // Used now: the folder's trim removes the least recently used fits first.
          std::filesystem::last_write_time(file, std::filesystem::file_time_type::clock::now(), ec);
          return;
        }
      } catch (const Error& e) {
        why = e.what();
      }
      info_.cache = "refit: " + why;
    }
  }

  FittedProbe probe;
  probe.embedder = std::string(embedder.id());
  probe.dim = embedder.dim();
  probe.bank_key = key;
  // The examples are what the guard will judge: each train text's canonical form, in its
  // windows. A text of one window is one example; every window of a long benign text is a
  // benign example; a long attack's injection sits in some window, not all — its most
  // suspicious window under a first fit is its example (one step of multiple-instance
  // learning).
  std::vector<std::size_t> owner;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> long_attacks;
  for (std::size_t i = 0; i < train.size(); ++i) {
    const GuardPlan p = plan(train[i].text);
    // What the guard abstains on teaches it nothing: text in a language the embedder does not read.
    if (std::string found; outside_languages(p.canonical.text, languages_, found)) continue;
    if (p.windows.size() > 1 && train[i].attack) {
      std::vector<std::string> parts;
      for (std::size_t j = 0; j < p.windows.size(); ++j) parts.emplace_back(p.part(j));
      long_attacks.emplace_back(i, std::move(parts));
      continue;
    }
    for (std::size_t j = 0; j < std::min(p.windows.size(), kMaxWindowsPerText); ++j) {
      probe.texts.emplace_back(p.part(j));
      probe.attack.push_back(train[i].attack);
      owner.push_back(i);
    }
  }
  const std::size_t dim = probe.dim;
  probe.rows = embed_units(embedder, probe.texts, options.stop);
  if (!long_attacks.empty()) {
    std::vector<std::uint8_t> first_labels(probe.attack.begin(), probe.attack.end());
    const LogisticModel first = fit_logistic(probe.rows, dim, first_labels, {.l2 = 1.0});
    for (const auto& [i, parts] : long_attacks) {
      const std::vector<float> rows = embed_units(embedder, parts, options.stop);
      std::size_t best = 0;
      double best_p = -1.0;
      for (std::size_t j = 0; j < parts.size(); ++j) {
        const double pj = first.probability({rows.data() + j * dim, dim});
        if (pj > best_p) {
          best_p = pj;
          best = j;
        }
      }
      probe.texts.push_back(parts[best]);
      probe.attack.push_back(true);
      owner.push_back(i);
      probe.rows.insert(probe.rows.end(), rows.begin() + static_cast<std::ptrdiff_t>(best * dim),
                        rows.begin() + static_cast<std::ptrdiff_t>((best + 1) * dim));
    }
  }
  if (options.stop.stop_requested()) throw FitStopped();
  fit_probe(probe, owner, options.target_fpr);
  if (options.use_cache) {
    // A cache that cannot be written only costs the next start a refit: say so, go on.
    try {
      std::filesystem::create_directories(file.parent_path());
      write_file_atomic(file, serialise_probe(probe));
      if (info_.cache == "off") info_.cache = "written";
      trim_folder(file.parent_path(), ".probe", kMaxCacheBytes, file);
    } catch (const std::exception& e) {
      info_.cache += fmt::format(" (not cached: {})", e.what());
    }
  }
  adopt(std::move(probe), options);
}

Guard::Guard(const embed::Embedder& embedder, FittedProbe probe, GuardOptions options)
    : embedder_(&embedder) {
  check_threshold(options);
  languages_ = options.languages.value_or(embedder.languages());
  info_.cache = "off";
  if (!embedder.semantic()) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("a fitted probe needs a semantic embedder; {} is lexical", embedder.id()));
  }
  if (probe.texts.empty()) throw Error(ErrorKind::InvalidInput, "the fitted probe has no exemplars");
  if (std::string why; !same_vectors(embedder, probe, why)) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("the probe was fitted with {}, not with {}: {}",
                                                        probe.embedder, embedder.id(), why));
  }
  adopt(std::move(probe), options);
}

void Guard::adopt(FittedProbe probe, const GuardOptions& options) {
  if ((probe.features != 0 && probe.features != kSimilarityFeatures) ||
      probe.model.weights.size() != probe.dim + probe.features) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("the probe reads {} values after its vector; this build knows 0 or {}",
                            probe.features, kSimilarityFeatures));
  }
  probe_ = std::move(probe);
  index_ = std::make_unique<ExemplarIndex>(probe_.rows, probe_.texts.size(), probe_.dim);
  info_.l2 = probe_.l2;
  info_.threshold = probe_.threshold;
  threshold_ = options.threshold.value_or(probe_.threshold);
}

namespace {

// True when more than half of the text's non-space code points lie inside unknown tokens,
// as `tokenize` (the embedder's or the classifier's) reports them; false without a tokenizer.
template <typename Tokenize>
bool mostly_unknown_text(Tokenize tokenize, std::uint32_t unk, std::string_view text) {
  std::vector<embed::TokenInfo> tokens;
  try {
    tokens = tokenize(text);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Unsupported) return false;
    throw;
  }
  std::vector<bool> unknown(text.size(), false);
  for (const embed::TokenInfo& t : tokens) {
    if (t.id != unk || !t.start || !t.stop) continue;
    for (std::size_t b = *t.start; b < *t.stop && b < text.size(); ++b) unknown[b] = true;
  }
  std::size_t total = 0, covered = 0;
  for (std::size_t b = 0; b < text.size(); ++b) {
    const auto c = static_cast<unsigned char>(text[b]);
    if ((c & 0xC0U) == 0x80U || std::isspace(c) != 0) continue;  // count each code point once, skip spaces
    ++total;
    covered += unknown[b] ? 1 : 0;
  }
  return 2 * covered > total;
}

// The unknown-token rule shared by both methods: more than half of the ids, or (with the
// text) of its non-space characters, are the unknown token.
template <typename Tokenize>
bool mostly_unknown(std::optional<std::uint32_t> unk, const embed::PreparedInput& input,
                    std::string_view text, Tokenize tokenize) {
  if (!unk || input.ids.empty()) return false;
  const auto unknown = static_cast<std::size_t>(std::count(input.ids.begin(), input.ids.end(), *unk));
  return 2 * unknown > input.ids.size() ||
         (unknown > 0 && !text.empty() && mostly_unknown_text(tokenize, *unk, text));
}

}  // namespace

GuardResult Guard::decide(std::span<const float> row, const embed::PreparedInput& input,
                          std::optional<std::string_view> given_text) const {
  if (embedder_ == nullptr) {
    throw Error(ErrorKind::Internal, "guard: decide() on a classifier guard (use decide_logits)");
  }
  const embed::Embedder& embedder = *embedder_;
  GuardResult r;
  r.embedder = std::string(embedder.id());
  r.semantic = embedder.semantic();
  if (!r.semantic) {
    r.method = "abstained";
    r.reason = std::string(kLexicalReason);
    return r;
  }
  if (row.size() != embedder.dim()) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("guard: a row of {} values for a {}-d embedder", row.size(), embedder.dim()));
  }
  const std::string_view text = given_text.value_or(std::string_view{});
  if (given_text && utf8::is_blank(text)) {
    r.method = "abstained";
    r.reason = std::string(kBlankReason);
    return r;
  }
  if (given_text && outside_languages(text, languages_, r.language)) {
    r.method = "abstained";
    r.reason = std::string(kLanguageReason);
    return r;
  }
  r.language.clear();
  if (mostly_unknown(embedder.unknown_token_id(), input, text,
                     [&](std::string_view t) { return embedder.tokenize(t, embed::InputOptions{}); })) {
    r.method = "abstained";
    r.reason = std::string(kUnknownReason);
    return r;
  }
  std::vector<float> x(row.begin(), row.end());
  l2_normalize(x, x.size());
  // The probe reads the vector and, when it was fitted with them, its exemplar similarity.
  std::vector<float> sims(index_->size());
  index_->similarities(x, 1, sims);
  if (probe_.features != 0) {
    const SimilarityFeatures f = similarity_features(sims, probe_.attack);
    x.insert(x.end(), f.begin(), f.end());
  }
  const double p = probe_.model.probability(x);
  r.method = "probe";
  r.score = static_cast<float>(p);
  r.flagged = *r.score >= threshold_;
  r.label = *r.flagged ? "attack" : "benign";
  float best = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < sims.size(); ++i) {
    if (probe_.attack[i] && sims[i] > best) {
      best = sims[i];
      r.closest_exemplar = probe_.texts[i];
    }
  }
  return r;
}

GuardResult Guard::decide_logits(std::span<const float> logits, const embed::PreparedInput& input,
                                 std::optional<std::string_view> given_text) const {
  if (classifier_ == nullptr) {
    throw Error(ErrorKind::Internal, "guard: decide_logits() on a probe guard (use decide)");
  }
  const classify::SequenceClassifier& c = *classifier_;
  const std::size_t n = c.labels().size();
  if (logits.size() != n) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("guard: {} logits for a classifier of {} labels", logits.size(), n));
  }
  GuardResult r;
  r.embedder = std::string(c.id());
  r.semantic = true;  // a trained classifier reads meaning; only its vocabulary can fail it
  const std::string_view text = given_text.value_or(std::string_view{});
  if (given_text && utf8::is_blank(text)) {
    r.method = "abstained";
    r.reason = std::string(kBlankReason);
    return r;
  }
  if (mostly_unknown(c.unknown_token_id(), input, text, [&](std::string_view t) { return c.tokenize(t); })) {
    r.method = "abstained";
    r.reason = std::string(kUnknownReason);
    return r;
  }
  double p = 0.0;
  std::size_t best = 0;
  if (n == 1) {
    p = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[0])));
  } else {
    // Softmax, shifted by the largest logit so that exp never overflows.
    for (std::size_t i = 1; i < n; ++i) best = logits[i] > logits[best] ? i : best;
    const auto top = static_cast<double>(logits[best]);
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - top);
    p = 0.0;
    for (const std::size_t i : positives_) p += std::exp(static_cast<double>(logits[i]) - top);
    p /= sum;
  }
  r.method = "classifier";
  r.score = static_cast<float>(p);
  r.flagged = *r.score >= threshold_;
  r.label = c.labels()[best];
  return r;
}

bool Guard::nearest_is_attack(std::span<const float> unit_row) const {
  if (probe_.texts.empty())
    throw Error(ErrorKind::Unsupported, "the nearest-exemplar rule needs the probe on a semantic embedder");
  std::vector<float> sims(index_->size());
  index_->similarities(unit_row, 1, sims);
  return probe_.attack[static_cast<std::size_t>(std::max_element(sims.begin(), sims.end()) - sims.begin())];
}

namespace {

// Where the byte at `i` of a UTF-8 text begins its code point.
std::size_t code_point_start(std::string_view text, std::size_t i) {
  while (i > 0 && i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  return i;
}

}  // namespace

std::vector<TextWindow> Guard::probe_windows(std::string_view text) const {
  const std::size_t max_tokens = embedder_->max_input_tokens();
  if (max_tokens == 0 || text.empty() || abstains_always()) return {TextWindow{0, text.size()}};
  // Each window is found by tokenizing a bounded slice from its start (an embedder reads
  // the first max_tokens tokens of what it is given), so a text of any length is read in
  // linear time: a token longer than 32 bytes on average only shortens a window.
  const std::size_t slice_bytes = max_tokens * 32;
  embed::InputOptions first;
  first.truncate = true;
  first.side = embed::TruncationSide::Right;
  std::vector<TextWindow> out;
  for (std::size_t start = 0;;) {
    const std::size_t slice_end = code_point_start(text, std::min(text.size(), start + slice_bytes));
    std::vector<embed::TokenInfo> tokens;
    try {
      tokens = embedder_->tokenize(text.substr(start, slice_end - start), first);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Unsupported) return {TextWindow{0, text.size()}};
      throw;
    }
    std::size_t specials = 0;
    std::vector<TextWindow> pieces;
    for (const embed::TokenInfo& t : tokens) {
      if (t.special || !t.start || !t.stop) {
        specials += t.special ? 1 : 0;
        continue;
      }
      pieces.push_back({start + *t.start, start + *t.stop});
    }
    // The same two tokens of slack as the classifier's windows.
    const std::size_t capacity = max_tokens > specials + 3 ? max_tokens - specials - 2 : 1;
    std::size_t next = 0;
    if (pieces.size() <= capacity) {
      if (slice_end == text.size()) {  // the rest fits
        out.push_back({start, text.size()});
        break;
      }
      out.push_back({start, slice_end});  // few, long tokens: the slice is the window
      next = code_point_start(text, start + (slice_end - start) / 2);
    } else {
      out.push_back({start, pieces[capacity - 1].end});
      next = pieces[capacity / 2].begin;
    }
    start = std::max(next, start + 1);
  }
  return out;
}

std::vector<TextWindow> Guard::windows(std::string_view text) const {
  if (classifier_ == nullptr) return probe_windows(text);
  if (text.empty()) return {TextWindow{0, text.size()}};
  std::vector<embed::TokenInfo> tokens;
  try {
    tokens = classifier_->tokenize(text);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Unsupported) return {TextWindow{0, text.size()}};
    throw;
  }
  std::size_t specials = 0;
  std::vector<TextWindow> pieces;  // the content tokens' byte spans
  for (const embed::TokenInfo& t : tokens) {
    if (t.special || !t.start || !t.stop) {
      specials += t.special ? 1 : 0;
      continue;
    }
    pieces.push_back({*t.start, *t.stop});
  }
  const std::size_t max_tokens = classifier_->max_input_tokens();
  if (pieces.size() + specials <= max_tokens) return {TextWindow{0, text.size()}};
  // Two tokens of slack: a window's text, tokenized on its own, may split differently at
  // its edges (a word-start marker, a merge across the cut).
  const std::size_t capacity = max_tokens > specials + 3 ? max_tokens - specials - 2 : 1;
  const std::size_t stride = std::max<std::size_t>(1, capacity / 2);
  std::vector<TextWindow> out;
  for (std::size_t a = 0;; a += stride) {
    const std::size_t b = std::min(a + capacity, pieces.size());
    out.push_back({pieces[a].begin, pieces[b - 1].end});
    if (b == pieces.size()) break;
  }
  return out;
}

GuardResult Guard::combine_windows(std::span<const GuardResult> results, std::span<const TextWindow> windows,
                                   std::string_view text) {
  if (results.empty() || results.size() != windows.size()) {
    throw Error(ErrorKind::Internal, "guard: one result per window is needed");
  }
  std::size_t best = 0;
  auto rank = [](const GuardResult& r) {
    // Decided before abstained, flagged before not, then the score.
    return std::make_tuple(r.score.has_value(), r.flagged.value_or(false), r.score.value_or(0.0F));
  };
  for (std::size_t i = 1; i < results.size(); ++i) {
    if (rank(results[i]) > rank(results[best])) best = i;
  }
  GuardResult out = results[best];
  if (results.size() > 1) {
    const std::size_t start = utf8::code_points(text.substr(0, windows[best].begin));
    out.window = std::make_pair(
        start,
        start + utf8::code_points(text.substr(windows[best].begin, windows[best].end - windows[best].begin)));
  }
  return out;
}

GuardPlan Guard::plan(std::string_view text) const {
  GuardPlan p;
  p.canonical = canonical::canonicalize(text);
  p.windows = windows(p.canonical.text);
  return p;
}

GuardResult Guard::combine(std::span<const GuardResult> results, const GuardPlan& plan,
                           std::string_view text) {
  // The windows in the original text's bytes: a canonical byte knows where it came from.
  const std::vector<std::uint32_t>& source = plan.canonical.source;
  std::vector<TextWindow> original;
  original.reserve(plan.windows.size());
  for (const TextWindow& w : plan.windows) {
    if (w.begin >= w.end || w.end > source.size()) {
      original.push_back({0, text.size()});
      continue;
    }
    std::size_t k = w.end;
    while (k < source.size() && source[k] <= source[w.end - 1]) ++k;  // past the last byte's own source
    original.push_back({source[w.begin], k < source.size() ? source[k] : text.size()});
  }
  GuardResult out = combine_windows(results, original, text);
  out.evidence = plan.canonical.evidence;
  return out;
}

std::vector<GuardResult> Guard::decide_texts(std::span<const std::string_view> texts) const {
  for (std::size_t i = 0; i < texts.size(); ++i) utf8::require_valid(texts[i], fmt::format("input {}", i));
  std::vector<GuardResult> out;
  out.reserve(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const GuardPlan p = plan(texts[i]);
    std::vector<embed::PreparedInput> prepared;
    prepared.reserve(p.windows.size());
    for (std::size_t j = 0; j < p.windows.size(); ++j) {
      try {
        prepared.push_back(classifier_ != nullptr
                               ? classifier_->prepare(p.part(j), std::nullopt, embed::InputOptions{})
                               : embedder_->prepare(p.part(j), embed::InputOptions{}));
      } catch (const Error& e) {
        throw Error(e.kind(), fmt::format("input {}: {}", i, e.what()));
      }
    }
    std::vector<GuardResult> results;
    results.reserve(prepared.size());
    if (classifier_ == nullptr &&
        abstains_always()) {  // nothing to embed: the answer does not depend on the vector
      for (const embed::PreparedInput& x : prepared) results.push_back(decide({}, x));
      out.push_back(combine(results, p, texts[i]));
      continue;
    }
    const std::size_t width = classifier_ != nullptr ? classifier_->labels().size() : embedder_->dim();
    for (std::size_t begin = 0; begin < prepared.size(); begin += kEmbedChunk) {
      const std::size_t end = std::min(prepared.size(), begin + kEmbedChunk);
      std::vector<const embed::PreparedInput*> batch;
      for (std::size_t j = begin; j < end; ++j) batch.push_back(&prepared[j]);
      std::vector<float> rows(batch.size() * width);
      if (classifier_ != nullptr) {
        classifier_->classify_prepared(batch, rows);
      } else {
        embedder_->embed_prepared(batch, rows);
      }
      for (std::size_t j = 0; j < batch.size(); ++j) {
        const std::span<const float> row(rows.data() + j * width, width);
        results.push_back(classifier_ != nullptr ? decide_logits(row, *batch[j], p.part(begin + j))
                                                 : decide(row, *batch[j], p.part(begin + j)));
      }
    }
    out.push_back(combine(results, p, texts[i]));
  }
  return out;
}

}  // namespace warden::guard
