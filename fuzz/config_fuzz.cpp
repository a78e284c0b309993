// libFuzzer: any text given to the config.json and sentence-transformers readers (modules.json,
// a Pooling's or a Dense module's config.json, config_sentence_transformers.json, an LLM
// reranker's template file) either
// parses into a config within its documented bounds or throws warden::Error. (The heads divide
// the hidden size only in the families that say so: the decoders have a head width of their own,
// head_dim, or hidden // heads as their upstream code floors it.)

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "classify/rerank_template.hpp"
#include "core/error.hpp"
#include "model/families/registry.hpp"
#include "model/metadata/sentence_transformers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto c = warden::model::families::parse_model_config(text, "config.json");
    if (c.num_attention_heads == 0 || c.id2label.empty()) std::abort();
    const bool must_divide = warden::model::families::resolve(c, ".").family->heads_divide_hidden;
    if (must_divide && c.hidden_size % c.num_attention_heads != 0) std::abort();
  } catch (const warden::Error&) {
  }
  try {
    (void)warden::model::metadata::parse_pooling_config(text, "pooling");
  } catch (const warden::Error&) {
  }
  try {
    (void)warden::model::metadata::parse_st_modules(text, "modules.json");
  } catch (const warden::Error&) {
  }
  try {
    (void)warden::model::metadata::parse_st_config(text, "st");
  } catch (const warden::Error&) {
  }
  try {
    const auto d = warden::model::metadata::parse_dense_module_config(text, "dense");
    if (d.in_features == 0 || d.out_features == 0) std::abort();
  } catch (const warden::Error&) {
  }
  try {
    const auto t = warden::classify::parse_rerank_template(text, "template.json");
    if (t.score_tokens.empty() || t.score_tokens.size() > 2) std::abort();
  } catch (const warden::Error&) {
  }
  return 0;
}
