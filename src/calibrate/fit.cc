#include "calibrate/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cost/layout_cost.h"
#include "evidence/evidence.h"
#include "evidence/medians_csv.h"
#include "evidence/run_metadata.h"
#include "predict/predict.h"
#include "predict/search_points.h"
#include "util/files.h"
#include "util/json_file.h"
#include "util/matrix.h"

namespace ppsearch::calibrate {
namespace {

using cost::AllParams;
using cost::Param;
constexpr int kN = cost::kParamCount;
constexpr int kMaxIterations = 40;
constexpr double kStep = 0.01;  // finite-difference step in log space (1%)
// A parameter is "determined" when the data shrank its spread to under
// half the prior's.
constexpr double kDeterminedRatio = 0.5;
// Residuals (in noise units) beyond which a fit at a bound is infeasible.
constexpr double kMisfit = 2.0;

struct Space {
  std::array<double, kN> lo{}, hi{}, x0{}, sigma{};
};

Space MakeSpace(const hardware::HardwareProfile& hw) {
  Space s;
  for (const auto& p : AllParams()) {
    const int i = cost::Index(p.param);
    const cost::Range b = cost::Bounds(p.param, hw);
    const cost::Range prior = cost::Prior(p.param, hw);
    s.lo[i] = std::log(std::max(b.lo, prior.lo * 0.01));
    s.hi[i] = std::log(b.hi);
    s.x0[i] = std::log(std::clamp(p.nominal, std::exp(s.lo[i]), b.hi));
    s.sigma[i] = cost::PriorLogSigma(p.param, hw);
  }
  return s;
}

cost::Calibration FromLog(const std::array<double, kN>& x) {
  cost::Calibration c;
  for (int i = 0; i < kN; ++i) c.value[i] = std::exp(x[i]);
  return c;
}

struct Evaluation {
  std::vector<double> data;  // residuals in noise units
  std::vector<PointResidual> points;
  std::vector<ShareResidual> shares;
  std::vector<ClassShares> class_shares;
};

class Problem {
 public:
  Problem(const FitInputs& in, std::vector<int> use) : in_(in), use_(std::move(use)) {}

  Evaluation Evaluate(const cost::Calibration& c) {
    ++evaluations_;
    Evaluation e;
    for (int m : use_) e = Append(std::move(e), m, c, true);
    return e;
  }

  // Predictions for measurement `m` without adding residuals for fitting.
  std::vector<PointResidual> Predict(int m, const cost::Calibration& c) {
    return Append(Evaluation{}, m, c, false).points;
  }
  int evaluations() const { return evaluations_; }

 private:
  Evaluation Append(Evaluation e, int m, const cost::Calibration& c, bool residuals) {
    const Measurement& meas = in_.measurements[m];
    const plan::LayoutPlan& plan = in_.plans[m];
    double share = 0;
    std::array<double, nsys::kComputeClasses> classes{};
    for (const auto& mp : meas.points) {
      // The fit varies only the calibration between evaluations; the point
      // is predicted as every search predicts it.
      predict::PointRequest request;
      request.concurrency = mp.concurrency;
      const predict::PointPrediction p = predict::PredictSearchPoint(*in_.search, plan, c, request);
      const double tps = std::max(p.metrics.input_tps, 1e-9);
      e.points.push_back({meas.layout, mp.concurrency, mp.input_tps, tps, mp.ttft_p50_s,
                          p.metrics.ttft_s.p50, p.memory.peak_mib_max, mp.peak_gpu_mib});
      share += p.exposed_comm_share / static_cast<double>(meas.points.size());
      const auto predicted = predict::MeanClassShares(p.stage_shares);
      for (int k = 0; k < nsys::kComputeClasses; ++k)
        classes[k] += predicted[k] / static_cast<double>(meas.points.size());
      if (!residuals) continue;
      e.data.push_back(std::log(tps / mp.input_tps) / in_.noise.input_tps_rel);
      if (mp.ttft_p50_s > 0 && p.metrics.ttft_s.p50 > 0)
        e.data.push_back(std::log(p.metrics.ttft_s.p50 / mp.ttft_p50_s) / in_.noise.ttft_rel);
      if (mp.peak_gpu_mib > 0 && p.memory.peak_mib_max > 0)
        e.data.push_back(std::log(p.memory.peak_mib_max / mp.peak_gpu_mib) / in_.noise.peak_rel);
    }
    if (meas.compute_class_shares)
      e.class_shares.push_back({meas.layout, *meas.compute_class_shares, classes});
    if (meas.exposed_comm_share) {
      e.shares.push_back({meas.layout, *meas.exposed_comm_share, share});
      if (residuals)
        e.data.push_back((share - *meas.exposed_comm_share) / in_.noise.exposed_share_abs);
    }
    return e;
  }

  const FitInputs& in_;
  std::vector<int> use_;
  int evaluations_ = 0;
};

double SumSquares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return s;
}

// Data residuals followed by the prior's (x - x0) / sigma.
std::vector<double> AllResiduals(const std::vector<double>& data, const std::array<double, kN>& x,
                                 const Space& s) {
  std::vector<double> r = data;
  for (int i = 0; i < kN; ++i) r.push_back((x[i] - s.x0[i]) / s.sigma[i]);
  return r;
}

struct Solution {
  std::array<double, kN> x{};
  Evaluation eval;
  std::vector<double> jacobian;  // rows = residuals (data then prior), cols = kN
  int rows = 0, data_rows = 0;
};

// Finite-difference Jacobian of all residuals at x (steps stay inside bounds).
std::vector<double> Jacobian(Problem& problem, const std::array<double, kN>& x,
                             const std::vector<double>& r0, const Space& s) {
  const int rows = static_cast<int>(r0.size());
  std::vector<double> j(static_cast<size_t>(rows) * kN, 0.0);
  for (int i = 0; i < kN; ++i) {
    std::array<double, kN> xs = x;
    const double h = x[i] + kStep <= s.hi[i] ? kStep : -kStep;
    xs[i] += h;
    auto r = AllResiduals(problem.Evaluate(FromLog(xs)).data, xs, s);
    for (int k = 0; k < rows; ++k) j[k * kN + i] = (r[k] - r0[k]) / h;
  }
  return j;
}

// Bounded Levenberg-Marquardt: a parameter on a bound that the gradient
// pushes outward is held there for the step (projected steps).
Solution Minimize(Problem& problem, const Space& s) {
  Solution sol;
  sol.x = s.x0;
  sol.eval = problem.Evaluate(FromLog(sol.x));
  std::vector<double> r = AllResiduals(sol.eval.data, sol.x, s);
  double cost = SumSquares(r);
  double lambda = 1e-2;
  for (int it = 0; it < kMaxIterations; ++it) {
    const auto j = Jacobian(problem, sol.x, r, s);
    const int rows = static_cast<int>(r.size());
    std::vector<double> a(kN * kN, 0.0), g(kN, 0.0);
    for (int k = 0; k < rows; ++k)
      for (int p = 0; p < kN; ++p) {
        g[p] += j[k * kN + p] * r[k];
        for (int q = 0; q < kN; ++q) a[p * kN + q] += j[k * kN + p] * j[k * kN + q];
      }
    std::vector<bool> held(kN, false);
    for (int p = 0; p < kN; ++p)
      held[p] =
          (sol.x[p] >= s.hi[p] - 1e-9 && g[p] < 0) || (sol.x[p] <= s.lo[p] + 1e-9 && g[p] > 0);
    bool improved = false;
    for (int attempt = 0; attempt < 8 && !improved; ++attempt) {
      std::vector<double> m(kN * kN, 0.0), b(kN, 0.0);
      for (int p = 0; p < kN; ++p) {
        for (int q = 0; q < kN; ++q) m[p * kN + q] = held[p] || held[q] ? 0.0 : a[p * kN + q];
        m[p * kN + p] = held[p] ? 1.0 : a[p * kN + p] * (1 + lambda) + 1e-12;
        b[p] = held[p] ? 0.0 : -g[p];
      }
      auto step = SolveSpd(m, kN, b);
      if (!step) {
        lambda *= 4;
        continue;
      }
      std::array<double, kN> xn = sol.x;
      for (int p = 0; p < kN; ++p) xn[p] = std::clamp(sol.x[p] + (*step)[p], s.lo[p], s.hi[p]);
      Evaluation en = problem.Evaluate(FromLog(xn));
      auto rn = AllResiduals(en.data, xn, s);
      const double cn = SumSquares(rn);
      if (cn < cost) {
        const double gain = (cost - cn) / std::max(cost, 1e-12);
        sol.x = xn;
        sol.eval = std::move(en);
        r = std::move(rn);
        cost = cn;
        lambda = std::max(lambda / 3, 1e-7);
        improved = true;
        if (gain < 1e-7) it = kMaxIterations;  // converged
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  sol.jacobian = Jacobian(problem, sol.x, r, s);
  sol.rows = static_cast<int>(r.size());
  sol.data_rows = static_cast<int>(sol.eval.data.size());
  return sol;
}

std::string Percent(double log_sigma) {
  return fmt::format("{:.0f}%", (std::exp(log_sigma) - 1) * 100);
}

// Why the fit's curvature leaves parameter p at its prior.
std::string UnidentifiedReason(int p, const Solution& sol, const Space& s,
                               const std::vector<double>& cov) {
  double sensitivity = 0;
  for (int k = 0; k < sol.data_rows; ++k)
    sensitivity += sol.jacobian[k * kN + p] * sol.jacobian[k * kN + p];
  sensitivity = std::sqrt(sensitivity) * s.sigma[p];
  if (sensitivity < 0.5)
    return "not identifiable from this data: moving it across its prior range changes the "
           "measured figures by less than half their noise";
  int partner = -1;
  double best = 0;
  for (int q = 0; q < kN; ++q) {
    if (q == p) continue;
    const double corr =
        cov[p * kN + q] / std::sqrt(std::max(cov[p * kN + p] * cov[q * kN + q], 1e-300));
    if (std::abs(corr) > std::abs(best)) {
      best = corr;
      partner = q;
    }
  }
  if (partner >= 0 && std::abs(best) >= 0.5)
    return fmt::format(
        "not identifiable from this data: it moves the measured figures the way {} does "
        "(posterior correlation {:+.2f}); another layout or a profile would separate them",
        AllParams()[partner].name, best);
  return fmt::format(
      "kept near its prior: the data narrows its spread only from +-{} to +-{} (1 sigma)",
      Percent(s.sigma[p]), Percent(std::sqrt(std::max(cov[p * kN + p], 0.0))));
}

bool IsCompute(Param p) {
  return p == Param::kDenseGemm || p == Param::kFp8Gemm || p == Param::kMoeGemm ||
         p == Param::kAttention || p == Param::kLinearAttention || p == Param::kMemory;
}

// Whether a larger value of p makes the model faster (a rate or an
// efficiency) rather than slower (a wait, an overhead, a floor).
bool LargerIsFaster(Param p) {
  return IsCompute(p) || p == Param::kIntraLink || p == Param::kInterLink;
}

// Why a measurement is slower than the model at its slowest: what the model
// does not see, rather than a parameter it could stretch further.
constexpr const char* kSlowerThanTheModel =
    "a misconfigured run (another model, precision, backend or flags than the spec's), a "
    "throughput per GPU given as a whole server's (or a time in the wrong unit), or contention "
    "the model does not see (other jobs on the GPUs or links, throttling)";

// What has to give when parameter p sits on its bound and the data pulls it
// beyond: at the bound that makes the model fastest the measurement ran
// faster than the model can; at the one that makes it slowest, slower.
std::string Assumption(Param p, bool at_hi) {
  const bool fastest = at_hi == LargerIsFaster(p);
  switch (p) {
    case Param::kDenseGemm:
    case Param::kFp8Gemm:
    case Param::kMoeGemm:
    case Param::kAttention:
    case Param::kLinearAttention:
    case Param::kMemory:
      if (!fastest)
        return std::string(
                   "the measured layout ran slower than its operators take at the least "
                   "efficiency the model allows: ") +
               kSlowerThanTheModel;
      return "the measured layout ran faster than its operators allow at the profile's "
             "sustained rates: either the profile's rate for this operator class is low for "
             "this GPU, or the model counts work the runtime does not do (fused, sharded or "
             "skipped operators)";
    case Param::kIntraLink:
    case Param::kInterLink:
      if (!fastest)
        return std::string(
                   "the collectives took longer than the least link rate the model "
                   "allows: ") +
               kSlowerThanTheModel;
      return "the collectives finished faster than the link's line rate allows: the profile's "
             "link figures, or the ring algorithm the model assumes, do not hold here";
    case Param::kExpertSkew:
    case Param::kRankJitter:
      if (!fastest)
        return std::string(
                   "the data asks for more waiting than the most imbalanced ranks the "
                   "model allows: ") +
               kSlowerThanTheModel;
      return "the data asks for less waiting than perfectly balanced ranks: the measured time "
             "is below what the model's transfers alone take";
    case Param::kHostOverhead:
      if (!fastest)
        return std::string(
                   "the measured time exceeds the model's GPU time plus the most "
                   "host time per iteration the model allows: ") +
               kSlowerThanTheModel;
      return "the host's per-iteration time cannot be negative: the model's GPU time alone "
             "exceeds the measured time";
    case Param::kDecodeKernel:
      if (!fastest)
        return std::string(
                   "the measured decode steps are longer than the longest kernel floor "
                   "the model allows: ") +
               kSlowerThanTheModel;
      return "the measured decode steps are shorter than the kernels the model counts take at "
             "no work: the runtime fuses kernels the model counts apart, or skips them";
    case Param::kWorkspace:  // memory, not speed: either bound
      return "the measured peak is below what the model's pools, weights and activations "
             "alone take, or above the GPU: the memory model's terms do not hold here";
  }
  return "";
}

// The reason for the bound p is held at. The table's bound_why names the
// physical one: the upper, or a lower bound of 0 ("none below zero"); the
// other end only closes the range the fit searches (an efficiency of 0.05
// is no property of the profile).
std::string BoundReason(const cost::ParamInfo& info, bool at_hi) {
  if (at_hi == (info.bound_lo != 0)) return std::string(info.bound_why);
  return at_hi ? "the most the fit searches" : "the least the fit searches";
}

std::string WorstMisfit(const Evaluation& e) {
  const PointResidual* worst = nullptr;
  for (const auto& p : e.points)
    if (worst == nullptr || std::abs(std::log(p.predicted_tps / p.measured_tps)) >
                                std::abs(std::log(worst->predicted_tps / worst->measured_tps)))
      worst = &p;
  std::string s;
  if (worst != nullptr)
    s = fmt::format("{} C={} input TPS predicted {:.0f} vs measured {:.0f} ({:+.1f}%)",
                    worst->layout.Label(), worst->concurrency, worst->predicted_tps,
                    worst->measured_tps, (worst->predicted_tps / worst->measured_tps - 1) * 100);
  for (const auto& sh : e.shares)
    s += fmt::format("{}{} exposed communication predicted {:.1f}% vs measured {:.1f}%",
                     s.empty() ? "" : "; ", sh.layout.Label(), sh.predicted * 100,
                     sh.measured * 100);
  return s;
}

// The operators that take most of a measured layout's compute at the fitted
// values, for the infeasibility message: where the model's work count would
// have to be wrong.
std::string LargestOperators(const FitInputs& in, const cost::Calibration& c) {
  if (in.measurements.empty()) return "";
  const plan::LayoutPlan& plan = in.plans.front();
  const predict::PointModel point =
      predict::BuildPointModel(plan, in.search->spec, in.search->model, in.search->hardware, c);
  const int64_t chunk = std::max<int64_t>(point.scheduler.chunked_prefill_size, 1);
  auto ops = point.cost->OperatorTimes(0, chunk);
  double total = 0;
  for (const auto& o : ops) total += o.ns;
  std::string s;
  for (size_t i = 0; i < ops.size() && i < 3 && total > 0; ++i)
    s += fmt::format("{}{} {:.0f}%{}", s.empty() ? "" : ", ", ops[i].name, ops[i].ns / total * 100,
                     ops[i].replicated ? " (replicated on every TP rank)" : "");
  if (s.empty()) return s;
  return fmt::format(" At {} stage 0 the largest GEMMs per rank are {} of the GEMM time.",
                     in.measurements.front().layout.Label(), s);
}

void Classify(const Solution& sol, const Space& s, const FitInputs& in, FitResult& fit) {
  cost::Calibration& c = fit.calibration;
  // A parameter the data presses against its bound has its posterior piled
  // up at the bound: it is held there, and the others' covariance is the
  // curvature's inverse on the parameters still free (Laplace approximation
  // on the constrained set), so draws do not all fall on one side.
  std::vector<bool> pressed(kN, false);
  for (int p = 0; p < kN; ++p) {
    double gdata = 0;  // d(data cost)/dx_p
    for (int k = 0; k < sol.data_rows; ++k) gdata += sol.jacobian[k * kN + p] * sol.eval.data[k];
    const bool at_hi = sol.x[p] >= s.hi[p] - 1e-6, at_lo = sol.x[p] <= s.lo[p] + 1e-6;
    pressed[p] = (at_hi && gdata < 0) || (at_lo && gdata > 0);
  }
  std::vector<double> a(kN * kN, 0.0);
  for (int k = 0; k < sol.rows; ++k)
    for (int p = 0; p < kN; ++p)
      for (int q = 0; q < kN; ++q)
        a[p * kN + q] += sol.jacobian[k * kN + p] * sol.jacobian[k * kN + q];
  for (int p = 0; p < kN; ++p)
    if (pressed[p])
      for (int q = 0; q < kN; ++q) a[p * kN + q] = a[q * kN + p] = p == q ? 1.0 : 0.0;
  auto cov = InverseSpd(a, kN);
  if (!cov) {  // cannot happen with the prior rows; keep the prior if it does
    cov = std::vector<double>(kN * kN, 0.0);
    for (int p = 0; p < kN; ++p) (*cov)[p * kN + p] = s.sigma[p] * s.sigma[p];
  }
  for (int p = 0; p < kN; ++p)
    if (pressed[p]) (*cov)[p * kN + p] = 0.0;
  c.log_covariance = *cov;
  double misfit = 0;
  for (double r : sol.eval.data) misfit = std::max(misfit, std::abs(r));
  // assumption -> the parameters it holds back, how many, how many of them
  // at a physical bound, and whether any is a compute class
  struct Pinned {
    std::string names;
    int count = 0, physical = 0;
    bool compute = false;
  };
  std::map<std::string, Pinned> pinned;
  for (int p = 0; p < kN; ++p) {
    const auto& info = AllParams()[p];
    fit.prior_sigma[p] = s.sigma[p];
    fit.posterior_sigma[p] = std::sqrt(std::max((*cov)[p * kN + p], 0.0));
    const bool at_hi = sol.x[p] >= s.hi[p] - 1e-6;
    if (pressed[p]) {
      c.status[p] = cost::ParamStatus::kAtBound;
      const std::string reason = BoundReason(info, at_hi);
      c.note[p] = fmt::format("held at its {} bound {:.4g} ({})", at_hi ? "upper" : "lower",
                              c.value[p], reason);
      if (misfit > kMisfit) {
        // One message per assumption, naming every parameter it holds back.
        const std::string assumption = Assumption(info.param, at_hi);
        Pinned& pin = pinned[assumption];
        pin.names += fmt::format("{}{} = {:.4g} ({})", pin.names.empty() ? "" : ", ", info.name,
                                 c.value[p], reason);
        ++pin.count;
        pin.physical += reason == info.bound_why;
        pin.compute |= IsCompute(info.param);
      }
    } else if (fit.posterior_sigma[p] < kDeterminedRatio * s.sigma[p]) {
      c.status[p] = cost::ParamStatus::kDetermined;
      c.note[p] = fmt::format("determined: the data narrowed it from +-{} to +-{} (1 sigma)",
                              Percent(s.sigma[p]), Percent(fit.posterior_sigma[p]));
    } else {
      c.status[p] = cost::ParamStatus::kPrior;
      c.note[p] = UnidentifiedReason(p, sol, s, *cov);
    }
  }
  FlagOffPrior(in.search->hardware, fit);
  // A bound's reason may hold a comma ("the P2P rate, or ..."): the verb
  // follows the count of parameters, not the text.
  for (const auto& [assumption, pin] : pinned)
    c.infeasible.push_back(fmt::format(
        "{} {} at the {}bound and the data pulls further; the fit still misses: {}. "
        "What has to give: {}.{}",
        pin.names, pin.count == 1 ? "is" : "are", pin.physical == pin.count ? "physical " : "",
        WorstMisfit(sol.eval), assumption, pin.compute ? LargestOperators(in, c) : ""));
}

// The recorded input of `key`, the first when several share it.
const evidence::RunInput* RecordedInput(const std::vector<evidence::RunInput>& inputs,
                                        const std::string& key) {
  for (const evidence::RunInput& i : inputs)
    if (i.key == key) return &i;  // the hardware profile itself comes before its bases
  return nullptr;
}

}  // namespace

// A fitted value beyond its prior range by more than the range's width is
// a finding, not a measurement to trust: the data may be right (the prior
// was wrong) or the model may be buying a misfit elsewhere with this
// parameter. Either way its uncertainty must reach back to what the prior
// calls physical, so its log-space variance grows by the squared distance
// to the nearest prior edge (one sigma then spans the gap); adding to the
// diagonal keeps the covariance positive semi-definite.
void FlagOffPrior(const hardware::HardwareProfile& hw, FitResult& fit) {
  cost::Calibration& c = fit.calibration;
  for (int p = 0; p < kN; ++p) {
    const auto& info = AllParams()[p];
    const double widths = cost::PriorWidthsOutside(info.param, c.value[p], hw);
    if (widths <= cost::kOffPriorWidths) continue;
    const cost::Range prior = cost::Prior(info.param, hw);
    const double edge = c.value[p] > prior.hi ? prior.hi : std::max(prior.lo, 1e-12);
    const double gap = std::abs(std::log(c.value[p] / edge));
    double& var = c.log_covariance[p * kN + p];
    const double before = std::sqrt(std::max(var, 0.0));
    // Capped where the calibration file's reader caps it (a factor of 20
    // at one sigma spans every parameter's bounds); the diagonal still only
    // grows, so the covariance stays positive semi-definite.
    const bool capped = var + gap * gap > cost::kMaxLogVariance;
    var = std::max(var, std::min(var + gap * gap, cost::kMaxLogVariance));
    fit.posterior_sigma[p] = std::sqrt(var);
    c.off_prior.push_back(fmt::format(
        "{} = {:.4g} is {:.1f} prior widths outside its prior [{:.4g}, {:.4g}] ({}): the fit "
        "buys the data with a value the prior calls unphysical, so read it as a misfit the "
        "model places here, not as a measurement; its spread is widened from +-{} to +-{} "
        "(1 sigma) {}",
        info.name, c.value[p], widths, prior.lo, prior.hi, info.unit, Percent(before),
        Percent(fit.posterior_sigma[p]),
        capped ? "and capped there, short of the prior's edge (a calibration file holds no "
                 "wider)"
               : "to reach the prior's edge"));
  }
}

Result<std::vector<Measurement>> LoadMeasurements(const std::string& path,
                                                  std::vector<std::string>* notes) {
  PPS_ASSIGN_OR_RETURN(evidence::MediansCsv csv, evidence::ReadMediansCsv(path));
  if (csv.rows.empty()) return MakeError(csv.path + ": no measured rows");
  std::vector<Measurement> out;
  for (const evidence::MedianRow& row : csv.rows) {
    // The fit models one aggregated server per layout; a deployment's two
    // pools and its transfer are not in it.
    if (row.point.layout.disaggregated())
      return MakeError(csv.path + ":" + std::to_string(row.line()) +
                       ": column 'pools': " + row.point.layout.Label() +
                       " is a disaggregated deployment; a calibration is fitted to aggregated "
                       "layouts only (measure the pools' layouts aggregated to calibrate them)");
    // A run's point whose every repeat failed has no medians: it says
    // nothing about speed, and the rest of the run still calibrates.
    if (!row.measured) {
      if (notes != nullptr)
        notes->push_back(csv.path + ":" + std::to_string(row.line()) + ": " +
                         row.point.layout.Label() + " C=" + std::to_string(row.point.concurrency) +
                         " has no valid repeats; left out of the fit");
      continue;
    }
    MeasuredPoint p;
    p.concurrency = row.point.concurrency;
    p.input_tps = row.point.median.input_tps;
    p.ttft_p50_s = row.point.median.ttft_p50_s;  // 0 where not held: not measured
    p.ttft_p95_s = row.point.median.ttft_p95_s;
    p.peak_gpu_mib = row.point.peak_gpu_mib.value_or(0);
    spec::LayoutSpec layout = row.point.layout;
    layout.origin = {};
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Measurement& m) { return m.layout == layout; });
    if (it == out.end()) {
      out.push_back(Measurement{layout, {}, std::nullopt, csv.path, std::nullopt, row.line()});
      it = out.end() - 1;
    }
    it->points.push_back(p);
  }
  if (out.empty()) return MakeError(csv.path + ": no measured point with valid repeats");
  if (notes != nullptr && csv.rows.front().simulated.value_or(false))
    notes->push_back(csv.path +
                     ": these medians come from the simulated engine, not from hardware: a fit "
                     "to them recovers the calibration that produced them");
  return out;
}

Status CheckMeasuredSetup(const std::string& path, const inputs::SearchInputs& in) {
  const evidence::RunPaths paths{path};
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec) || !std::filesystem::exists(paths.run_json(), ec))
    return Status::Ok();
  PPS_ASSIGN_OR_RETURN(const evidence::RunMetadata run, evidence::ReadRunMetadata(paths));
  if (!run.inputs) return Status::Ok();
  std::vector<std::string> differ;
  if (const evidence::RunInput* model = RecordedInput(*run.inputs, "engine.model_config")) {
    PPS_ASSIGN_OR_RETURN(const std::vector<evidence::RunInput> ours,
                         evidence::HashInputs({{model->key, in.model.source_path}}));
    if (ours.front().sha256 != model->sha256)
      differ.push_back("the model config " + model->path + " (SHA-256 " +
                       model->sha256.substr(0, 12) + "), not this spec's " + in.model.source_path +
                       " (" + ours.front().sha256.substr(0, 12) + ")");
  }
  if (const evidence::RunInput* hw = RecordedInput(*run.inputs, "cluster.hardware")) {
    const std::string name = std::filesystem::path(hw->path).stem().string();
    if (name != in.hardware.name)
      differ.push_back("the hardware profile " + name + ", not this spec's " + in.hardware.name);
  }
  if (differ.empty()) return Status::Ok();
  std::string what;
  for (const std::string& d : differ) what += (what.empty() ? "" : "; and ") + d;
  return MakeError(path + ": the run measured " + what +
                   ": a fit to it would predict this spec's model and GPU at another's speed; "
                   "calibrate on a run of this spec's model config and hardware profile");
}

Status AttachProfileSummary(const std::string& path, std::vector<Measurement>& measurements) {
  PPS_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(path));
  const char* key = "exposed_nccl_share_of_prefill_window_median";
  if (!j.is_object())
    return MakeError(path + ": expected a JSON object (`ppsearch nsys --json`'s summary), got " +
                     std::string(j.type_name()));
  if (!j.contains(key)) return MakeError(path + ": missing number '" + std::string(key) + "'");
  if (!j[key].is_number())
    return MakeError(path + ": key '" + std::string(key) + "': expected a number, got " +
                     std::string(j[key].type_name()) + " " + j[key].dump());
  const double share = j[key].get<double>();
  if (share <= 0 || share >= 1)
    return MakeError(path + ": key '" + std::string(key) + "': expected a share in (0, 1), got " +
                     j[key].dump());
  Measurement* target = nullptr;
  if (j.contains("layout") && j["layout"].is_object()) {
    spec::LayoutSpec l;
    for (auto [name, field] :
         {std::pair{"pp", &l.pp}, std::pair{"tp", &l.tp}, std::pair{"ep", &l.ep}}) {
      if (!j["layout"].contains(name) || !j["layout"][name].is_number_integer())
        return MakeError(path + ": key 'layout." + std::string(name) + "': expected an integer");
      *field = j["layout"][name].get<int>();
    }
    for (auto& m : measurements)
      if (m.layout == l) target = &m;
    if (target == nullptr)
      return MakeError(path + ": profiles " + l.Label() + ", which no --measured file has");
  } else if (measurements.size() == 1) {
    target = &measurements.front();
  } else {
    return MakeError(
        path + ": no 'layout' key, and " + std::to_string(measurements.size()) +
        " layouts were measured: add \"layout\": {\"pp\": .., \"tp\": .., \"ep\": ..}");
  }
  if (target->exposed_comm_share)
    return MakeError(path + ": a second profile summary for " + target->layout.Label());
  // `ppsearch nsys`'s compute by class, where the summary is its analysis.
  PPS_ASSIGN_OR_RETURN(target->compute_class_shares, nsys::ReadClassShares(j, path));
  target->exposed_comm_share = share;
  return Status::Ok();
}

Result<FitResult> FitCalibration(const FitInputs& in) {
  if (in.measurements.empty()) return MakeError("no measured layouts to calibrate on");
  for (size_t m = 0; m < in.measurements.size(); ++m)
    if (!in.plans[m].valid) {
      const Measurement& bad = in.measurements[m];
      const std::string where =
          bad.line > 0 ? bad.source + ":" + std::to_string(bad.line) : bad.source;
      std::string why;
      for (const plan::Diagnostic& d : in.plans[m].errors)
        why += (why.empty() ? ": " : "; ") + d.message;
      return MakeError("measured layout " + bad.layout.Label() + " (from " + where +
                       ") is not valid for this spec" + why);
    } else if (auto why = predict::NotModelled(in.plans[m]))
      return MakeError("cannot calibrate on " + in.measurements[m].source + ": " + *why);
  const Space space = MakeSpace(in.search->hardware);
  std::vector<int> all;
  for (size_t m = 0; m < in.measurements.size(); ++m) all.push_back(static_cast<int>(m));
  Problem problem(in, all);
  Solution sol = Minimize(problem, space);
  FitResult fit;
  fit.calibration = FromLog(sol.x);
  // exp(log(hi)) can land an ulp past hi, which the calibration file's
  // reader refuses: a fit held at a bound is written at the bound.
  for (const auto& p : AllParams()) {
    const cost::Range b = cost::Bounds(p.param, in.search->hardware);
    double& v = fit.calibration.value[cost::Index(p.param)];
    v = std::clamp(v, b.lo, b.hi);
  }
  Classify(sol, space, in, fit);
  fit.residuals = sol.eval.points;
  fit.shares = sol.eval.shares;
  fit.class_shares = sol.eval.class_shares;
  fit.evaluations = problem.evaluations();
  // Where the fit sits, so the model-form distances of its predictions are
  // measured from the layouts it saw (uncertainty::FromCalibration).
  for (const Measurement& m : in.measurements)
    fit.calibration.fitted_layouts.push_back(m.layout.Label());
  fit.calibration.fitted_hardware = in.search->hardware.name;
  fit.calibration.fitted_gpus_per_node = in.search->spec.cluster.gpus_per_node;
  fit.calibration.fitted_input_tokens = in.search->spec.workload.input_tokens;
  fit.calibration.fitted_output_tokens = in.search->spec.workload.output_tokens;
  fit.calibration.fitted_concurrency = MeasuredConcurrency(in.measurements);
  if (in.measurements.size() >= 2) {
    for (int held : all) {
      std::vector<int> rest;
      for (int m : all)
        if (m != held) rest.push_back(m);
      Problem sub(in, rest);
      Solution s = Minimize(sub, space);
      auto predicted = sub.Predict(held, FromLog(s.x));
      fit.held_out.insert(fit.held_out.end(), predicted.begin(), predicted.end());
      fit.evaluations += sub.evaluations();
    }
  }
  return fit;
}

std::vector<int> MeasuredConcurrency(const std::vector<Measurement>& measurements) {
  std::vector<int> levels;
  for (const Measurement& m : measurements)
    for (const MeasuredPoint& p : m.points) levels.push_back(p.concurrency);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  return levels;
}

}  // namespace ppsearch::calibrate
