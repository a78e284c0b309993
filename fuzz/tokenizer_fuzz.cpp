// Fuzzes the whole pipeline: the first byte picks one of the test tokenizers (WordPiece,
// Unigram, BPE, Precompiled, Split, ...) and the options; the rest is the text (a '\x01'
// splits it into a pair). Invalid UTF-8 must be a warden::Error; anything else must
// encode, keep its offsets inside the input, and decode back without crashing.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

std::vector<std::unique_ptr<warden::tokenizer::Tokenizer>>& tokenizers() {
  static std::vector<std::unique_ptr<warden::tokenizer::Tokenizer>> all = [] {
    std::vector<std::unique_ptr<warden::tokenizer::Tokenizer>> v;
    for (const char* f : {"bert-base-uncased-tokenizer.json", "unigram-use-vocab-tokenizer.json",
                          "tokref/bpe-roberta.json", "tokref/bpe-llama.json", "tokref/bpe-prefix.json",
                          "tokref/bpe-suffix.json", "tokref/unigram-xlmr.json",
                          "tokref/unigram-bytefallback.json", "tokref/wordpiece-split-behaviors.json",
                          "tokref/wordpiece-whitespace.json", "tokref/bpe-bytelevel-template.json",
                          "tokref/wordlevel-nmt.json", "tokref/bpe-bytelevel-normalizer.json"}) {
      v.push_back(std::make_unique<warden::tokenizer::Tokenizer>(
          warden::tokenizer::Tokenizer::from_file(std::string(WARDEN_TEST_DATA) + "/" + f)));
    }
    return v;
  }();
  return all;
}

void check(const warden::tokenizer::Encoding& e, std::size_t len_a, std::size_t len_b) {
  if (e.offsets.size() != e.ids.size() || e.char_offsets.size() != e.ids.size()) __builtin_trap();
  for (std::size_t i = 0; i < e.ids.size(); ++i) {
    const std::size_t limit = e.sequence_ids[i] == 1 ? len_b : len_a;
    if (e.offsets[i].begin > e.offsets[i].end || e.offsets[i].end > limit) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  auto& all = tokenizers();
  const std::uint8_t sel = data[0];
  warden::tokenizer::Tokenizer& tok = *all[sel % all.size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const warden::tokenizer::EncodeOptions opts{(sel & 0x80U) != 0, (sel & 0x40U) != 0};
  try {
    const std::size_t cut = text.find('\x01');
    warden::tokenizer::Encoding e;
    if (cut != std::string_view::npos && (sel & 0x20U) != 0) {
      e = tok.encode_pair(text.substr(0, cut), text.substr(cut + 1), opts);
      check(e, cut, text.size() - cut - 1);
    } else {
      e = tok.encode(text, opts);
      check(e, text.size(), 0);
    }
    (void)tok.decode(e.ids, (sel & 0x10U) != 0);
  } catch (const warden::Error&) {
    // Invalid UTF-8 or a truncation that cannot be satisfied: a clean refusal.
  }
  return 0;
}
