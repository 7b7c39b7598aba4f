#include "analysis/sample.h"

#include <algorithm>
#include <map>

namespace ppsearch::analysis {

int SampleAnalysis::requests_total() const {
  return std::max(metrics.requests_total, requests_expected);
}

bool SampleAnalysis::all_requests_ok() const {
  return requests_total() > 0 && metrics.requests_completed == requests_total() &&
         metrics.request_errors == 0;
}

bool SampleAnalysis::valid() const {
  return completed() && all_requests_ok() && findings.empty() && problems.empty();
}

SampleAnalysis AnalyseSample(const SampleInputs& in) {
  SampleAnalysis out;
  out.id = in.id;
  out.name = in.id.str();
  out.state = in.state;
  out.requests_expected = in.requests_expected;
  out.problems = in.problems;
  out.metrics = stats::ComputeSampleMetrics(in.records);
  for (const auto& r : in.records) {
    if (r.ok() && r.reported_input_tokens >= 0 && r.reported_input_tokens != r.input_tokens)
      ++out.prompt_length_mismatches;
  }
  for (const LogText& log : in.logs) {
    std::vector<LogFinding> found = ScanLog(log.text, log.file);
    out.findings.insert(out.findings.end(), found.begin(), found.end());
  }
  // A node's CSV may hold several snapshots: keep each GPU's highest reading.
  std::map<std::pair<std::string, int>, size_t> index;
  for (const NodeGpuSnapshot& node : in.gpu) {
    for (const gpu::GpuMemory& g : node.gpus) {
      if (!g.used_mib) continue;
      auto key = std::make_pair(node.host, g.index);
      auto it = index.find(key);
      if (it == index.end()) {
        index[key] = out.gpus.size();
        out.gpus.push_back({node.host, node.node, g.index, *g.used_mib, g.total_mib.value_or(0)});
        continue;
      }
      GpuPeak& peak = out.gpus[it->second];
      peak.used_mib = std::max(peak.used_mib, *g.used_mib);
      peak.total_mib = std::max(peak.total_mib, g.total_mib.value_or(0));
    }
  }
  for (const GpuPeak& g : out.gpus) {
    auto node = std::find_if(out.nodes.begin(), out.nodes.end(),
                             [&g](const NodePeak& n) { return n.host == g.host; });
    if (node == out.nodes.end()) {
      out.nodes.push_back({g.host, g.used_mib, g.total_mib});
    } else if (g.used_mib > node->used_mib) {
      node->used_mib = g.used_mib;
      node->total_mib = g.total_mib;
    }
    if (!out.peak_gpu_mib || g.used_mib > *out.peak_gpu_mib) {
      out.peak_gpu_mib = g.used_mib;
      out.gpu_total_mib = g.total_mib;
    }
    if (g.total_mib > 0) {
      const double headroom = g.total_mib - g.used_mib;
      if (!out.headroom_mib || headroom < *out.headroom_mib) out.headroom_mib = headroom;
    }
  }
  return out;
}

}  // namespace ppsearch::analysis
