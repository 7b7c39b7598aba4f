#include "spec/spec_parser.h"

#include <toml++/toml.h>

#include <filesystem>
#include <map>
#include <string_view>

#include "spec/overrides.h"
#include "spec/sections.h"
#include "spec/toml_access.h"
#include "util/files.h"

namespace ppsearch::spec {
namespace {

// Relative paths in a spec mean "next to the spec file", wherever ppsearch
// runs from, so they resolve against the file's absolute directory.
std::string BaseDir(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute =
      std::filesystem::absolute(path.empty() ? std::string(".") : path, ec);
  if (ec) return DirName(path);
  return absolute.parent_path().lexically_normal().string();
}

// The top-level table `name`, or nullptr if it is absent and optional.
Result<const toml::table*> Section(const TableReader& root, const std::string& name, Need need) {
  if (root.Find(name) == nullptr && need == Need::kRequired) {
    SourceLoc file;
    file.file = root.source().path();
    return PositionError(file, "missing required section [" + name + "]");
  }
  return root.Table(name, Need::kOptional);
}

// Reads section `name` with `read` (a Read* function bound to its output).
template <typename ReadFn>
Status ReadSection(const TableReader& root, const std::string& name, Need need, ReadFn read) {
  PPS_ASSIGN_OR_RETURN(const toml::table* table, Section(root, name, need));
  if (table == nullptr) return Status::Ok();
  return read(TableReader(root.source(), *table, name));
}

void RecordOrigins(const SpecSource& source, const toml::node& node, const std::string& key,
                   std::map<std::string, SourceLoc>* origins) {
  if (!key.empty()) (*origins)[key] = source.Locate(node.source(), key);
  if (const auto* table = node.as_table()) {
    for (const auto& [child_key, child] : *table) {
      RecordOrigins(source, child, JoinKey(key, child_key.str()), origins);
    }
  } else if (const auto* array = node.as_array()) {
    for (size_t i = 0; i < array->size(); ++i) {
      RecordOrigins(source, *array->get(i), key + "[" + std::to_string(i) + "]", origins);
    }
  }
}

Result<Spec> ConvertSpec(const SpecSource& source, const toml::table& root_table,
                         const std::string& base_dir) {
  Spec spec;
  spec.path = source.path();
  spec.base_dir = base_dir;
  TableReader root(source, root_table, "");
  PPS_RETURN_IF_ERROR(root.CheckKeys(kSpecSections));
  // Sections without a table keep a file-level origin so messages still name the file.
  SourceLoc file_only;
  file_only.file = source.path();
  spec.baseline.origin = file_only;
  spec.decision.origin = file_only;
  spec.lifecycle.origin = file_only;
  spec.profile.origin = file_only;
  spec.search.origin = file_only;

  PPS_RETURN_IF_ERROR(ReadSection(root, "experiment", Need::kRequired, [&](const TableReader& t) {
    return ReadExperiment(t, base_dir, &spec.experiment);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "cluster", Need::kRequired, [&](const TableReader& t) {
    return ReadCluster(t, base_dir, &spec.cluster);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "engine", Need::kRequired, [&](const TableReader& t) {
    return ReadEngine(t, base_dir, &spec.engine);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "sweep", Need::kRequired, [&](const TableReader& t) {
    return ReadSweep(t, spec.cluster, &spec.sweep);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "workload", Need::kRequired, [&](const TableReader& t) {
    return ReadWorkload(t, base_dir, &spec.workload);
  }));
  // A disaggregated deployment is the sweep's one layout, known before the
  // tables that name the sweep's samples or layouts ([sim], [profile]).
  RecordOrigins(source, root_table, "", &spec.origins);
  PPS_ASSIGN_OR_RETURN(spec.disaggregation, ReadDisaggregation(root, spec));
  if (spec.disaggregation)
    spec.sweep.layouts = {DeploymentLayout(spec.disaggregation->prefill.layout,
                                           spec.disaggregation->decode.layout,
                                           spec.disaggregation->prefill.origin)};
  PPS_RETURN_IF_ERROR(ReadSection(root, "baseline", Need::kOptional, [&](const TableReader& t) {
    return ReadBaseline(t, base_dir, &spec.baseline);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "decision", Need::kOptional, [&](const TableReader& t) {
    return ReadDecision(t, spec.workload, &spec.decision);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "adaptive", Need::kOptional, [&](const TableReader& t) {
    return ReadAdaptive(t, &spec.adaptive);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "search", Need::kOptional, [&](const TableReader& t) {
    return ReadSearch(t, &spec.search);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "lifecycle", Need::kOptional, [&](const TableReader& t) {
    return ReadLifecycle(t, &spec.lifecycle);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "sim", Need::kOptional, [&](const TableReader& t) {
    return ReadSim(t, spec.sweep, &spec.sim);
  }));
  PPS_RETURN_IF_ERROR(ReadSection(root, "profile", Need::kOptional, [&](const TableReader& t) {
    return ReadProfile(t, base_dir, spec.sweep, &spec.profile);
  }));
  return spec;
}

// The TOML with the --set overrides applied, and the labels messages give them.
Result<toml::table> ParseWithOverrides(const std::string& toml_text, const std::string& path,
                                       const std::vector<std::string>& overrides,
                                       std::vector<std::string>* labels) {
  PPS_ASSIGN_OR_RETURN(toml::table root, ParseToml(toml_text, path));
  for (const auto& override_text : overrides) {
    PPS_RETURN_IF_ERROR(ApplyOverride(override_text, &root));
    labels->push_back(OverrideLabel(override_text));
  }
  return root;
}

}  // namespace

Result<Spec> ParseSpec(const std::string& toml_text, const std::string& path,
                       const std::vector<std::string>& overrides) {
  return ParseSpecAs(toml_text, path, path, overrides);
}

Result<Spec> ParseSpecAs(const std::string& toml_text, const std::string& path,
                         const std::string& resolve_as, const std::vector<std::string>& overrides) {
  std::vector<std::string> labels;
  PPS_ASSIGN_OR_RETURN(toml::table root, ParseWithOverrides(toml_text, path, overrides, &labels));
  return ConvertSpec(SpecSource(path, std::move(labels)), root, BaseDir(resolve_as));
}

Result<std::optional<Disaggregation>> LoadDisaggregation(
    const std::string& path, const std::vector<std::string>& overrides) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseDisaggregation(text, path, overrides);
}

Result<std::optional<Disaggregation>> ParseDisaggregation(
    const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
  PPS_ASSIGN_OR_RETURN(Spec spec, ParseSpec(text, path, overrides));
  return std::move(spec.disaggregation);
}

Result<Spec> LoadSpec(const std::string& path, const std::vector<std::string>& overrides) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseSpec(text, path, overrides);
}

}  // namespace ppsearch::spec
