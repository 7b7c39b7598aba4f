#include "report/search_page.h"

#include <fmt/format.h>

#include <map>

#include "report/document.h"
#include "report/html.h"
#include "report/svg_chart.h"
#include "search/search_render.h"

namespace ppsearch::report {
namespace {

constexpr char kFront[] = "search-front";

// Every point of a qualifying candidate that meets the SLA, coloured by PP
// size, shaped by load point (each listed load its own shape, the loads
// bisection found one more), the front ringed. A refused candidate has no
// point here.
std::string FrontChart(const search::SearchResult& r) {
  ScatterChart c;
  c.id = kFront;
  c.title = "Predicted " + search::FrontTitle(r) + ", every qualifying point meeting the SLA";
  c.x_label = r.decode ? "throughput per user, 1 / TPOT p50 (tokens/s)" : "TTFT p50 (s)";
  c.y_label = r.decode ? "output TPS per GPU (tokens/s)" : "input TPS per GPU (tokens/s)";
  for (const search::LoadPoint& l : r.load_points) c.shapes.push_back(l.Label());
  const int probed_shape = static_cast<int>(c.shapes.size());
  bool any_probed = false;
  std::map<int, int> series_of_pp;
  for (int k = 0; k < r.qualifying; ++k) {
    const search::Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    // A series per PP depth; disaggregated deployments (PP 1 pools) one of
    // their own.
    const int pp = e.candidate.pd ? 0 : e.candidate.layout.pp;
    if (!series_of_pp.count(pp)) {
      const int index = static_cast<int>(series_of_pp.size());
      series_of_pp[pp] = index;
      c.series.push_back({pp == 0 ? std::string("disaggregated") : fmt::format("PP{}", pp),
                          PaletteColor(static_cast<size_t>(index))});
    }
    for (const std::vector<search::PointFigures>* list : {&e.points, &e.probed})
      for (size_t l = 0; l < list->size(); ++l) {
        const search::PointFigures& f = (*list)[l];
        if (!f.meets_sla || (r.decode && !(f.output_tps_per_user > 0))) continue;
        ScatterPoint s;
        s.x = r.decode ? f.output_tps_per_user : f.ttft_p50_s;
        s.y = r.decode ? f.output_tps_per_gpu : f.input_tps_per_gpu;
        s.series = series_of_pp[pp];
        s.shape = f.probed ? probed_shape : static_cast<int>(l);
        any_probed |= f.probed;
        s.what = fmt::format("{} {}", e.candidate.Label(), f.load.Label());
        for (const search::ParetoPoint& p : r.pareto)
          s.emphasized |= p.evaluated == static_cast<size_t>(k) && p.load == f.load;
        c.points.push_back(s);
      }
  }
  if (any_probed) c.shapes.push_back("between listed loads (bisection)");
  c.emphasis_legend =
      r.decode ? "Pareto-optimal (no point has as many tokens/s per GPU and per user, and more "
                 "of one)"
               : "Pareto-optimal (no point has more TPS per GPU at a lower TTFT)";
  c.y_decimals = 1;
  return RenderScatterChart(c);
}

}  // namespace

std::string RenderSearchHtml(const std::string& spec_path, const search::SearchResult& r, int top) {
  Document doc;
  doc.title = "ppsearch search: " + spec_path + " (predicted)";
  const std::vector<std::string> summary = search::SummaryLines(r);
  doc.intro.push_back(Block::Paragraph(
      "Every number on this page was **predicted by the simulator**; nothing was measured."));
  doc.intro.push_back(Block::Bullets(summary));
  Section ranking{"Ranking", {}};
  ranking.blocks.push_back(Block::TableBlock(search::RankingTable(r, top)));
  if (r.qualifying > 0) {
    ranking.blocks.push_back(Block::Paragraph(search::TiedLine(r)));
    if (const std::string burst = search::BurstLine(r); !burst.empty())
      ranking.blocks.push_back(Block::Paragraph(burst));
  } else {
    ranking.blocks.push_back(Block::Bullets(search::NoneQualifiesLines(r)));
  }
  doc.sections.push_back(ranking);
  // Every one the even split left out, where the text shows the first few.
  if (std::vector<std::string> split = search::LayerSplitLines(r, r.evaluated.size());
      !split.empty()) {
    Section layer_splits{"Layer splits", {Block::Paragraph(split.front())}};
    split.erase(split.begin());
    layer_splits.blocks.push_back(Block::Bullets(split));
    doc.sections.push_back(layer_splits);
  }
  if (!r.pareto.empty()) {
    Section front{"Pareto front", {}};
    front.blocks.push_back(Block::Figure(kFront));
    front.blocks.push_back(Block::Bullets(search::FrontLines(r)));
    doc.sections.push_back(front);
  }
  if (!r.rejected.empty()) {
    table::Table t{{"reason", "candidates", "first refusal"}, {}, {true, false, true}};
    for (const auto& [reason, count] : r.rejected_by_reason) {
      std::string first;
      for (const search::Rejection& x : r.rejected)
        if (x.reason == reason) {
          first = x.message;
          break;
        }
      t.rows.push_back({reason, std::to_string(count), first});
    }
    doc.sections.push_back({"Refused candidates", {Block::TableBlock(t)}});
  }
  return RenderHtml(doc, {{kFront, FrontChart(r)}});
}

}  // namespace ppsearch::report
