#include "run/sample_verdict.h"

#include "analysis/sample.h"
#include "evidence/evidence.h"

namespace ppsearch::run {

SampleVerdict DecideVerdict(const spec::Spec& spec, const evidence::SampleId& id,
                            const SampleOutput& out) {
  // The same inputs `ppsearch report` reads back from the files, so the
  // manifest's verdict and the report's cannot disagree.
  analysis::SampleInputs in = analysis::SampleInputsFor(spec, id);
  in.records = out.records;
  in.engine_verdict = out.verdict;
  in.engine_detail = out.detail;
  in.synthesized = out.bench.synthesis.has_value();
  for (const auto& node : out.nodes)
    in.logs.push_back({evidence::RunPaths{}.service(id, node.host), node.log});
  const analysis::SampleAnalysis a = analysis::AnalyseSample(in);
  return {a.verdict, a.detail};
}

}  // namespace ppsearch::run
