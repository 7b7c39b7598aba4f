// Size and speed of the HTML pages (reported in docs/formats.md): writing the
// example search's prediction page, and how long Chromium takes to load and
// render a page (the example's simulation page, or the file named by
// $PPSEARCH_BENCH_HTML, e.g. a run's report.html).

#include <benchmark/benchmark.h>

#include <filesystem>

#include "analysis/prediction.h"
#include "predict/search_points.h"
#include "report/simulation_page.h"
#include "testkit/example_search.h"
#include "testkit/headless_browser.h"
#include "util/files.h"

namespace ppsearch {
namespace {

struct ExamplePageParts {
  spec::Spec spec;
  report::SimulationPage page;
};

const ExamplePageParts& ExamplePage() {
  static const ExamplePageParts ex = [] {
    const testkit::ExampleInputs& in = testkit::Example();
    ExamplePageParts e;
    e.spec = in.spec;
    e.page.spec_path = "examples/kimi-k3-pp-search.toml";
    e.page.calibration_source = "uncalibrated";
    e.page.setup = "the example search";
    e.page.gpu_total_mib = in.hardware.memory_mib;
    e.page.prediction.points = analysis::PredictedPoints(
        predict::PredictSearch(in, {}, predict::SearchOptions::CentralOnly()));
    return e;
  }();
  return ex;
}

void BM_SimulationPageHtml(benchmark::State& state) {
  const ExamplePageParts& ex = ExamplePage();
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
  const std::string chromium = testkit::FindChromium();
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
    const ExamplePageParts& ex = ExamplePage();
    (void)WriteFileAtomic(page, report::RenderSimulationHtml(ex.spec, ex.page));
  }
  auto browser = testkit::HeadlessBrowser::Start(chromium, (dir / "profile").string());
  if (!browser.ok()) {
    state.SkipWithError(browser.error().message.c_str());
    return;
  }
  double wall = 0;
  for (auto _ : state) {
    Result<testkit::PageReport> r = (*browser)->Open(page, 1000, 60);
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
