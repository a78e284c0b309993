// libFuzzer: any text given to the config.json and sentence-transformers readers either
// parses into a config within its documented bounds or throws warden::Error.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "model/families/registry.hpp"
#include "model/metadata/sentence_transformers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto c = warden::model::families::parse_model_config(text, "config.json");
    if (c.num_attention_heads == 0 || c.hidden_size % c.num_attention_heads != 0 || c.id2label.empty())
      std::abort();
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
  return 0;
}
