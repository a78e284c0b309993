#pragma once
// The Embedder interface: everything that turns texts into vectors (the hashing fallback,
// the neural encoders) implements it, so the CLI, the server and the guard never care
// which kind they hold.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace warden {

// A row-major batch of embeddings: rows() vectors of dim() floats.
class Embeddings {
 public:
  Embeddings(std::size_t rows, std::size_t dim) : dim_(dim), values_(rows * dim, 0.0F) {}
  [[nodiscard]] std::size_t rows() const noexcept { return dim_ == 0 ? 0 : values_.size() / dim_; }
  [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
  [[nodiscard]] std::span<float> row(std::size_t i) noexcept { return {values_.data() + i * dim_, dim_}; }
  [[nodiscard]] std::span<const float> row(std::size_t i) const noexcept {
    return {values_.data() + i * dim_, dim_};
  }
  [[nodiscard]] std::span<const float> values() const noexcept { return values_; }
  [[nodiscard]] std::span<float> values() noexcept { return values_; }

 private:
  std::size_t dim_;
  std::vector<float> values_;
};

class Embedder {
 public:
  virtual ~Embedder() = default;

  // Stable name that requests and responses use ("hashing-ngram-256", "use-lite", ...).
  [[nodiscard]] virtual std::string_view id() const noexcept = 0;
  // Length of every vector embed() returns.
  [[nodiscard]] virtual std::size_t dim() const noexcept = 0;
  // True when nearness of vectors reflects nearness of meaning. A lexical embedder says
  // false, and decisions that need meaning (the guard) abstain on it.
  [[nodiscard]] virtual bool semantic() const noexcept = 0;

  // One vector per text, in order. Throws Error(InvalidInput) for text that is not valid
  // UTF-8, naming its index; nothing is returned for the batch in that case.
  [[nodiscard]] virtual Embeddings embed(std::span<const std::string_view> texts) const = 0;
};

}  // namespace warden
