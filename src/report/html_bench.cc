// Size and speed of the HTML pages (reported in docs/formats.md): writing the
// example search's prediction page, and how long Chromium takes to load and
// render a page (the example's simulation page, or the file named by
// $PPSEARCH_BENCH_HTML, e.g. a run's report.html).

#include "ppsearch_source_dir.h"
#include <benchmark/benchmark.h>

#include <filesystem>

#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "report/headless_browser.h"
#include "report/simulation_page.h"
#include "spec/spec_parser.h"
#include "util/files.h"

namespace ppsearch {
namespace {

struct Example {
  spec::Spec spec;
  report::SimulationPage page;
};

const Example& ExamplePage() {
  static const Example ex = [] {
    Example e;
    e.spec = *spec::LoadSpec(std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml");
    const model::ModelDesc model = *model::LoadModel(e.spec.engine.model_config);
    const hardware::HardwareProfile hw = *hardware::LoadHardwareProfile(e.spec.cluster.hardware);
    const plan::Plan plan = plan::PlanSearch(e.spec, model, hw);
    e.page.spec_path = "examples/kimi-k3-pp-search.toml";
    e.page.calibration_source = "uncalibrated";
    e.page.setup = "the example search";
    e.page.gpu_total_mib = hw.memory_mib;
    for (const auto& lp : plan.layouts)
      for (int c : e.spec.sweep.concurrency) {
        predict::PointOptions po;
        po.concurrency = c;
        e.page.points.push_back(predict::PredictPoint(lp, e.spec, model, hw, {}, po));
        e.page.cap1_input_tps.push_back(0);
      }
    return e;
  }();
  return ex;
}

void BM_SimulationPageHtml(benchmark::State& state) {
  const Example& ex = ExamplePage();
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string html = report::RenderSimulationHtml(ex.spec, ex.page);
    bytes = html.size();
    benchmark::DoNotOptimize(html.data());
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_SimulationPageHtml)->Unit(benchmark::kMillisecond);

// Manual time: navigation start to the end of the load event, as the page reports it.
void BM_ChromiumLoad(benchmark::State& state) {
  const std::string chromium = report::FindChromium();
  if (chromium.empty()) {
    state.SkipWithError("chromium is not installed (bash scripts/setup.sh --tests)");
    return;
  }
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ppsearch-html-bench-" + std::to_string(::getpid()));
  std::string page;
  if (const char* env = std::getenv("PPSEARCH_BENCH_HTML")) {
    page = env;
  } else {
    page = (dir / "simulate.html").string();
    const Example& ex = ExamplePage();
    (void)WriteFileAtomic(page, report::RenderSimulationHtml(ex.spec, ex.page));
  }
  auto browser = report::HeadlessBrowser::Start(chromium, (dir / "profile").string());
  if (!browser.ok()) {
    state.SkipWithError(browser.error().message.c_str());
    return;
  }
  double wall = 0;
  for (auto _ : state) {
    Result<report::PageReport> r = (*browser)->Open(page, 1000, 60);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      break;
    }
    state.SetIterationTime(r->load_ms / 1000);
    wall = r->wall_ms;
  }
  state.counters["navigate_to_load_ms"] = wall;
  state.counters["page_bytes"] = static_cast<double>(std::filesystem::file_size(page));
  browser->reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
BENCHMARK(BM_ChromiumLoad)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace ppsearch
