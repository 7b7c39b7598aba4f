#include "run/verdict.h"

#include "analysis/sample.h"

namespace ppsearch::run {

Verdict DecideVerdict(const spec::Spec& spec, const evidence::SampleId& id,
                      const SampleOutput& out) {
  if (out.verdict != kVerdictOk) return {out.verdict, out.detail};
  analysis::SampleInputs in;
  in.id = id;
  in.records = out.records;
  in.requests_expected = spec.workload.requests;
  for (const auto& node : out.nodes)
    in.logs.push_back({"service/" + id.str() + "/" + node.host + ".log", node.log});
  const analysis::SampleAnalysis a = analysis::AnalyseSample(in);
  if (!a.all_requests_ok())
    return {"requests_failed", std::to_string(a.metrics.requests_completed) + "/" +
                                   std::to_string(a.requests_total()) + " requests completed"};
  if (!a.findings.empty())
    return {"log_findings", std::string(analysis::FindingKindName(a.findings[0].kind)) + " at " +
                                a.findings[0].Where()};
  return {kVerdictOk, ""};
}

}  // namespace ppsearch::run
