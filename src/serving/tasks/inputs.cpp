#include "serving/tasks/inputs.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "serving/pipeline.hpp"
#include "serving/results.hpp"
#include "serving/tasks/task_error.hpp"

namespace warden::serving::tasks {

std::string Field::at(std::size_t index) const {
  return listed ? fmt::format("{}[{}]", name, index) : name;
}

void check_batch(std::size_t n, const Limits& limits, std::string_view field) {
  if (n > limits.max_batch) {
    // TEI's wording, so clients that match on it keep working.
    throw TaskError(Fault::Invalid,
                    fmt::format("batch size {} > maximum allowed batch size {}", n, limits.max_batch),
                    std::string(field));
  }
}

void check_response_floats(std::size_t floats, const Limits& limits, std::string_view field) {
  if (floats > limits.max_response_floats) {
    throw TaskError(Fault::TooLarge,
                    fmt::format("the answer would hold {} vector values, more than the limit of {} "
                                "(--max-response-floats): send fewer or shorter inputs",
                                floats, limits.max_response_floats),
                    std::string(field));
  }
}

void refuse_empty(const std::vector<std::string>& texts, const Field& field) {
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].empty())
      throw TaskError(Fault::Empty, fmt::format("`{}` cannot be empty", field.at(i)), field.name);
  }
}

void refuse_empty(const std::vector<Input>& inputs, const Field& field) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_ids && inputs[i].text.empty()) {
      throw TaskError(Fault::Empty, fmt::format("`{}` cannot be empty", field.at(i)), field.name);
    }
  }
}

embed::InputOptions embed_options(const embed::Embedder& e, const Tokenization& t, const Limits& limits) {
  try {
    return serving::input_options(e, t.truncate.value_or(limits.auto_truncate), t.side, t.prompt_name);
  } catch (const Error& err) {
    throw TaskError(Fault::Invalid, fmt::format("{}: {}", t.prompt_field, err.what()), t.prompt_field);
  }
}

embed::InputOptions classify_options(const Tokenization& t, const Limits& limits) {
  embed::InputOptions o;
  o.truncate = t.truncate.value_or(limits.auto_truncate);
  o.side = t.side;
  return o;
}

namespace {

template <class Prepare>
embed::PreparedInput named(const Field& field, std::size_t index, Prepare&& prepare) {
  try {
    return prepare();
  } catch (const TaskError&) {
    throw;
  } catch (const Error& err) {
    if (err.kind() == ErrorKind::Unsupported) throw TaskError(Fault::ModelCannot, err.what(), field.name);
    if (err.kind() == ErrorKind::InvalidInput || err.kind() == ErrorKind::InvalidArgument) {
      throw TaskError(Fault::Invalid, fmt::format("{}: {}", field.at(index), err.what()), field.name);
    }
    throw;
  }
}

}  // namespace

embed::PreparedInput prepare_input(const embed::Embedder& e, const Input& in,
                                   const embed::InputOptions& options, const Field& field,
                                   std::size_t index) {
  if (!in.is_ids) return prepare_text(e, in.text, options, field, index);
  return named(field, index, [&] {
    embed::InputOptions no_prompt = options;
    no_prompt.prompt = {};
    return e.prepare_ids(in.ids, no_prompt);
  });
}

embed::PreparedInput prepare_text(const embed::Embedder& e, std::string_view text,
                                  const embed::InputOptions& options, const Field& field, std::size_t index) {
  return named(field, index, [&] { return e.prepare(text, options); });
}

embed::PreparedInput prepare_pair(const classify::SequenceClassifier& c, std::string_view text,
                                  std::optional<std::string_view> pair, const embed::InputOptions& options,
                                  const Field& field, std::size_t index) {
  return named(field, index, [&] { return c.prepare(text, pair, options); });
}

std::string input_key(const std::string& prefix, const Input& in) {
  return in.is_ids ? ids_key(prefix, in.ids) : text_key(prefix, in.text);
}

std::size_t characters(const std::vector<Input>& inputs) {
  std::size_t n = 0;
  for (const Input& in : inputs) n += utf8::code_points(in.text);
  return n;
}

}  // namespace warden::serving::tasks
