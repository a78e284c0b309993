// BERT (transformers' modeling_bert.py): BertModel, its masked-LM and classifier classes, and
// Stanford ColBERT's HF_ColBERT checkpoints. The shared encoder's defaults are BERT's, so the
// family only names its classes and heads.

#include "model/families/common.hpp"

namespace warden::model::families {

namespace {

constexpr FamilyClass kClasses[] = {
    {"BertModel", ClassRole::Encoder},
    // Stanford ColBERT's checkpoints (colbert-ir/colbertv2.0): BertModel weights under "bert."
    // plus the projection "linear.weight".
    {"HF_ColBERT", ClassRole::StanfordColbert},
    // SPLADE's checkpoints (the MLM head read when the folder's modules say SpladePooling), else
    // the encoder alone.
    {"BertForMaskedLM", ClassRole::MaskedLm},
    {"BertForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kModelTypes[] = {"bert"};

// BertLMPredictionHead: cls.predictions.transform.{dense, LayerNorm} with config.hidden_act and
// layer_norm_eps, the decoder tied to the word embeddings, cls.predictions.bias.
constexpr MlmHeadNames kMlmHead{"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                                "cls.predictions.decoder", "cls.predictions.bias",
                                "cls.predictions.decoder.bias"};

// BertPooler uses tanh.
constexpr OnnxSupport kOnnx{{"pooler.dense", "classifier"}, "tanh"};

// A config of model_type "bert" without "architectures" is a base model: JinaBERT's when its
// positions are ALiBi (the remote-code JinaBertConfig shares the model_type).
std::string_view base_class(const metadata::ModelConfig& config) {
  return config.position_embedding_type == "alibi" ? "JinaBertModel" : "BertModel";
}

}  // namespace

extern const Family kBertFamily;
const Family kBertFamily{
    .name = "bert",
    .classes = kClasses,
    .model_types = kModelTypes,
    .base_class = base_class,
    .weight_prefix = "bert.",
    .classifier = pooler_classifier,
    .mlm_head = &kMlmHead,
    .onnx = &kOnnx,
    .quantize_ahead = true,
    .default_pad_token_id = 0,
};

}  // namespace warden::model::families
