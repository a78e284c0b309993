// The tokenizer's tasks (token_tasks.hpp).

#include <fmt/format.h>

#include "serving/results.hpp"
#include "serving/tasks/task_error.hpp"
#include "serving/tasks/tasks.hpp"

namespace warden::serving::tasks {

namespace {

// What the tokenizer refuses as Untokenizable, naming the input.
template <class Work>
auto tokenizing(const Field& field, std::size_t index, Work&& work) {
  try {
    return work();
  } catch (const Error& err) {
    if (err.kind() != ErrorKind::InvalidInput) throw;
    throw TaskError(Fault::Untokenizable, fmt::format("{}: {}", field.at(index), err.what()), field.name);
  }
}

}  // namespace

void Tasks::tokenize(Context context, Tokenize task, Then<std::vector<std::vector<embed::TokenInfo>>> then) {
  check_batch(task.inputs.size(), limits_, task.field.name);
  auto t = std::make_shared<const Tokenize>(std::move(task));
  const std::string asker = context.asker;
  run_on_worker<std::vector<std::vector<embed::TokenInfo>>>(
      context, {ModelKind::Embedding},
      [t, asker, limits = limits_](const ModelLease& lease) {
        const embed::Embedder& e = embedder_of(lease, asker);
        embed::InputOptions o =
            embed_options(e, {std::nullopt, embed::TruncationSide::Right, t->prompt_name}, limits);
        o.add_special_tokens = t->add_special_tokens;
        std::vector<std::vector<embed::TokenInfo>> out;
        for (std::size_t i = 0; i < t->inputs.size(); ++i) {
          out.push_back(tokenizing(t->field, i, [&] { return tei_tokens(e, t->inputs[i], o); }));
        }
        return out;
      },
      std::move(then));
}

void Tasks::decode(Context context, Decode task, Then<std::vector<std::string>> then) {
  check_batch(task.ids.size(), limits_, task.field.name);
  auto t = std::make_shared<const Decode>(std::move(task));
  const std::string asker = context.asker;
  run_on_worker<std::vector<std::string>>(
      context, {ModelKind::Embedding},
      [t, asker](const ModelLease& lease) {
        const embed::Embedder& e = embedder_of(lease, asker);
        std::vector<std::string> out;
        for (std::size_t i = 0; i < t->ids.size(); ++i) {
          out.push_back(tokenizing(t->field, i, [&] { return e.decode(t->ids[i], t->skip_special_tokens); }));
        }
        return out;
      },
      std::move(then));
}

}  // namespace warden::serving::tasks
