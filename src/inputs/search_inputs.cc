#include "inputs/search_inputs.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/hf_config.h"
#include "nsys/analyze.h"
#include "plan/disaggregation.h"
#include "plan/spec_hardware.h"
#include "spec/spec_parser.h"

namespace ppsearch::inputs {
namespace {

// The selection replaces the sweep's lists, so it follows their rules: a
// layout or a concurrency given twice is refused, as a spec listing one
// twice is (it would be planned, simulated and printed twice).
Status ApplySelection(const std::vector<spec::LayoutSpec>& layouts,
                      const std::vector<int>& concurrency, spec::Spec& spec) {
  if (!layouts.empty()) {
    std::vector<spec::LayoutSpec> out;
    for (spec::LayoutSpec layout : layouts) {
      for (const spec::LayoutSpec& earlier : out)
        if (earlier == layout)
          return MakeError("--layout " + layout.Label() + " is given twice; give each layout once");
      for (const spec::LayoutSpec& candidate : spec.sweep.layouts)
        if (candidate == layout) layout = candidate;
      out.push_back(layout);
    }
    spec.sweep.layouts = std::move(out);
  }
  if (!concurrency.empty()) {
    for (size_t i = 0; i < concurrency.size(); ++i) {
      const int c = concurrency[i];
      if (c <= 0)
        return MakeError("--concurrency " + std::to_string(c) + ": expected a positive integer");
      if (std::find(concurrency.begin(), concurrency.begin() + i, c) != concurrency.begin() + i)
        return MakeError("--concurrency " + std::to_string(c) +
                         " is given twice; give each concurrency once");
    }
    spec.sweep.concurrency = concurrency;
  }
  return Status::Ok();
}

// Whatever keeps a spec's inputs from loading (an unreadable model config
// included) is a configuration error: the user fixes the spec or its files.
Error AsConfigError(Error e) {
  e.kind = ErrorKind::kConfig;
  return e;
}

}  // namespace

const plan::LayoutPlan* SearchInputs::Find(const spec::LayoutSpec& layout) const {
  for (const plan::LayoutPlan& lp : plan.layouts)
    if (lp.layout == layout) return &lp;
  return nullptr;
}

Result<SearchInputs> LoadSearchInputs(const InputsOptions& options) {
  Result<spec::Spec> spec = spec::LoadSpec(options.spec_path, options.overrides);
  if (!spec.ok()) return AsConfigError(spec.error());
  return LoadSearchInputs(std::move(spec).value(), options.layouts, options.concurrency,
                          options.deployments);
}

Result<SearchInputs> LoadSpecFileInputs(const std::string& spec_path) {
  InputsOptions options;
  options.spec_path = spec_path;
  return LoadSearchInputs(options);
}

Result<SearchInputs> LoadSearchInputs(spec::Spec spec, const std::vector<spec::LayoutSpec>& layouts,
                                      const std::vector<int>& concurrency,
                                      Deployments deployments) {
  // A command that does not know a disaggregated deployment would take its
  // one layout for an aggregated one of 1 GPU, wrong silently.
  if (deployments == Deployments::kRefuse) PPS_RETURN_IF_ERROR(plan::DisaggregatedRefusal(spec));
  PPS_RETURN_IF_ERROR(ApplySelection(layouts, concurrency, spec));
  Result<model::ModelDesc> model = LoadSpecModel(spec);
  if (!model.ok()) return AsConfigError(model.error());
  Result<hardware::HardwareProfile> hw = plan::LoadSpecHardware(spec);
  if (!hw.ok()) return AsConfigError(hw.error());
  SearchInputs in{std::move(spec), std::move(model).value(), std::move(hw).value(), {}, {}};
  in.plan = plan::PlanSearch(in.spec, in.model, in.hardware);
  if (in.spec.disaggregation)
    in.deployment =
        plan::PlanDisaggregated(in.spec, *in.spec.disaggregation, in.model, in.hardware);
  return in;
}

Result<std::optional<DisaggregatedInputs>> LoadDisaggregatedInputs(
    const std::string& path, const std::vector<std::string>& overrides) {
  PPS_ASSIGN_OR_RETURN(spec::Spec spec, spec::LoadSpec(path, overrides));
  if (!spec.disaggregation) return std::optional<DisaggregatedInputs>();
  const spec::Disaggregation deployment = *spec.disaggregation;
  PPS_ASSIGN_OR_RETURN(model::ModelDesc model, LoadSpecModel(spec));
  PPS_ASSIGN_OR_RETURN(hardware::HardwareProfile hw, plan::LoadSpecHardware(spec));
  DisaggregatedInputs in{std::move(spec), std::move(model), std::move(hw), {}};
  in.plan = plan::PlanDisaggregated(in.spec, deployment, in.model, in.hardware);
  return std::optional<DisaggregatedInputs>(std::move(in));
}

Result<model::ModelDesc> LoadSpecModel(const spec::Spec& spec) {
  return model::LoadModel(spec.engine.model_config);
}

Status CheckProfileExport(const spec::ProfileSpec& profile) {
  if (profile.file.empty()) return Status::Ok();
  const std::string where =
      profile.file_origin.Position() + ": key 'profile.file': " + profile.file + " ";
  const std::string expected = "; expected an Nsight Systems SQLite export";
  std::error_code ec;
  const auto status = std::filesystem::status(profile.file, ec);
  if (ec || !std::filesystem::exists(status)) return MakeError(where + "does not exist" + expected);
  if (!std::filesystem::is_regular_file(status))
    return MakeError(where + "is not a regular file" + expected);
  constexpr char kMagic[] = "SQLite format 3";  // with its NUL: the first 16 bytes
  char header[sizeof(kMagic)] = {};
  std::ifstream in(profile.file, std::ios::binary);
  in.read(header, sizeof(header));
  if (in.gcount() != static_cast<std::streamsize>(sizeof(header)) ||
      std::memcmp(header, kMagic, sizeof(kMagic)) != 0)
    return MakeError(where + "is not an SQLite database" + expected +
                     " (nsys export --type sqlite)");
  // An export with no kernel would give every sample a made-up 0%: refused
  // here, before the first sample, rather than after it.
  if (Status kernels = nsys::CheckExportHasKernels(profile.file); !kernels.ok())
    return MakeError(profile.file_origin.Position() +
                     ": key 'profile.file': " + kernels.error().message);
  return Status::Ok();
}

std::vector<Error> InputErrors(const spec::Spec& spec) {
  std::vector<Error> errors;
  if (Result<model::ModelDesc> m = LoadSpecModel(spec); !m.ok()) errors.push_back(m.error());
  if (Result<hardware::HardwareProfile> h = plan::LoadSpecHardware(spec); !h.ok())
    errors.push_back(h.error());
  if (Status p = CheckProfileExport(spec.profile); !p.ok()) errors.push_back(p.error());
  return errors;
}

}  // namespace ppsearch::inputs
