#pragma once
// A fitted probe as a file: what `warden guard fit --out` writes, what --guard-probe serves
// and what the guard's cache holds. It carries everything the guard needs without
// embedding its train texts again: the logistic model, the threshold, the cross-validated
// figures of the fit, and the exemplars (each train window's text, label and unit vector:
// the nearest-exemplar rule and `closest_exemplar` read them).
//
// The file is line-oriented text; vectors are float32 bit patterns in hex and texts are
// their bytes in hex, so that no text can break a line. A checksum over the whole guards
// against truncation. Parsing is bounded: every count and length is checked against the
// bytes that are there before anything is allocated for it.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/logistic.hpp"

namespace warden::guard {

// Out-of-fold figures of a fit, per train text (a text's score is its highest window's).
struct CrossValidation {
  std::size_t texts = 0;
  std::size_t attacks = 0;
  std::optional<double> auc;  // empty when a class is missing
  double recall = 0.0;        // attacks flagged at the chosen threshold
  double false_positive_rate = 0.0;
};

struct FittedProbe {
  std::string embedder;  // the embedder's id when it was fitted (informational)
  std::size_t dim = 0;
  // Values the model reads after the vector: 0, or kSimilarityFeatures (the exemplar
  // similarity); the model has dim + features weights.
  std::size_t features = 0;
  std::uint64_t bank_key = 0;  // what it was fitted on (train texts, labels, options)
  double l2 = 1.0;
  float threshold = 0.5F;
  LogisticModel model;
  CrossValidation cv;
  std::vector<std::string> texts;  // the exemplars: n texts, labels and unit rows (n x dim)
  std::vector<bool> attack;
  std::vector<float> rows;
};

// The most a probe file may hold (a few thousand exemplars of a 1024-d model take tens of MB).
inline constexpr std::size_t kMaxProbeFileBytes = std::size_t{512} << 20;

// The file's bytes.
std::string serialise_probe(const FittedProbe& probe);

// Error(InvalidInput) naming `source` and the line for anything that does not verify.
FittedProbe parse_probe(std::string_view bytes, std::string_view source);

// Where `warden guard fit --out DIR` saves its probe: DIR/guard_probe.txt.
inline constexpr std::string_view kProbeFileName = "guard_probe.txt";
// Reads and parses a probe: `path` is the file, or a folder holding kProbeFileName.
FittedProbe load_probe(const std::filesystem::path& path);

}  // namespace warden::guard
