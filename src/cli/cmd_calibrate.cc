// ppsearch calibrate SPEC --measured PATH... [--profile-summary JSON...] [-o FILE]:
// fit the performance model's named physical parameters to one or more
// measured layouts, within their physical bounds, and write a calibration
// file that simulate and run take.

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "calibrate/fit.h"
#include "cli/command.h"
#include "cli/command_inputs.h"
#include "evidence/calibration_file.h"
#include "table/table.h"
#include "uncertainty/model_error_file.h"
#include "util/files.h"
#include "util/format.h"

namespace ppsearch::cli {
namespace {

struct CalibrateOptions {
  SpecOptions spec;
  std::vector<std::string> measured;
  std::vector<std::string> profile_summaries;
  std::string output = "calibration.json";
};

// The file's `fit` section: what the fit was made from and how it met each point.
evidence::CalibrationFitRecord FitRecord(const calibrate::FitResult& fit,
                                         const std::vector<calibrate::Measurement>& measured) {
  evidence::CalibrationFitRecord r;
  for (const calibrate::Measurement& m : measured) r.measured.push_back(m.source);
  r.points = fit.residuals;
  r.exposed_comm_share = fit.shares;
  r.leave_one_layout_out = fit.held_out;
  return r;
}

// The output's directory must exist: a typo in -o should not create a tree.
// One that is there but cannot hold the file (a file in its place, no write
// permission) is CheckOutputPath's to report, as the I/O error it is.
Status CheckOutputDirectory(const std::string& output) {
  const std::string dir = DirName(output);
  std::error_code ec;
  if (std::filesystem::is_directory(output, ec))
    return MakeError("-o " + output + ": is a directory, expected a file name");
  if (dir.empty() || std::filesystem::exists(dir, ec)) return Status::Ok();
  return MakeError("-o " + output + ": the directory " + dir + " does not exist");
}

std::string TtftCell(double seconds) { return seconds > 0 ? FormatNumber(seconds, 2) + " s" : "-"; }

void PrintPoints(const std::vector<calibrate::PointResidual>& points) {
  table::Table t{{"layout", "C", "input TPS measured", "predicted", "error", "TTFT p50 measured",
                  "predicted", "error", "peak MiB measured", "predicted"},
                 {},
                 {true}};
  for (const auto& r : points)
    t.rows.push_back({r.layout.Label(), std::to_string(r.concurrency),
                      FormatNumber(r.measured_tps, 2), FormatNumber(r.predicted_tps, 2),
                      FormatSignedPercent(r.predicted_tps / r.measured_tps - 1),
                      TtftCell(r.measured_ttft_p50_s), TtftCell(r.predicted_ttft_p50_s),
                      r.measured_ttft_p50_s > 0
                          ? FormatSignedPercent(r.predicted_ttft_p50_s / r.measured_ttft_p50_s - 1)
                          : "-",
                      r.measured_peak_mib > 0 ? FormatNumber(r.measured_peak_mib, 0) : "-",
                      FormatNumber(r.predicted_peak_mib, 0)});
  std::cout << table::RenderTextTable(t);
}

void PrintFit(const calibrate::FitResult& fit, const hardware::HardwareProfile& hw) {
  const auto& c = fit.calibration;
  table::Table params{
      {"parameter", "value", "bounds", "prior", "status"}, {}, {true, true, true, true, true}};
  for (const auto& p : cost::AllParams()) {
    const int i = cost::Index(p.param);
    const cost::Range b = cost::Bounds(p.param, hw), prior = cost::Prior(p.param, hw);
    params.rows.push_back({std::string(p.name), fmt::format("{:.4g}", c.value[i]),
                           fmt::format("[{:.4g}, {:.4g}]", b.lo, b.hi),
                           fmt::format("[{:.4g}, {:.4g}]", prior.lo, prior.hi),
                           cost::ParamStatusName(c.status[i])});
  }
  std::cout << table::RenderTextTable(params) << "\n";
  for (const auto& p : cost::AllParams())
    std::cout << p.name << ": " << c.note[cost::Index(p.param)] << "\n";
  std::cout << "\nresiduals (fitted points)\n";
  PrintPoints(fit.residuals);
  for (const auto& s : fit.shares)
    std::cout << fmt::format("{} exposed communication share: measured {}, predicted {}\n",
                             s.layout.Label(), FormatPercent(s.measured),
                             FormatPercent(s.predicted));
  // Compared, not fitted to: which part of the compute the model over- or
  // under-counts, by the classes `ppsearch nsys` measured.
  for (const auto& cs : fit.class_shares) {
    const std::string parts = nsys::ClassesText([&cs](nsys::ComputeClass c) {
      const int k = static_cast<int>(c);
      return FormatPercent(cs.measured[k]) + " / " + FormatPercent(cs.predicted[k]);
    });
    std::cout << fmt::format(
        "{} compute by class, share of the window (measured / predicted): {}\n", cs.layout.Label(),
        parts);
  }
  if (!fit.held_out.empty()) {
    std::cout << "\nleave-one-layout-out (each layout predicted by a fit to the others)\n";
    PrintPoints(fit.held_out);
  }
  for (const auto& s : c.infeasible) std::cout << "\ninfeasible: " << s << "\n";
  for (const auto& s : c.off_prior) std::cout << "\noff prior: " << s << "\n";
}

Result<ExitCode> RunCalibrate(const CalibrateOptions& opts) {
  PPS_RETURN_IF_ERROR(CheckOutputDirectory(opts.output));
  std::vector<NamedPath> inputs{{"the spec", opts.spec.spec_path}};
  for (const auto& m : opts.measured) inputs.push_back({"a --measured file", m});
  for (const auto& p : opts.profile_summaries) inputs.push_back({"a --profile-summary file", p});
  PPS_RETURN_IF_ERROR(CheckOutputPath("-o", opts.output, inputs));
  Result<SearchInputs> in = LoadSearchInputs(opts.spec, {});
  if (!in.ok()) return in.error();
  calibrate::FitInputs fi;
  for (const auto& path : opts.measured) {
    PPS_RETURN_IF_ERROR(calibrate::CheckMeasuredSetup(path, *in));
    std::vector<std::string> notes;
    auto m = calibrate::LoadMeasurements(path, &notes);
    for (const auto& n : notes) std::cerr << "note: " << n << "\n";
    if (!m.ok()) return m.error();
    for (auto& one : *m) {
      for (const auto& seen : fi.measurements)
        if (seen.layout == one.layout)
          return MakeError(path + ": " + one.layout.Label() + " is also measured in " +
                           seen.source);
      fi.measurements.push_back(std::move(one));
    }
  }
  for (const auto& path : opts.profile_summaries)
    PPS_RETURN_IF_ERROR(calibrate::AttachProfileSummary(path, fi.measurements));
  // Plan each measured layout against this spec's cluster and model.
  for (const auto& m : fi.measurements)
    fi.plans.push_back(plan::PlanLayout(m.layout, in->spec, in->model, in->hardware));
  fi.search = &*in;
  Result<calibrate::FitResult> fit = calibrate::FitCalibration(fi);
  if (!fit.ok()) return fit.error();
  std::string layouts;
  for (const auto& m : fi.measurements) layouts += (layouts.empty() ? "" : ", ") + m.layout.Label();
  std::cout << fmt::format("# ppsearch calibrate: {} on {}\n", layouts, in->hardware.name);
  PrintFit(*fit, in->hardware);
  cost::Calibration to_save = fit->calibration;
  to_save.source = opts.output;
  to_save.fitted_hardware = in->hardware.name;
  to_save.fitted_gpus_per_node = in->spec.cluster.gpus_per_node;
  to_save.fitted_input_tokens = in->spec.workload.input_tokens;
  // The file states the model-form term its intervals carry: the shipped fit's.
  Result<cost::ModelFormScales> model_form = uncertainty::ModelFormFor(cost::Calibration());
  if (!model_form.ok()) return model_form.error();
  to_save.model_form = *model_form;
  const evidence::CalibrationFitRecord record = FitRecord(*fit, fi.measurements);
  PPS_RETURN_IF_ERROR(evidence::SaveCalibration(to_save, opts.output, &record));
  std::cout << "calibration written to " << opts.output << "\n";
  return kExitOk;
}

}  // namespace

Runner AddCalibrateCommand(CLI::App& app) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Fit the performance model's physical parameters to measured layouts and write a "
      "calibration file");
  AddSpecOptions(sub, opts->spec);
  sub->add_option("--measured", opts->measured,
                  "Measured medians: a CSV (columns pp,tp,ep,concurrency,input_tps_median,...; "
                  "rows of several layouts allowed), a run's summary.csv or a run directory; "
                  "repeatable")
      ->required();
  sub->add_option("--profile-summary", opts->profile_summaries,
                  "JSON with exposed_nccl_share_of_prefill_window_median (and \"layout\" when "
                  "several layouts are measured), e.g. ppsearch nsys's nsys_analysis.json, whose "
                  "compute by kernel class is printed beside the fit's; repeatable");
  sub->add_option("-o,--output", opts->output, "Calibration file to write")->capture_default_str();
  return [opts] { return RunCalibrate(*opts); };
}

}  // namespace ppsearch::cli
