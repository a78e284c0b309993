#pragma once
// The tokenizer's tasks (TEI's /tokenize and /decode, gRPC's Tokenize and Decode): no model
// compute, so no batches; they run on a worker with the model leased.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serving/tasks/inputs.hpp"

namespace warden::serving::tasks {

// Each text's tokens as TEI shows them (serving::tei_tokens).
struct Tokenize {
  std::vector<std::string> inputs;
  Field field;
  std::optional<std::string> prompt_name;  // absent: the model's default prompt, if any
  bool add_special_tokens = true;
};

// Each id list's text.
struct Decode {
  std::vector<std::vector<std::uint32_t>> ids;
  Field field{"ids"};
  bool skip_special_tokens = true;
};

}  // namespace warden::serving::tasks
