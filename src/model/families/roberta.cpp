// RoBERTa and XLM-RoBERTa (modeling_roberta.py, modeling_xlm_roberta.py): BERT's layers under
// "roberta.", positions counted from padding_idx + 1, RobertaClassificationHead and
// RobertaLMHead.

#include "model/families/common.hpp"

namespace warden::model::families {

namespace {

constexpr FamilyClass kClasses[] = {
    {"RobertaModel", ClassRole::Encoder},
    {"RobertaForMaskedLM", ClassRole::MaskedLm},
    {"RobertaForSequenceClassification", ClassRole::Classifier},
    {"XLMRobertaModel", ClassRole::Encoder},
    {"XLMRobertaForMaskedLM", ClassRole::MaskedLm},
    {"XLMRobertaForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kModelTypes[] = {"roberta", "xlm-roberta"};

// RobertaLMHead: lm_head.{dense, layer_norm}, always the exact (erf) gelu, layer_norm_eps;
// lm_head.bias.
constexpr MlmHeadNames kMlmHead{"lm_head.dense", "lm_head.layer_norm",   "lm_head.decoder",
                                "lm_head.bias",  "lm_head.decoder.bias", true};

constexpr OnnxSupport kOnnx{{"classifier.dense", "classifier.out_proj"}, "tanh"};

std::string_view base_class(const metadata::ModelConfig& config) {
  return config.model_type == "roberta" ? "RobertaModel" : "XLMRobertaModel";
}

// RobertaEmbeddings' padding_idx is pad_token_id.
void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  count_positions_after_padding(p, static_cast<std::uint32_t>(config.pad_token_id.value_or(1)));
}

}  // namespace

extern const Family kRobertaFamily;
const Family kRobertaFamily{
    .name = "roberta",
    .classes = kClasses,
    .model_types = kModelTypes,
    .base_class = base_class,
    .plan = plan,
    .weight_prefix = "roberta.",
    .classifier = roberta_classifier,
    .mlm_head = &kMlmHead,
    .onnx = &kOnnx,
    .quantize_ahead = true,
    .default_pad_token_id = 1,
    .positions_after_pad = true,
};

}  // namespace warden::model::families
