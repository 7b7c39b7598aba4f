#include "sglang/nsys_profile.h"

#include <algorithm>

#include "run/profile_evidence.h"
#include "sglang/commands.h"

namespace ppsearch::sglang {
namespace {

std::string LayoutArg(const spec::LayoutSpec& l) {
  std::string arg = std::to_string(l.pp) + "/" + std::to_string(l.tp) + "/" + std::to_string(l.ep);
  if (l.dp > 1) arg.append("/").append(std::to_string(l.dp));
  return arg;
}

}  // namespace

std::string NsysReportBase(const spec::Spec& spec, const evidence::SampleId& sample, int node) {
  return spec.profile.output_dir + "/" + sample.str() + "-" +
         evidence::SafePathComponent(spec.cluster.hosts[node].name);
}

std::vector<std::string> NsysProfileWords(const spec::ProfileSpec& profile,
                                          const std::string& report_base) {
  std::vector<std::string> w = profile.nsys_command;
  w.insert(w.end(),
           {"profile", "--trace=cuda,nvtx", "--trace-fork-before-exec=true",
            "--cuda-graph-trace=node", "--force-overwrite=true", "--output=" + report_base});
  return w;
}

std::vector<std::string> NsysExportArgv(const spec::ProfileSpec& profile,
                                        const std::string& report_base) {
  std::vector<std::string> w = profile.nsys_command;
  w.insert(w.end(), {"export", "--type=sqlite", "--force-overwrite=true",
                     "--output=" + report_base + ".sqlite", report_base + ".nsys-rep"});
  return w;
}

std::vector<std::string> NsysAnalyseArgv(const spec::Spec& spec, const plan::LayoutPlan& plan,
                                         const std::string& report_base) {
  return {SelfExecutable(),
          "nsys",
          report_base + ".sqlite",
          "--json",
          "--window",
          spec.profile.window,
          "--gap-us",
          std::to_string(spec.profile.gap_us),
          "--layout",
          LayoutArg(plan.layout),
          "--tp-span-nodes",
          std::to_string(run::TpSpanNodes(plan)),
          "-o",
          report_base + ".json"};
}

std::vector<run::ProfileEvidence> CollectNsysProfiles(launch::Launcher& launcher,
                                                      const spec::Spec& spec,
                                                      const plan::LayoutPlan& plan,
                                                      const evidence::SampleId& server_sample) {
  std::vector<run::ProfileEvidence> out;
  // Exporting a long server profile takes minutes, beyond a short host command.
  const double timeout_s = std::max(600.0, spec.lifecycle.host_timeout_s);
  for (size_t n = 0; n < spec.cluster.hosts.size(); ++n) {
    const int node = static_cast<int>(n);
    const std::string base = NsysReportBase(spec, server_sample, node);
    run::ProfileEvidence e{spec.cluster.hosts[n].name, nlohmann::json::object()};
    auto fail = [&](const std::vector<std::string>& argv, const std::string& what) {
      std::string command;
      for (const auto& w : argv) command += (command.empty() ? "" : " ") + w;
      e.analysis = {{"error", command + ": " + what}, {"report", base + ".nsys-rep"}};
      out.push_back(e);
    };
    const std::vector<std::string> export_argv = NsysExportArgv(spec.profile, base);
    Result<launch::Captured> exported = launcher.RunOnHost(node, export_argv, timeout_s);
    if (!exported.ok() || exported->timed_out || !exported->exit.ok()) {
      fail(export_argv, !exported.ok()        ? exported.error().message
                        : exported->timed_out ? "timed out"
                                              : exported->err);
      continue;
    }
    const std::vector<std::string> analyse_argv = NsysAnalyseArgv(spec, plan, base);
    Result<launch::Captured> analysed = launcher.RunOnHost(node, analyse_argv, timeout_s);
    if (!analysed.ok() || analysed->timed_out || !analysed->exit.ok()) {
      fail(analyse_argv, !analysed.ok()        ? analysed.error().message
                         : analysed->timed_out ? "timed out"
                                               : analysed->err);
      continue;
    }
    nlohmann::json j = nlohmann::json::parse(analysed->out, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      fail(analyse_argv, "printed no JSON");
      continue;
    }
    e.analysis = std::move(j);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace ppsearch::sglang
