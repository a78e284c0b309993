#pragma once
// What several families share: BERT's tensor names, the activation names config.json uses,
// the two classification heads most families inherit (BERT's pooler, RoBERTa's head) and
// RoBERTa's way of counting positions.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "kernels/activation.hpp"
#include "model/families/family.hpp"

namespace warden::model::families {

// BertLayer: attention.self.{query,key,value}, attention.output.{dense,LayerNorm},
// intermediate.dense, output.{dense,LayerNorm}; BertEmbeddings' LayerNorm.
inline constexpr engine::LayerNames kBertLayerNames{
    "encoder.layer.",       "attention.self.query",   "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm",
    "intermediate.dense",   "output.dense",           "output.LayerNorm"};

// "<dir>/config.json", for errors.
std::string config_path(const std::filesystem::path& dir);

// hidden_act (or another activation field `field`) as a kernel activation; Error(Unsupported)
// naming the file and the field for one Warden does not run.
kernels::Activation activation_named(const std::string& name, std::string_view field,
                                     const std::filesystem::path& dir);

// The head most families have: a dense layer `dense` (read by `dense_from`: the encoder's prefix
// or the root), `activation`, then `out` at the root, one row per label.
heads::ClassifierHead dense_head(const HeadSource& source, const engine::WeightReader& dense_from,
                                 std::string_view dense, kernels::Activation activation,
                                 std::string_view out);
// BertForSequenceClassification's head, which JinaBERT and GTE repeat: the pooler (dense, tanh)
// on the first token under the encoder's prefix, then the classifier at the root.
heads::ClassifierHead pooler_classifier(const HeadSource& source);
// RobertaClassificationHead, which MPNet repeats: classifier.dense, tanh, classifier.out_proj.
heads::ClassifierHead roberta_classifier(const HeadSource& source);

// create_position_ids_from_input_ids: positions from padding_idx + 1 over the non-padding tokens.
void count_positions_after_padding(EncoderPlan& plan, std::uint32_t padding_idx);

}  // namespace warden::model::families
