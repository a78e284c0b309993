#pragma once
// The model families Warden runs (model/families/<name>.cpp), and the one place that finds a
// config's family: by its HF class (config.json's first "architectures" entry) or, without one,
// by its model_type's base class.

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "model/families/family.hpp"
#include "model/metadata/config.hpp"

namespace warden::model::families {

// Every family, in the order `supported_architectures` lists them.
std::span<const Family* const> all();

// The family that reads the keys of `model_type`, or null.
const Family* for_model_type(std::string_view model_type);

struct ResolvedClass {
  const Family* family;
  const FamilyClass* cls;
};
// The family and class Warden runs for a config: its first "architectures" entry, or the base
// class of its model_type. Error(Unsupported) naming the file, the class and what is supported.
ResolvedClass resolve(const metadata::ModelConfig& config, const std::filesystem::path& dir);

// The HF classes Warden runs, comma-separated, for error messages; class_names, those for which
// `pick` holds.
std::string supported_architectures();
std::string class_names(const std::function<bool(const Family&, const FamilyClass&)>& pick);

// Parses config.json text; `source` names the file in errors. The common keys are read here,
// the rest by the config's family (its class, else its model_type; an unknown one is read with
// BERT's key names), which keeps what only it has in family_settings.
metadata::ModelConfig parse_model_config(std::string_view json, std::string_view source);
// Reads and parses a config.json file (Error(NotFound) when it does not exist).
metadata::ModelConfig read_model_config(const std::filesystem::path& path);

}  // namespace warden::model::families
