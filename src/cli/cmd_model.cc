// `ppsearch model CONFIG [--json] [--layers]`: what the planner sees of a
// model config (layer kinds, shapes, parameter totals, bytes by dtype, cache
// and state sizes), to check a config before planning with it.

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/command.h"
#include "model/hf_config.h"
#include "model/model_summary.h"

namespace ppsearch::cli {
namespace {

struct ModelOptions {
  std::string config_path;
  bool json = false;
  bool layers = false;
};

Result<ExitCode> RunModel(const ModelOptions& options) {
  PPS_ASSIGN_OR_RETURN(const model::ModelDesc desc, model::LoadModel(options.config_path));
  if (options.json) {
    std::cout << model::ModelToJson(desc, options.layers).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << model::DescribeModel(desc);
  if (options.layers) std::cout << "\n" << model::DescribeLayers(desc);
  return kExitOk;
}

}  // namespace

Runner AddModelCommand(CLI::App& app) {
  auto options = std::make_shared<ModelOptions>();
  CLI::App* command = app.add_subcommand(
      "model", "Describe a model config: layers, shapes, parameters, weight bytes, KV and state");
  command
      ->add_option("config", options->config_path,
                   "config.json, or a model directory (Hugging Face snapshot) containing one")
      ->required();
  command->add_flag("--json", options->json, "Print JSON instead of text");
  command->add_flag("--layers", options->layers,
                    "Add a per-layer table (with --json: each layer's weight matrices)");
  return [options] { return RunModel(*options); };
}

}  // namespace ppsearch::cli
