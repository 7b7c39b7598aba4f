// `ppsearch smi-sim --state-dir DIR [--gpus N] [--total-mib M] [--name NAME]
// [--driver-version V] <nvidia-smi flags>`: answers the nvidia-smi queries a harness uses from the
// GPU memory serve-sim registers in DIR (--gpu-state-dir), so a rehearsal
// without GPUs sees memory taken at load and freed at exit as on a cluster;
// --gpus, --total-mib and --name describe only GPUs no registration does:
//   --query-gpu=index,uuid,name,memory.used,memory.total,driver_version
//   --format=csv,noheader,nounits
//   --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits
// Exit codes: 0 answered; 2 a query smi-sim (or nvidia-smi) does not
// support, or a bad --gpus or --total-mib.

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/command.h"
#include "serve_sim/gpu_registry.h"
#include "serve_sim/realtime_engine.h"
#include "spec/limits.h"

namespace ppsearch::cli {
namespace {

struct SmiSimOptions {
  std::string state_dir;
  serve_sim::SmiGpus gpus;
};

// "--query-gpu index,..." as "--query-gpu=index,...".
std::vector<std::string> JoinValues(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool takes_value = w == "--query-gpu" || w == "--query-compute-apps" || w == "--format";
    if (takes_value && i + 1 < words.size()) {
      out.push_back(w + "=" + words[++i]);
    } else {
      out.push_back(w);
    }
  }
  return out;
}

// What the answer lists: GPUs a node can hold, each with a memory size a
// GPU can have; a NaN or negative size would print as an impossible number.
Status CheckSmiGpus(const serve_sim::SmiGpus& gpus) {
  constexpr int kMaxGpus = serve_sim::kMaxSmiGpus;
  if (gpus.count < 1 || gpus.count > kMaxGpus)
    return MakeError(fmt::format("--gpus must be between 1 and {} (got {})", kMaxGpus, gpus.count));
  if (!(gpus.total_mib > 0 && gpus.total_mib <= spec::kMaxMib))
    return MakeError(fmt::format("--total-mib must be a positive number of MiB up to {} (got {})",
                                 spec::kMaxMib, gpus.total_mib));
  return Status::Ok();
}

Result<ExitCode> RunSmiSim(SmiSimOptions o, const std::vector<std::string>& smi_args) {
  PPS_RETURN_IF_ERROR(CheckSmiGpus(o.gpus));
  auto query = serve_sim::ParseSmiArgs(JoinValues(smi_args));
  if (!query.ok()) {
    // nvidia-smi's own answer to a query it does not support, in its words
    // and without ppsearch's error prefix: harnesses match on it.
    std::cerr << query.error().message << "\n";
    return kExitConfigError;
  }
  o.gpus.uuid_seed = serve_sim::GpuUuidSeed(o.state_dir);
  const auto live = serve_sim::ReadLiveRegistrations(o.state_dir, serve_sim::UnixNowS());
  std::cout << serve_sim::AnswerSmiQuery(*query, o.gpus, live);
  return kExitOk;
}

}  // namespace

Runner AddSmiSimCommand(CLI::App& app) {
  auto o = std::make_shared<SmiSimOptions>();
  CLI::App* c = app.add_subcommand(
      "smi-sim", "Answer nvidia-smi memory queries from serve-sim's --gpu-state-dir registrations");
  c->add_option("--state-dir", o->state_dir, "the directory serve-sim --gpu-state-dir writes")
      ->required();
  // A GPU a live registration holds is listed as registered (serve-sim's
  // hardware profile): these describe the others.
  c->add_option("--gpus", o->gpus.count, "GPUs listed (more where registrations hold more)")
      ->capture_default_str();
  c->add_option("--total-mib", o->gpus.total_mib,
                "memory.total of a GPU no live registration describes")
      ->capture_default_str();
  c->add_option("--name", o->gpus.name, "name of a GPU no live registration describes")
      ->capture_default_str();
  c->add_option("--driver-version", o->gpus.driver_version, "driver_version")
      ->capture_default_str();
  c->allow_extras();  // nvidia-smi's own flags
  return [o, c] { return RunSmiSim(*o, c->remaining()); };
}

}  // namespace ppsearch::cli
