// The two SGLang log writers agree: a simulated sample's node log
// (run/sim_sample.cc) and serve-sim's startup lines and fault texts
// (serve_sim/) carry the same lines for the same model, GPU and layout, since
// both come from sglang_log/.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "inputs/search_inputs.h"
#include "ppsearch_source_dir.h"
#include "run/sim_sample.h"
#include "serve_sim/deployment.h"
#include "serve_sim/server_log.h"

namespace ppsearch::testing {
namespace {

// The lines of `text` without their "[YYYY-mm-dd HH:MM:SS" stamps.
std::vector<std::string> Unstamped(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line.size() > 20 && line[0] == '[' ? line.substr(20) : line);
  return out;
}

bool Contains(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

void ExpectSameLines(const std::string& model, const std::string& hardware, int tp, int pp, int ep,
                     int nnodes) {
  serve_sim::ServerArgs a;
  a.model_path = std::string(PPSEARCH_SOURCE_DIR) + "/" + model;
  a.hardware = hardware;
  a.tp_size = tp;
  a.pp_size = pp;
  a.ep_size = ep;
  a.nnodes = nnodes;
  auto d = serve_sim::BuildDeployment(a);
  ASSERT_TRUE(d.ok()) << d.error().message;
  const serve_sim::Deployment& dep = **d;

  spec::Spec spec = dep.spec;
  spec.sim.inject.push_back({});
  evidence::SampleId id;
  id.layout = dep.plan.layout;
  id.concurrency = 1;
  spec.sim.inject.back().sample = id.str();
  spec.sim.inject.back().fault = "nccl";
  const inputs::SearchInputs inputs{spec, dep.model, dep.hw, {}};
  run::SimSampleEngine engine(inputs, dep.calibration);
  run::SampleContext ctx;
  ctx.id = id;
  ctx.plan = &dep.plan;
  auto out = engine.Run(ctx);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_FALSE(out->nodes.empty());
  const std::vector<std::string> sample_log = Unstamped(out->nodes[0].log);

  for (const auto& line : serve_sim::StartupLines(a, dep, 0))
    EXPECT_TRUE(Contains(sample_log, line.prefix + "] " + line.message))
        << "serve-sim line missing from the sample log: " << line.prefix << "] " << line.message
        << "\n"
        << out->nodes[0].log;
  // The NCCL fault text is the same block, up to the times in it.
  auto after_stamp = [](const std::vector<std::string>& lines) {
    std::vector<std::string> out;
    for (const auto& l : lines) out.push_back(l.substr(l.find("] ") + 1));
    return out;
  };
  const std::vector<std::string> sample_text = after_stamp(sample_log);
  for (const auto& line : after_stamp(Unstamped(serve_sim::FaultLogText("nccl", dep))))
    EXPECT_TRUE(Contains(sample_text, line)) << line;
  EXPECT_NE(out->nodes[0].log.find(
                fmt::format("NumelIn={}", dep.scheduler.chunked_prefill_size * dep.model.hidden)),
            std::string::npos);
}

TEST(SglangLogWriters, SampleLogAndServeSimAgreeQwen3OnH20) {
  ExpectSameLines("data/models/qwen3-235b-a22b", "h20", 4, 2, 1, 1);
}

TEST(SglangLogWriters, SampleLogAndServeSimAgreeKimiK3OnRtx6000d) {
  ExpectSameLines("data/models/kimi-k3", "rtx-6000d", 16, 2, 4, 4);
}

}  // namespace
}  // namespace ppsearch::testing
