#pragma once
// A row-major block of vectors: rows() vectors of dim() floats. What an embedder returns for a
// batch, and a multi-vector head for one sequence (a vector per token).

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace warden {

class Embeddings {
 public:
  Embeddings() = default;
  Embeddings(std::size_t rows, std::size_t dim) : dim_(dim), values_(rows * dim, 0.0F) {}
  [[nodiscard]] std::size_t rows() const noexcept { return dim_ == 0 ? 0 : values_.size() / dim_; }
  [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
  [[nodiscard]] std::span<float> row(std::size_t i) noexcept { return {values_.data() + i * dim_, dim_}; }
  [[nodiscard]] std::span<const float> row(std::size_t i) const noexcept {
    return {values_.data() + i * dim_, dim_};
  }
  [[nodiscard]] std::span<const float> values() const noexcept { return values_; }
  [[nodiscard]] std::span<float> values() noexcept { return values_; }
  // The values themselves, leaving this empty: a buffer handed on without a copy (the Python
  // package's arrays own it).
  [[nodiscard]] std::vector<float> release() && noexcept {
    dim_ = 0;
    return std::move(values_);
  }

 private:
  std::size_t dim_ = 0;
  std::vector<float> values_;
};

}  // namespace warden
