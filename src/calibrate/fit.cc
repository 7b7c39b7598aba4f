#include "calibrate/fit.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "predict/predict.h"
#include "util/csv.h"
#include "util/files.h"

namespace ppsearch::calibrate {
namespace {

constexpr double kScaleLo = 0.02, kScaleHi = 4.0;
constexpr int kBisections = 40;

struct Eval {
  double tps_ratio = 0;  // mean predicted / measured input TPS
  double exposed = 0;
};

Eval Evaluate(const cost::Calibration& c, const Measurement& m, const plan::LayoutPlan& plan,
              const spec::Spec& spec, const model::ModelDesc& model,
              const hardware::HardwareProfile& hw,
              std::vector<PointResidual>* residuals = nullptr) {
  Eval e;
  for (const auto& mp : m.points) {
    predict::PointOptions po;
    po.concurrency = mp.concurrency;
    po.seed = spec.workload.seed;
    auto p = predict::PredictPoint(plan, spec, model, hw, c, po);
    e.tps_ratio += p.metrics.input_tps / mp.input_tps;
    e.exposed += p.exposed_comm_share;
    if (residuals)
      residuals->push_back({mp.concurrency, mp.input_tps, p.metrics.input_tps, mp.ttft_p50_s,
                            p.metrics.ttft_s.p50, p.memory.peak_mib_max, mp.peak_gpu_mib});
  }
  e.tps_ratio /= static_cast<double>(m.points.size());
  e.exposed /= static_cast<double>(m.points.size());
  return e;
}

// Throughput rises with compute_scale: bisection for predicted == measured.
double FitComputeScale(cost::Calibration c, const Measurement& m, const plan::LayoutPlan& plan,
                       const spec::Spec& spec, const model::ModelDesc& model,
                       const hardware::HardwareProfile& hw) {
  double lo = std::log(kScaleLo), hi = std::log(kScaleHi);
  for (int i = 0; i < kBisections; ++i) {
    double mid = (lo + hi) / 2;
    c.compute_scale = std::exp(mid);
    (Evaluate(c, m, plan, spec, model, hw).tps_ratio < 1 ? lo : hi) = mid;
  }
  return std::exp((lo + hi) / 2);
}

bool NearBound(double v, double lo, double hi) { return v < lo * 1.02 || v > hi * 0.98; }

// Which link bounds the measured layout's TP collectives, by the profile's
// own numbers: the intra-node busbw of its per-node part, or its NIC share.
// Only that link's bandwidth is identifiable from one exposed share.
bool InterNodeBounds(const plan::LayoutPlan& plan, const hardware::HardwareProfile& hw) {
  const auto links = cost::LinkParams::FromProfile(hw);
  for (const auto& st : plan.stages) {
    const int nodes = st.collectives.nodes_spanned;
    if (nodes <= 1) continue;
    cost::GroupSpan g{plan.layout.tp, nodes};
    const auto* intra = g.ranks_per_node() > 1 ? &hw.IntraFor(g.ranks_per_node()) : nullptr;
    if (intra == nullptr || links.inter_gbps_per_gpu * g.ranks_per_node() < intra->busbw_gbps)
      return true;
  }
  return false;
}

// Exposed share falls as bandwidth rises; for each bandwidth the compute
// scale is refitted so throughput stays matched.
void FitBottleneckBandwidth(const Measurement& m, const plan::LayoutPlan& plan,
                            const spec::Spec& spec, const model::ModelDesc& model,
                            const hardware::HardwareProfile& hw, cost::Calibration& c,
                            FitResult& fit) {
  const bool inter = InterNodeBounds(plan, hw);
  double& param = inter ? c.inter_gbps_per_gpu : c.intra_bw_scale;
  const double center = inter ? hw.nic_gbps_per_gpu : 1.0;
  const double lo_bw = center * 0.01, hi_bw = center * 20;
  double lo = std::log(lo_bw), hi = std::log(hi_bw);
  for (int i = 0; i < kBisections; ++i) {
    double mid = (lo + hi) / 2;
    param = std::exp(mid);
    c.compute_scale = FitComputeScale(c, m, plan, spec, model, hw);
    (Evaluate(c, m, plan, spec, model, hw).exposed > *m.exposed_comm_share ? lo : hi) = mid;
  }
  param = std::exp((lo + hi) / 2);
  const std::string name = inter ? "inter_gbps_per_gpu" : "intra_bw_scale";
  fit.fitted.push_back(name);
  if (NearBound(param, lo_bw, hi_bw))
    fit.warnings.push_back(name + " hit its search bound: the exposed share cannot be matched");
  if (inter && param < 0.1 * hw.nic_gbps_per_gpu)
    fit.warnings.push_back(
        fmt::format("inter_gbps_per_gpu = {:.3f} GB/s is under 10% of the profile's {:.1f} GB/s "
                    "NIC share: cross-node "
                    "collectives behave like {:.0f} Gb/s per node (TCP sockets, no GPUDirect RDMA, "
                    "or a shared NIC)",
                    param, hw.nic_gbps_per_gpu, param * 8 * hw.gpus_per_node));
  if (!inter && (param < 0.5 || param > 2.0))
    fit.warnings.push_back(
        fmt::format("intra_bw_scale = {:.3f} puts intra-node collective bandwidth far "
                    "from the profile's measured figures",
                    param));
  fit.kept.push_back(
      inter ? "intra_bw_scale: the measured layout's collectives are bounded by the NICs, "
              "so intra-node bandwidth is not identifiable"
            : "inter_gbps_per_gpu: the measured layout's collectives are bounded by the "
              "intra-node links (the profile's NIC share is higher), so only a lower bound "
              "on NIC bandwidth is known; the profile's value is kept");
}

}  // namespace

Result<Measurement> LoadMeasurement(const std::string& csv_path, const std::string& profile_path) {
  PPS_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(csv_path));
  Measurement m;
  m.source = csv_path;
  if (t.rows.empty()) return MakeError(csv_path + ": no measured rows");
  for (size_t r = 0; r < t.rows.size(); ++r) {
    PPS_ASSIGN_OR_RETURN(double pp, CsvNumber(t, r, "pp"));
    PPS_ASSIGN_OR_RETURN(double tp, CsvNumber(t, r, "tp"));
    PPS_ASSIGN_OR_RETURN(double ep, CsvNumber(t, r, "ep"));
    spec::LayoutSpec l;
    l.pp = static_cast<int>(pp);
    l.tp = static_cast<int>(tp);
    l.ep = static_cast<int>(ep);
    if (r == 0) m.layout = l;
    if (!(l == m.layout))
      return MakeError(csv_path + ":" + std::to_string(t.row_lines[r]) +
                       ": calibration takes one layout; "
                       "row has " +
                       l.Label() + " but the first row has " + m.layout.Label());
    MeasuredPoint p;
    PPS_ASSIGN_OR_RETURN(double c, CsvNumber(t, r, "concurrency"));
    p.concurrency = static_cast<int>(c);
    PPS_ASSIGN_OR_RETURN(p.input_tps, CsvNumber(t, r, "input_tps_median"));
    if (p.input_tps <= 0)
      return MakeError(csv_path + ":" + std::to_string(t.row_lines[r]) +
                       ": column 'input_tps_median': expected a positive number");
    if (t.Column("ttft_p50_s_median") >= 0) {
      PPS_ASSIGN_OR_RETURN(p.ttft_p50_s, CsvNumber(t, r, "ttft_p50_s_median"));
    }
    if (t.Column("ttft_p95_s_median") >= 0) {
      PPS_ASSIGN_OR_RETURN(p.ttft_p95_s, CsvNumber(t, r, "ttft_p95_s_median"));
    }
    if (t.Column("peak_gpu_mib") >= 0) {
      PPS_ASSIGN_OR_RETURN(p.peak_gpu_mib, CsvNumber(t, r, "peak_gpu_mib"));
    }
    m.points.push_back(p);
  }
  if (!profile_path.empty()) {
    PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(profile_path));
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      return MakeError(profile_path + ": not valid JSON: " + e.what());
    }
    const char* key = "exposed_nccl_share_of_prefill_window_median";
    if (!j.contains(key) || !j[key].is_number())
      return MakeError(profile_path + ": missing number '" + std::string(key) + "'");
    double share = j[key].get<double>();
    if (share <= 0 || share >= 1)
      return MakeError(profile_path + ": key '" + std::string(key) +
                       "': expected a share in (0, 1), got " + j[key].dump());
    m.exposed_comm_share = share;
  }
  return m;
}

Result<FitResult> FitCalibration(const Measurement& m, const plan::LayoutPlan& plan,
                                 const spec::Spec& spec, const model::ModelDesc& model,
                                 const hardware::HardwareProfile& hw) {
  if (!plan.valid)
    return MakeError("measured layout " + m.layout.Label() + " is not valid for this spec");
  FitResult fit;
  cost::Calibration c;
  c.source = "fitted to " + m.source;
  if (m.exposed_comm_share && m.layout.tp > 1) {
    FitBottleneckBandwidth(m, plan, spec, model, hw, c, fit);
  } else {
    fit.kept.push_back(
        "inter_gbps_per_gpu and intra_bw_scale: no profile summary (exposed communication "
        "share) to separate communication from compute");
  }
  c.compute_scale = FitComputeScale(c, m, plan, spec, model, hw);
  fit.fitted.insert(fit.fitted.begin(), "compute_scale");
  fit.kept.push_back(
      "host_overhead_us: per-iteration host time is not identifiable from prefill "
      "throughput (estimate kept)");
  if (NearBound(c.compute_scale, kScaleLo, kScaleHi))
    fit.warnings.push_back("compute_scale hit its search bound");
  if (c.compute_scale < 0.15 || c.compute_scale > 2.0)
    fit.warnings.push_back(
        fmt::format("compute_scale = {:.3f} is physically implausible (kernels reaching "
                    "outside 15-200% of the profile's sustained rates)",
                    c.compute_scale));
  Eval e = Evaluate(c, m, plan, spec, model, hw, &fit.residuals);
  fit.measured_exposed_share = m.exposed_comm_share;
  fit.predicted_exposed_share = e.exposed;
  fit.calibration = c;
  return fit;
}

}  // namespace ppsearch::calibrate
