// Speed of `ppsearch search` (reported in docs/search.md): the example's
// whole default space (every PP dividing 32 GPUs, every EP dividing TP, three
// chunk sizes, seven load points) with 32-member intervals where they could
// change the ranking, and a space ten times larger (more chunk sizes and
// max-running-requests values), per candidate. The same for the chat
// example (examples/deepseek-v3-chat-search.toml: DeepSeek-V3 on 4 x 8
// H200, 2,000 tokens in and 1,000 out, 512 requests per load point),
// where decode dominates.

#include <benchmark/benchmark.h>

#include <string>

#include "inputs/search_inputs.h"
#include "ppsearch_source_dir.h"
#include "search/search.h"
#include "testkit/example_search.h"
#include "uncertainty/model_error_file.h"

namespace ppsearch::search {
namespace {

const inputs::SearchInputs& ChatExample() {
  static const inputs::SearchInputs in = *inputs::LoadSpecFileInputs(
      std::string(PPSEARCH_SOURCE_DIR) + "/examples/deepseek-v3-chat-search.toml");
  return in;
}

void RunSpace(benchmark::State& state, const SearchOptions& options,
              const inputs::SearchInputs& inputs = testkit::Example()) {
  int candidates = 0, predictions = 0;
  for (auto _ : state) {
    Result<SearchResult> r = Search(inputs, cost::Calibration{}, options);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    candidates = r->candidates;
    predictions = static_cast<int>(r->evaluated.size() * r->load_points.size());
    benchmark::DoNotOptimize(r->evaluated.data());
  }
  state.counters["candidates"] = candidates;
  state.counters["predictions"] = predictions;
  state.counters["per_candidate"] = benchmark::Counter(
      candidates, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// As `ppsearch search` draws them: the parameters' band and the model form.
SearchOptions WithModelForm() {
  SearchOptions o;
  Result<cost::ModelFormScales> m = uncertainty::ModelFormFor(cost::Calibration{});
  if (m.ok()) o.model_form = *m;
  return o;
}

void BM_SearchDefaultSpace(benchmark::State& state) { RunSpace(state, WithModelForm()); }
BENCHMARK(BM_SearchDefaultSpace)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_SearchTenfoldSpace(benchmark::State& state) {
  SearchOptions o = WithModelForm();
  o.bounds.chunked_prefill_size = {2048, 4096, 6144, 8192, 12288, 16384};
  o.bounds.max_running_requests = {16, 32, 64, 128, 256};
  RunSpace(state, o);
}
BENCHMARK(BM_SearchTenfoldSpace)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

void BM_SearchChatDefaultSpace(benchmark::State& state) {
  RunSpace(state, WithModelForm(), ChatExample());
}
BENCHMARK(BM_SearchChatDefaultSpace)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

void BM_SearchChatTenfoldSpace(benchmark::State& state) {
  SearchOptions o = WithModelForm();
  o.bounds.chunked_prefill_size = {2048, 4096, 6144, 8192, 12288, 16384};
  o.bounds.max_running_requests = {16, 32, 64, 128, 256};
  RunSpace(state, o, ChatExample());
}
BENCHMARK(BM_SearchChatTenfoldSpace)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace ppsearch::search
