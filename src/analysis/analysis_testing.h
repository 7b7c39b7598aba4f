#pragma once
// Test helpers shared by analysis_test and report_test: specs from the
// shipped example, synthetic request records and samples.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/sample.h"
#include "ppsearch_source_dir.h"
#include "spec/spec.h"
#include "spec/spec_parser.h"
#include "workload/request_record.h"

namespace ppsearch::analysis::testing {

inline std::string ExampleSpecPath() {
  return std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
}

// PP4/TP8/EP4 and PP8/TP4/EP4 at C=8, 2 repeats of 8 requests, baseline
// PP1 imported from data/baseline/pp1-tp32-ep4.csv.
inline std::vector<std::string> SmallSweepOverrides() {
  return {"sweep.pp=[4,8]", "sweep.concurrency=[8]", "sweep.repeats=2", "workload.requests=8"};
}

inline spec::Spec SmallSweepSpec(std::vector<std::string> extra = {}) {
  std::vector<std::string> overrides = SmallSweepOverrides();
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  Result<spec::Spec> spec = spec::LoadSpec(ExampleSpecPath(), overrides);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().message);
  return spec.ok() ? *spec : spec::Spec{};
}

inline spec::LayoutSpec Layout(int pp, int tp, int ep) {
  spec::LayoutSpec l;
  l.pp = pp;
  l.tp = tp;
  l.ep = ep;
  return l;
}

// `n` requests of `tokens` input tokens, all sent at 0; request i gets its
// first token and ends at (i + 1) * duration_s / n, so input TPS is
// n * tokens / duration_s and TTFTs are evenly spaced. The last `errors`
// requests fail with an HTTP 500.
inline std::vector<workload::RequestRecord> EvenRecords(int n, int64_t tokens, double duration_s,
                                                        int errors = 0) {
  std::vector<workload::RequestRecord> out;
  for (int i = 0; i < n; ++i) {
    workload::RequestRecord r;
    r.id = i;
    r.send_ns = 0;
    r.first_token_ns = static_cast<int64_t>((i + 1) * duration_s / n * 1e9);
    r.end_ns = r.first_token_ns;
    r.input_tokens = tokens;
    r.reported_input_tokens = tokens;
    r.output_tokens = 1;
    r.http_status = 200;
    if (i >= n - errors) {
      r.status = workload::RequestStatus::kHttpError;
      r.http_status = 500;
      r.first_token_ns = -1;
      r.error = "HTTP 500";
    }
    out.push_back(r);
  }
  return out;
}

// One GPU snapshot per host of `hosts` with `gpus` GPUs, used = used_mib.
inline std::vector<NodeGpuSnapshot> FlatGpus(int hosts, int gpus, double used_mib,
                                             double total_mib = 85651) {
  std::vector<NodeGpuSnapshot> out;
  for (int h = 0; h < hosts; ++h) {
    NodeGpuSnapshot node;
    node.host = std::to_string(601 + h);
    node.node = h;
    for (int g = 0; g < gpus; ++g) {
      nvidia_smi::GpuMemory m;
      m.index = g;
      m.used_mib = used_mib;
      m.total_mib = total_mib;
      node.gpus.push_back(m);
    }
    out.push_back(node);
  }
  return out;
}

inline SampleAnalysis MakeSample(const spec::LayoutSpec& layout, int c, int repeat,
                                 double duration_s, int errors = 0, double used_mib = 80000,
                                 const std::string& log = "[2026-01-01 00:00:00] ready\n") {
  SampleInputs in;
  in.id = {layout, c, repeat};
  in.records = EvenRecords(8, 16000, duration_s, errors);
  in.requests_expected = 8;
  in.logs.push_back({"service/" + in.id.str() + "/601.log", log});
  in.gpu = FlatGpus(4, 8, used_mib);
  return AnalyseSample(in);
}

}  // namespace ppsearch::analysis::testing
