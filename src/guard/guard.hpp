#pragma once
// The prompt-injection guard (docs/guard.md): decides per input whether it is an attack, or
// abstains when it cannot judge. Methods, in order:
//   classifier  a sequence-classification model configured for the guard (--guard-model):
//               score = the probability of its positive label (softmax over the labels;
//               sigmoid for a one-label model), flagged = score >= threshold (default 0.5);
//               no bank is needed;
//   probe       the default: an L2-regularised logistic regression fitted on the bank's
//               train split embedded with the guard's embedder; score = its probability,
//               flagged = score >= threshold;
//   abstained   (either method) the embedder is lexical (semantic() == false: it cannot judge paraphrased
//               attacks), the text is empty or only white space (nothing to judge: an
//               empty prompt is no attack, and no score is made up for it), or more than half of the input's
//               tokens, or of the characters they cover, are the unknown token (text the model cannot read).
//               flagged and score are then empty.
//
// The server calls decide(row, prepared) (probe) or decide_logits(logits, prepared)
// (classifier) with rows its own batches produced; the CLI and tests call decide_texts(). The fitted probe is
// cached per embedder and bank
// (${XDG_CACHE_HOME:-~/.cache}/warden/guard/); a cache file that does not verify is refitted.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "classify/sequence_classifier.hpp"
#include "embed/embedder.hpp"
#include "guard/bank.hpp"
#include "guard/canonical/canonicalize.hpp"
#include "guard/classification_metrics.hpp"
#include "guard/exemplar_similarity.hpp"
#include "guard/language.hpp"
#include "guard/logistic.hpp"
#include "guard/probe_file.hpp"

namespace warden::guard {

struct GuardResult {
  std::optional<bool> flagged;   // empty when abstained
  std::optional<float> score;    // the probe's or classifier's probability; empty when abstained
  std::string method;            // "probe" | "abstained" | "classifier"
  std::string label;             // probe: "attack" | "benign"; classifier: the argmax label's name
  std::string closest_exemplar;  // probe: the nearest train attack by cosine; else empty
  std::string embedder;          // the embedder's id, or the classifier's for the classifier method
  bool semantic = false;
  std::string reason;  // why it abstained; empty otherwise
  // For a text longer than the model reads at once: the window the verdict comes from,
  // [start, end) in code points of the text.
  std::optional<std::pair<std::size_t, std::size_t>> window;
  // What the text hid or disguised (invisible characters, encoded spans, look-alike
  // letters...; canonical/canonicalize.hpp), whatever the verdict: the guard judged the
  // text without its disguises.
  std::vector<std::string> evidence;
  // Abstained on its language: the language found (ISO 639-1, or "a non-Latin script").
  std::string language;

  // One compact JSON object with the fields above (absent optionals are null); with `text`,
  // a last field echoing the judged text (the CLI's lines, so that each names its input).
  [[nodiscard]] std::string to_json(std::optional<std::string_view> text = std::nullopt) const;
};

// A part of a text the guard judges on its own: bytes [begin, end).
struct TextWindow {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// What the guard reads of one text: its canonical form (the disguises taken off), cut into
// the windows its model reads whole.
struct GuardPlan {
  canonical::Canonical canonical;
  std::vector<TextWindow> windows;  // bytes of canonical.text
  [[nodiscard]] std::string_view part(std::size_t i) const {
    return std::string_view(canonical.text).substr(windows[i].begin, windows[i].end - windows[i].begin);
  }
};

struct GuardOptions {
  std::optional<float> threshold{};  // overrides the one chosen on train folds
  // The probe's threshold is chosen so that at most this fraction of the benign train texts
  // are flagged (out of fold) — the operating point production needs, where most traffic
  // is benign. Unset: the best out-of-fold F1 (a balanced set's choice).
  std::optional<double> target_fpr = 0.01;
  std::optional<std::filesystem::path> cache_dir{};  // default: default_cache_dir()
  bool use_cache = true;                             // false: always fit, never read or write the cache
  // The classifier method: the label(s) whose probabilities, summed, are the score
  // (comma-separated). Empty: every label naming INJECTION, ATTACK, JAILBREAK, UNSAFE or
  // MALICIOUS (case-insensitive) — Prompt-Guard-86M's INJECTION and JAILBREAK together, as its
  // model card scores injections — else LABEL_1 of a model labelled only LABEL_0 and LABEL_1
  // (the binary Llama-Prompt-Guard-2 checkpoints).
  std::string positive_label{};
  // The languages the probe's embedder reads (ISO 639-1): text in another abstains. Unset:
  // what the embedder declares (Embedder::languages(); use-lite: English); empty: any.
  std::optional<std::vector<std::string>> languages{};
  // Once a stop is requested, a probe's fit in progress ends at its next chunk of texts
  // with FitStopped (a server that stops while it fits in the background).
  std::stop_token stop{};
};

// A fit ended by GuardOptions::stop.
class FitStopped : public std::runtime_error {
 public:
  FitStopped() : std::runtime_error("the guard's fit was stopped") {}
};

// ${XDG_CACHE_HOME:-$HOME/.cache}/warden/guard.
std::filesystem::path default_cache_dir();

// What the probe's fit chose, and how it was obtained.
struct ProbeInfo {
  double l2 = 0.0;
  float threshold = 0.5F;  // chosen on the validation part of train (or the cache's)
  std::string cache;       // "hit", "written", "refit: <why the file was rejected>", "off"
  std::string cache_file;
};

class Guard {
 public:
  // Embeds the bank's train split with `embedder` (not owned; must outlive the Guard) and
  // fits the probe, or loads the fit cached for this bank and embedder (a handful of texts
  // are embedded to check it is the same embedder). On a lexical embedder nothing is
  // fitted: every decision abstains. Error(InvalidInput) when the train split lacks
  // attacks or benign texts.
  Guard(const embed::Embedder& embedder, const Bank& bank, GuardOptions options = {});
  // A probe fitted before (`warden guard fit`; parse_probe). Error(InvalidArgument) when
  // `embedder` is lexical or is not the embedder it was fitted with (its first exemplars,
  // embedded again, do not match). options.threshold overrides the fitted threshold;
  // target_fpr and the cache do not apply.
  Guard(const embed::Embedder& embedder, FittedProbe probe, GuardOptions options = {});
  // The classifier method over `classifier` (not owned; must outlive the Guard). The caller
  // loads it, so that the server can also hand it to its scheduler. Error(InvalidArgument)
  // when options.positive_label names a label it does not have, or is empty and no label
  // names an attack (the message lists the labels). options.cache_dir and use_cache do not apply.
  explicit Guard(const classify::SequenceClassifier& classifier, GuardOptions options = {});

  // `row` is the embedder's pooled vector for `input` (normalised here when it is not a unit
  // vector); `input` is what prepare() made of it. The unknown-token rule counts its ids;
  // pass the input's `text` too where there is one, because a tokenizer that merges a run
  // of unknown characters into one token (use-lite does) hides how much of the text it
  // could not read: with the text, the rule also weighs the characters each unknown token
  // covers against the text's non-space characters, and a blank text abstains.
  // Error(Internal) on a classifier guard.
  [[nodiscard]] GuardResult decide(std::span<const float> row, const embed::PreparedInput& input,
                                   std::optional<std::string_view> text = std::nullopt) const;
  // The classifier method: `logits` is the classifier's raw row (labels().size() values) for
  // `input`, what classifier()->prepare(text) made of `text`. Error(Internal) on a probe guard.
  [[nodiscard]] GuardResult decide_logits(std::span<const float> logits, const embed::PreparedInput& input,
                                          std::optional<std::string_view> text = std::nullopt) const;
  // A text longer than the model's input is read in overlapping windows, as Prompt-Guard's
  // model card advises: the whole text when it fits (special tokens included), else windows
  // of as many tokens as fit, each starting half a window after the previous one, the last
  // ending where the text does. The model is the classifier's, or the probe's embedder.
  [[nodiscard]] std::vector<TextWindow> windows(std::string_view text) const;
  // The canonical form of valid UTF-8 `text` and its windows: what decide_texts() and the
  // server judge, one window at a time.
  [[nodiscard]] GuardPlan plan(std::string_view text) const;
  // One verdict for `text` from its plan's windows (combine_windows), the window named in
  // `text`'s own code points and the plan's evidence attached.
  [[nodiscard]] static GuardResult combine(std::span<const GuardResult> results, const GuardPlan& plan,
                                           std::string_view text);
  // One verdict from the windows' (decide_logits on each, in the order windows() gave them):
  // the flagged one with the highest score, else the highest score; abstained windows count
  // only when all did. With more than one window, `window` names the verdict's.
  [[nodiscard]] static GuardResult combine_windows(std::span<const GuardResult> results,
                                                   std::span<const TextWindow> windows,
                                                   std::string_view text);

  // Prepares and embeds (or classifies) the texts itself (Error(InvalidInput) naming the index
  // of a bad one); the classifier method reads each text in windows().
  [[nodiscard]] std::vector<GuardResult> decide_texts(std::span<const std::string_view> texts) const;

  // The nearest-exemplar rule over the train split (the baseline guard-eval reports): true
  // when the train text nearest by cosine is an attack. Requires the probe on a semantic embedder.
  [[nodiscard]] bool nearest_is_attack(std::span<const float> unit_row) const;

  // Exactly one is set: the probe's embedder or the classifier method's model.
  [[nodiscard]] const embed::Embedder* embedder() const noexcept { return embedder_; }
  [[nodiscard]] const classify::SequenceClassifier* classifier() const noexcept { return classifier_; }
  // The label indices whose probabilities, summed, are the score (classifier method; {0}
  // otherwise), ascending.
  [[nodiscard]] const std::vector<std::size_t>& positive_labels() const noexcept { return positives_; }
  // Their names, comma-separated (classifier method).
  [[nodiscard]] std::string positive_label_names() const;
  [[nodiscard]] bool abstains_always() const noexcept {
    return classifier_ == nullptr && !embedder_->semantic();
  }
  [[nodiscard]] float threshold() const noexcept { return threshold_; }
  [[nodiscard]] const ProbeInfo& probe_info() const noexcept { return info_; }
  // The fitted probe (empty on a classifier or lexical guard): what `guard fit` saves.
  [[nodiscard]] const FittedProbe& fitted_probe() const noexcept { return probe_; }

  // Names INJECTION, ATTACK, JAILBREAK, UNSAFE or MALICIOUS, case-insensitively: a default
  // positive label.
  [[nodiscard]] static bool names_attack(std::string_view label);

  // Reason strings, fixed so that callers and tests can match them.
  static constexpr std::string_view kLexicalReason =
      "the embedder is lexical (semantic = false): it matches words, not meaning, so it cannot judge "
      "paraphrased attacks";
  static constexpr std::string_view kBlankReason =
      "the input is empty or only white space: there is no text to judge";
  static constexpr std::string_view kLanguageReason =
      "the text is in a language the embedder does not read (see \"language\"): it cannot be judged";
  static constexpr std::string_view kUnknownReason =
      "more than half of the input is the unknown token (its tokens, or the characters they cover): the "
      "text lies outside the embedder's vocabulary, so it cannot be judged";

 private:
  [[nodiscard]] std::vector<TextWindow> probe_windows(std::string_view text) const;
  void adopt(FittedProbe probe, const GuardOptions& options);

  const embed::Embedder* embedder_ = nullptr;
  const classify::SequenceClassifier* classifier_ = nullptr;
  std::vector<std::size_t> positives_{0};
  FittedProbe probe_;                     // the model, its threshold and the exemplars
  std::unique_ptr<ExemplarIndex> index_;  // the exemplars packed for the similarity product
  float threshold_ = 0.5F;
  ProbeInfo info_;
  std::vector<std::string> languages_;  // what the probe's embedder reads; empty: any
};

}  // namespace warden::guard
