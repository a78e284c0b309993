// Mistral used as an encoder (transformers' modeling_mistral.py): e5-mistral-7b-instruct,
// SFR-Embedding-Mistral, Linq-Embed-Mistral (MistralModel, last-token pooling). Llama's layers
// without biases, and a sliding window: with sliding_window set, MistralModel builds
// create_sliding_window_causal_mask, so token i sees j when j <= i and i - j < sliding_window.

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/families/decoder.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace metadata::config_keys;

constexpr FamilyClass kClasses[] = {
    {"MistralModel", ClassRole::Encoder},
    {"MistralForCausalLM", ClassRole::CausalLm},
};
constexpr std::string_view kModelTypes[] = {"mistral"};

struct Settings : DecoderSettings {
  std::size_t window = 0;  // sliding_window; 0: null (no window)
};

// MistralConfig (configuration_mistral.py): the decoders' keys with its defaults (131072
// positions, 8 key/value heads, sliding_window 4096; read_decoder_config's own defaults read
// first, MistralConfig's heads then).
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  auto s = std::make_shared<Settings>();
  read_decoder_config(f, c, *s, 4096 * 32, "Mistral");
  read_decoder_heads(f, c, *s, 8, c.hidden_size / c.num_attention_heads);
  if (f.has("sliding_window")) {
    s->window = static_cast<std::size_t>(f.integer_in("sliding_window", 2, kMaxPositions));
  } else if (!f.is_null("sliding_window")) {
    s->window = 4096;
  }
  if (s->window > 0 && !s->causal) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{}: is_causal false with a sliding_window: Warden runs Mistral's window causal only",
                    f.source()));
  }
  return s;
}

void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& s = settings_of<Settings>(config);
  plan_decoder(s, p);
  if (s.window > 0) {
    p.dims.attention_window = s.window - 1;  // i - j < sliding_window: |i - j| <= it - 1
    p.dims.windowed_layers.assign(p.dims.layers, true);
  }
}

}  // namespace

extern const Family kMistralFamily;
const Family kMistralFamily{
    .name = "mistral",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .plan = plan,
    .weight_prefix = "model.",
    .heads_divide_hidden = false,
};

}  // namespace warden::model::families
