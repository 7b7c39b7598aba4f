#include "stats/point_figures.h"

#include <string_view>

namespace ppsearch::stats {
namespace {

using F = Figures;

const FigureField kFields[] = {
    {"input_tps", &F::input_tps},
    {"output_tps", &F::output_tps, true},
    {"request_rps", &F::request_rps},
    {"goodput_rps", &F::goodput_rps},
    {"ttft_mean_s", &F::ttft_mean_s},
    {"ttft_p50_s", &F::ttft_p50_s},
    {"ttft_p95_s", &F::ttft_p95_s},
    {"ttft_p99_s", &F::ttft_p99_s},
    {"e2e_p50_s", &F::e2e_p50_s},
    {"e2e_p99_s", &F::e2e_p99_s},
    {"tpot_p50_s", &F::tpot_p50_s, true},
    {"tpot_p99_s", &F::tpot_p99_s, true},
    {"itl_p50_s", &F::itl_p50_s, true},
    {"itl_p99_s", &F::itl_p99_s, true},
    {"first_token_pace", &F::first_token_pace, false, false, true},
    {"input_tps_per_gpu", &F::input_tps_per_gpu, false, true},
    {"output_tps_per_gpu", &F::output_tps_per_gpu, true, true},
    {"output_tps_per_user", &F::output_tps_per_user, true, true},
};

}  // namespace

std::span<const FigureField> FigureFields() { return kFields; }

const FigureField* FieldOf(double Figures::*member) {
  for (const FigureField& f : kFields)
    if (f.member == member) return &f;
  return nullptr;
}

bool IsTime(double Figures::*member) {
  const std::string_view name = FieldOf(member)->name;
  return name.size() > 2 && name.substr(name.size() - 2) == "_s";
}

std::string FigureKey(double Figures::*member, TimeUnit unit) {
  std::string key = FieldOf(member)->name;
  if (unit == TimeUnit::kMilliseconds && IsTime(member)) key.replace(key.size() - 2, 2, "_ms");
  return key;
}

double FigureIn(double value, TimeUnit unit) {
  return unit == TimeUnit::kMilliseconds ? value * 1e3 : value;
}

void Derive(Figures& f, int gpus) {
  f.input_tps_per_gpu = gpus > 0 ? f.input_tps / gpus : 0;
  f.output_tps_per_gpu = gpus > 0 ? f.output_tps / gpus : 0;
  f.output_tps_per_user = f.tpot_p50_s > 0 ? 1 / f.tpot_p50_s : 0;
}

Figures FiguresOf(const SampleMetrics& m, int gpus) {
  Figures f;
  f.input_tps = m.input_tps;
  f.output_tps = m.output_tps;
  f.request_rps = m.request_throughput;
  f.goodput_rps = m.goodput_rps;
  f.ttft_mean_s = m.ttft_s.mean;
  f.ttft_p50_s = m.ttft_s.p50;
  f.ttft_p95_s = m.ttft_s.p95;
  f.ttft_p99_s = m.ttft_s.p99;
  f.e2e_p50_s = m.e2e_s.p50;
  f.e2e_p99_s = m.e2e_s.p99;
  f.decode = m.tpot_requests > 0;
  f.tpot_p50_s = m.tpot_s.p50;
  f.tpot_p99_s = m.tpot_s.p99;
  f.itl_p50_s = m.itl_s.p50;
  f.itl_p99_s = m.itl_s.p99;
  f.first_token_pace = m.first_token_pace;
  Derive(f, gpus);
  return f;
}

}  // namespace ppsearch::stats
