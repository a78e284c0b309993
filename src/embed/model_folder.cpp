#include "embed/model_folder.hpp"

#include "embed/sequence_classifier.hpp"
#include "model/config.hpp"

namespace warden {

ModelFolder inspect_model_folder(const std::filesystem::path& dir) {
  const ModelConfig config = read_model_config(dir / "config.json");
  ModelFolder f;
  if (has_classification_head(dir))
    f.kind = config.num_labels() == 1 ? ModelKind::Reranker : ModelKind::Classifier;
  f.hidden_size = config.hidden_size;
  f.half_precision_checkpoint =
      config.torch_dtype && (*config.torch_dtype == "float16" || *config.torch_dtype == "bfloat16");
  return f;
}

}  // namespace warden
