// Single-thread tokenizer throughput: MB/s and sequences/s over a corpus (one text per
// line), the median of several runs. tools/tokref/bench.js measures HuggingFace
// `tokenizers` on the same corpus; docs/benchmarks.md puts the two side by side.
//
//   tokenizer_bench <corpus.txt> <tokenizer.json>... [--runs N] [--pairs]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "tokenizer/tokenizer.hpp"

// Counts heap allocations, to check that the steady state allocates per call (the returned
// vectors) and not per token.
static std::size_t g_allocs = 0;
void* operator new(std::size_t n) {
  ++g_allocs;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

std::vector<std::string_view> split_lines(const std::string& all) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos < all.size()) {
    std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) nl = all.size();
    if (nl > pos) lines.emplace_back(all.data() + pos, nl - pos);
    pos = nl + 1;
  }
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 3) {
      std::fprintf(stderr, "usage: %s <corpus.txt> <tokenizer.json>... [--runs N] [--pairs]\n", argv[0]);
      return 2;
    }
    int runs = 5;
    bool pairs = false;
    std::vector<std::string> files;
    for (int i = 2; i < argc; ++i) {
      if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
        runs = std::max(1, std::atoi(argv[++i]));
      } else if (std::strcmp(argv[i], "--pairs") == 0) {
        pairs = true;
      } else {
        files.emplace_back(argv[i]);
      }
    }
    const std::string corpus = warden::read_file(argv[1]);
    const auto lines = split_lines(corpus);
    std::size_t bytes = 0;
    for (const auto l : lines) bytes += l.size();
    std::printf("corpus: %zu sequences, %.2f MB%s\n", lines.size(), static_cast<double>(bytes) / 1e6,
                pairs ? " (as consecutive pairs)" : "");
    for (const auto& file : files) {
      const auto l0 = std::chrono::steady_clock::now();
      warden::tokenizer::Tokenizer tok = warden::tokenizer::Tokenizer::from_file(file);
      const double load_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - l0).count();
      tok.set_truncation(std::nullopt);  // HF side runs without truncation too
      std::vector<double> secs;
      std::size_t tokens = 0;
      std::size_t allocs = 0;
      for (int r = 0; r < runs + 1; ++r) {  // the first run warms caches and is dropped
        tokens = 0;
        const std::size_t a0 = g_allocs;
        const auto t0 = std::chrono::steady_clock::now();
        if (pairs) {
          for (std::size_t i = 0; i + 1 < lines.size(); i += 2)
            tokens += tok.encode_pair(lines[i], lines[i + 1]).size();
        } else {
          for (const auto l : lines) tokens += tok.encode(l).size();
        }
        const auto t1 = std::chrono::steady_clock::now();
        if (r > 0) secs.push_back(std::chrono::duration<double>(t1 - t0).count());
        allocs = g_allocs - a0;
      }
      std::sort(secs.begin(), secs.end());
      const double med = secs[secs.size() / 2];
      const double seqs = pairs ? static_cast<double>(lines.size() / 2) : static_cast<double>(lines.size());
      std::printf(
          "%-60s %8.2f MB/s %10.0f seq/s %9zu tokens  (median of %d, min %.3f s, max %.3f s; %.1f "
          "allocations/seq, "
          "%.3f/token; loaded in %.1f ms)\n",
          file.c_str(), static_cast<double>(bytes) / 1e6 / med, seqs / med, tokens, runs, secs.front(),
          secs.back(), static_cast<double>(allocs) / seqs,
          static_cast<double>(allocs) / static_cast<double>(tokens), load_ms);
    }
    return 0;
  } catch (const warden::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
