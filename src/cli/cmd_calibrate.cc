// ppsearch calibrate SPEC --measured CSV [--profile-summary JSON] [-o FILE]:
// fit the performance model's named physical parameters to one measured
// layout and write a calibration file that simulate and run take.

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/fit.h"
#include "cli/command.h"
#include "cli/search_inputs.h"
#include "util/files.h"
#include "util/format.h"

namespace ppsearch::cli {
namespace {

struct CalibrateOptions {
  SpecOptions spec;
  std::string measured;
  std::string profile_summary;
  std::string output = "calibration.json";
};

std::string FitJson(const calibrate::FitResult& fit, const calibrate::Measurement& m) {
  nlohmann::ordered_json j;
  j["fit"]["layout"] = m.layout.Label();
  j["fit"]["measured"] = m.source;
  j["fit"]["fitted"] = fit.fitted;
  j["fit"]["kept"] = fit.kept;
  j["fit"]["warnings"] = fit.warnings;
  if (fit.measured_exposed_share)
    j["fit"]["exposed_comm_share_measured"] = *fit.measured_exposed_share;
  j["fit"]["exposed_comm_share_predicted"] = fit.predicted_exposed_share;
  for (const auto& r : fit.residuals)
    j["fit"]["points"].push_back({{"concurrency", r.concurrency},
                                  {"input_tps_measured", r.measured_tps},
                                  {"input_tps_predicted", r.predicted_tps},
                                  {"ttft_p50_s_measured", r.measured_ttft_p50_s},
                                  {"ttft_p50_s_predicted", r.predicted_ttft_p50_s}});
  return j.dump();
}

// The output's directory must exist: a typo in -o should not create a tree.
Status CheckOutputDirectory(const std::string& output) {
  const std::string dir = DirName(output);
  std::error_code ec;
  if (std::filesystem::is_directory(output, ec))
    return MakeError("-o " + output + ": is a directory, expected a file name");
  if (dir.empty() || std::filesystem::is_directory(dir, ec)) return Status::Ok();
  return MakeError("-o " + output + ": the directory " + dir + " does not exist");
}

void RunCalibrate(const CalibrateOptions& opts, int& exit_code) {
  auto fail = [&exit_code](const std::string& message, int code = kExitConfigError) {
    std::cerr << "error: " << message << "\n";
    exit_code = code;
  };
  if (Status s = CheckOutputDirectory(opts.output); !s.ok()) return fail(s.error().message);
  std::optional<SearchInputs> in = LoadSearchInputs(opts.spec, {}, exit_code);
  if (!in) return;
  Result<calibrate::Measurement> m =
      calibrate::LoadMeasurement(opts.measured, opts.profile_summary);
  if (!m.ok()) return fail(m.error().message);
  // Plan the measured layout against this spec's cluster and model.
  const plan::LayoutPlan lp = plan::PlanLayout(m->layout, in->spec, in->model, in->hardware);
  Result<calibrate::FitResult> fit =
      calibrate::FitCalibration(*m, lp, in->spec, in->model, in->hardware);
  if (!fit.ok()) return fail(fit.error().message);
  const auto& c = fit->calibration;
  std::cout << fmt::format("# ppsearch calibrate: {} measured in {}\n", m->layout.Label(),
                           m->source);
  std::cout << "parameter            value        status\n";
  auto fitted = [&](const std::string& n) {
    return std::find(fit->fitted.begin(), fit->fitted.end(), n) != fit->fitted.end()
               ? "fitted"
               : "kept (profile/default)";
  };
  std::cout << fmt::format("compute_scale        {:<12.4f} {}\n", c.compute_scale,
                           fitted("compute_scale"));
  std::cout << fmt::format(
      "inter_gbps_per_gpu   {:<12.4f} {}\n",
      c.inter_gbps_per_gpu > 0 ? c.inter_gbps_per_gpu : in->hardware.nic_gbps_per_gpu,
      fitted("inter_gbps_per_gpu"));
  std::cout << fmt::format("intra_bw_scale       {:<12.4f} {}\n", c.intra_bw_scale,
                           fitted("intra_bw_scale"));
  std::cout << fmt::format("host_overhead_us     {:<12.1f} {}\n", c.host_overhead_us,
                           fitted("host_overhead_us"));
  std::cout << "\nresiduals\n   C   input TPS measured   predicted   error     TTFT p50 measured   "
               "predicted   error\n";
  for (const auto& r : fit->residuals) {
    std::cout << fmt::format(
        "{:>4}   {:>18}   {:>9}   {:>7}   {:>17}   {:>9}   {:>7}\n", r.concurrency,
        FormatNumber(r.measured_tps, 2), FormatNumber(r.predicted_tps, 2),
        FormatSignedPercent(r.predicted_tps / r.measured_tps - 1),
        r.measured_ttft_p50_s > 0 ? FormatNumber(r.measured_ttft_p50_s, 2) + " s" : "-",
        FormatNumber(r.predicted_ttft_p50_s, 2) + " s",
        r.measured_ttft_p50_s > 0
            ? FormatSignedPercent(r.predicted_ttft_p50_s / r.measured_ttft_p50_s - 1)
            : "-");
  }
  if (fit->measured_exposed_share)
    std::cout << fmt::format("exposed communication share: measured {:.2f}%, predicted {:.2f}%\n",
                             *fit->measured_exposed_share * 100,
                             fit->predicted_exposed_share * 100);
  for (const auto& k : fit->kept) std::cout << "kept: " << k << "\n";
  for (const auto& w : fit->warnings) std::cout << "warning: " << w << "\n";
  cost::Calibration to_save = c;
  if (to_save.inter_gbps_per_gpu <= 0) to_save.inter_gbps_per_gpu = in->hardware.nic_gbps_per_gpu;
  if (Status s = cost::SaveCalibration(to_save, opts.output, FitJson(*fit, *m)); !s.ok())
    return ReportError(s.error(), exit_code);
  std::cout << "calibration written to " << opts.output << "\n";
}

}  // namespace

void AddCalibrateCommand(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "Fit the performance model to one measured layout and write a calibration file");
  AddSpecOptions(sub, opts->spec);
  sub->add_option("--measured", opts->measured,
                  "CSV of per-concurrency medians of one layout (columns pp,tp,ep,concurrency,"
                  "input_tps_median,...)")
      ->required();
  sub->add_option("--profile-summary", opts->profile_summary,
                  "JSON with exposed_nccl_share_of_prefill_window_median from an Nsight profile");
  sub->add_option("-o,--output", opts->output, "Calibration file to write")->capture_default_str();
  sub->callback([opts, &exit_code] { RunCalibrate(*opts, exit_code); });
}

}  // namespace ppsearch::cli
