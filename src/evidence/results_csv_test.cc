// results.csv: what the writer writes reads back the same, an unknown cell is
// empty (not zero), and the reader's errors name the file, line and column.

#include "evidence/results_csv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ppsearch::evidence {
namespace {

ResultRow Measured() {
  ResultRow r;
  r.sample = "pp2-tp16-ep4_c8_r1";
  r.layout.pp = 2;
  r.layout.tp = 16;
  r.layout.ep = 4;
  r.concurrency = 8;
  r.repeat = 1;
  r.requests_completed = 64;
  r.requests_total = 64;
  r.request_errors = 0;
  stats::Figures& f = r.figures.emplace();
  f.input_tps = 5123.25;
  f.ttft_mean_s = 12.5;
  f.ttft_p50_s = 12.25;
  f.ttft_p95_s = 20.5;
  f.ttft_p99_s = 21.75;
  f.e2e_p50_s = 13.5;
  f.goodput_rps = 0.5;
  // Not written for a prefill-only sample: what it generated is first tokens.
  f.output_tps = 64;
  r.peak_gpu_mib = 80123;
  r.gpu_total_mib = 97871;
  r.findings = 2;
  r.simulated = true;
  return r;
}

// A decode sample on DP attention, and one whose evidence cannot be true.
std::vector<ResultRow> Rows() {
  ResultRow decode = Measured();
  decode.sample = "pp1-tp8-ep8-dp8_c16_r2";
  decode.layout.pp = 1;
  decode.layout.tp = 8;
  decode.layout.ep = 8;
  decode.layout.dp = 8;
  decode.concurrency = 16;
  decode.repeat = 2;
  stats::Figures& f = decode.figures.value();
  f.decode = true;
  f.output_tps = 800.5;
  f.output_tps_per_gpu = 100.25;  // two decimals, as written
  f.tpot_p50_s = 0.012;
  f.tpot_p99_s = 0.025;
  f.itl_p50_s = 0.011;
  f.itl_p99_s = 0.03;
  ResultRow impossible;
  impossible.sample = "pp4-tp8-ep4_c8_r3";
  impossible.layout.pp = 4;
  impossible.layout.tp = 8;
  impossible.layout.ep = 4;
  impossible.concurrency = 8;
  impossible.repeat = 3;
  impossible.verdict = Verdict::kInvalidEvidence;
  return {Measured(), decode, impossible};
}

TEST(ResultsCsv, WhatIsWrittenReadsBackTheSame) {
  const std::vector<ResultRow> rows = Rows();
  const std::string text = ResultsCsvText(rows);
  Result<CsvTable> table = ParseCsv(text, "results.csv");
  ASSERT_TRUE(table.ok()) << table.error().message;
  Result<std::vector<ResultRow>> back = ParseResultsCsv(*table);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const ResultRow &a = rows[i], &b = (*back)[i];
    EXPECT_EQ(b.sample, a.sample);
    EXPECT_EQ(b.layout, a.layout);
    EXPECT_EQ(b.layout.dp, a.layout.dp);
    EXPECT_EQ(b.concurrency, a.concurrency);
    EXPECT_EQ(b.repeat, a.repeat);
    EXPECT_EQ(b.requests_completed, a.requests_completed);
    EXPECT_EQ(b.requests_total, a.requests_total);
    EXPECT_EQ(b.request_errors, a.request_errors);
    EXPECT_EQ(b.peak_gpu_mib, a.peak_gpu_mib);
    EXPECT_EQ(b.gpu_total_mib, a.gpu_total_mib);
    EXPECT_EQ(b.findings, a.findings);
    EXPECT_EQ(b.simulated, a.simulated);
    EXPECT_EQ(b.verdict, a.verdict);
    EXPECT_EQ(b.synthesized, a.synthesized);
    EXPECT_EQ(b.figures_held, a.figures_held);
    ASSERT_EQ(b.figures.has_value(), a.figures.has_value());
    if (!a.figures) continue;
    EXPECT_EQ(b.figures->decode, a.figures->decode);
    // Every figure the file carries reads back; a prefill-only sample's
    // decode figures are not carried and read as 0.
    for (const char* name : {"input_tps", "ttft_mean_s", "ttft_p50_s", "ttft_p95_s", "ttft_p99_s",
                             "e2e_p50_s", "goodput_rps", "output_tps", "output_tps_per_gpu",
                             "tpot_p50_s", "tpot_p99_s", "itl_p50_s", "itl_p99_s"}) {
      const stats::FigureField* field = nullptr;
      for (const stats::FigureField& f : stats::FigureFields())
        if (std::string(f.name) == name) field = &f;
      ASSERT_NE(field, nullptr) << name;
      const double want =
          a.figures->decode || !field->decode_only ? a.figures.value().*field->member : 0;
      EXPECT_EQ(b.figures.value().*field->member, want) << a.sample << " " << name;
    }
  }
}

TEST(ResultsCsv, UnknownCellsAreEmptyAndFiguresHaveFixedDecimals) {
  const std::string text = ResultsCsvText(Rows());
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "schema_version,sample,pp,tp,ep,concurrency,repeat,requests_completed,"
            "requests_total,request_errors,input_tps,ttft_mean_s,ttft_p50_s,ttft_p95_s,"
            "ttft_p99_s,e2e_p50_s,peak_gpu_mib,gpu_total_mib,findings,simulated,verdict,"
            "output_tps,output_tps_per_gpu,tpot_p50_s,tpot_p99_s,itl_p50_s,itl_p99_s,dp,"
            "goodput_rps,instances,pools,synthesized");
  EXPECT_NE(text.find("\n1,pp2-tp16-ep4_c8_r1,2,16,4,8,1,64,64,0,5123.25,12.5000,12.2500,"
                      "20.5000,21.7500,13.5000,80123,97871,2,true,ok,,,,,,,1,0.5000,1,,false\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n1,pp4-tp8-ep4_c8_r3,4,8,4,8,3,,,,,,,,,,,,0,false,invalid_evidence,,,,,,,"
                      "1,,1,,false\n"),
            std::string::npos)
      << text;
}

TEST(ResultsCsv, AnotherSchemaOrAnUnknownVerdictIsNamedWithItsLine) {
  const std::string header = ResultsCsvText({}).substr(0, ResultsCsvText({}).find('\n') + 1);
  std::string row = ResultsCsvText({Measured()}).substr(header.size());
  Result<CsvTable> t = ParseCsv(header + "2" + row.substr(1), "results.csv");
  ASSERT_TRUE(t.ok());
  Result<std::vector<ResultRow>> r = ParseResultsCsv(*t);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "results.csv:2: column 'schema_version': expected 1, got 2");
  const size_t ok = row.find(",ok,");
  row.replace(ok, 4, ",fine,");
  t = ParseCsv(header + row, "results.csv");
  ASSERT_TRUE(t.ok());
  r = ParseResultsCsv(*t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("results.csv:2: column 'verdict': expected one of ok, "),
            std::string::npos)
      << r.error().message;
  t = ParseCsv("sample,pp\nx,1\n", "old.csv");
  ASSERT_TRUE(t.ok());
  r = ParseResultsCsv(*t);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "old.csv:1: missing column 'schema_version' in the header (expected results.csv of "
            "schema version 1)");
}

// A row holds every figure its sample has or none: an empty cell among
// them, or a decode figure without a TPOT p50, is named with its line.
TEST(ResultsCsv, AFigureMissingOrOutOfPlaceIsNamedWithItsLine) {
  const std::string text = ResultsCsvText({Measured()});
  Result<CsvTable> t = ParseCsv(text, "results.csv");
  ASSERT_TRUE(t.ok());
  const auto with_cell = [&](const std::string& column, const std::string& value) {
    CsvTable edited = *t;
    edited.rows[0][static_cast<size_t>(edited.Column(column))] = value;
    return ParseResultsCsv(edited);
  };
  Result<std::vector<ResultRow>> r = with_cell("ttft_p95_s", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "results.csv:2: column 'ttft_p95_s': expected a number, as the sample's other figures");
  r = with_cell("itl_p99_s", "0.5");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "results.csv:2: column 'itl_p99_s': expected an empty cell (the sample has no decode "
            "figures: tpot_p50_s is empty)");
  r = with_cell("input_tps", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "results.csv:2: column 'ttft_mean_s': expected an empty cell (the sample has no "
            "figures: input_tps is empty)");
}

// A file written before a figure's column existed (goodput_rps came after
// dp) reads, the figure unknown.
TEST(ResultsCsv, AFileWithoutALaterFigureColumnReads) {
  Result<CsvTable> t = ParseCsv(ResultsCsvText({Measured()}), "results.csv");
  ASSERT_TRUE(t.ok());
  const size_t at = static_cast<size_t>(t->Column("goodput_rps"));
  CsvTable older = *t;
  older.header.erase(older.header.begin() + static_cast<long>(at));
  for (auto& row : older.rows) row.erase(row.begin() + static_cast<long>(at));
  Result<CsvTable> reparsed = ParseCsv(CsvRow(older.header) + CsvRow(older.rows[0]), "old.csv");
  ASSERT_TRUE(reparsed.ok());
  Result<std::vector<ResultRow>> r = ParseResultsCsv(*reparsed);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE((*r)[0].figures.has_value());
  EXPECT_EQ((*r)[0].figures->input_tps, 5123.25);
  EXPECT_EQ((*r)[0].figures->goodput_rps, 0);
}

// A sample replayed from a CSV of medians holds only the figures its file
// held: the synthesis's TTFT p99, latency, goodput and output figures are
// empty cells, and the row reads back with the same figures held.
TEST(ResultsCsv, ASynthesizedRowHoldsOnlyTheFiguresItsFileHeld) {
  ResultRow r = Measured();
  r.synthesized = true;
  r.figures_held = {"input_tps", "ttft_p50_s"};
  const std::string text = ResultsCsvText({r});
  EXPECT_NE(text.find("\n1,pp2-tp16-ep4_c8_r1,2,16,4,8,1,64,64,0,5123.25,,12.2500,,,,80123,97871,2,"
                      "true,ok,,,,,,,1,,1,,true\n"),
            std::string::npos)
      << text;
  Result<CsvTable> t = ParseCsv(text, "results.csv");
  ASSERT_TRUE(t.ok());
  Result<std::vector<ResultRow>> back = ParseResultsCsv(*t);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_TRUE((*back)[0].synthesized);
  EXPECT_EQ((*back)[0].figures_held, r.figures_held);
  EXPECT_EQ((*back)[0].figures->ttft_p50_s, 12.25);
  EXPECT_EQ((*back)[0].figures->ttft_p99_s, 0);
  // The same row not marked synthesized is a row with figures missing.
  CsvTable edited = *t;
  edited.rows[0][static_cast<size_t>(edited.Column("synthesized"))] = "false";
  back = ParseResultsCsv(edited);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().message,
            "results.csv:2: column 'ttft_mean_s': expected a number, as the sample's other "
            "figures");
}

}  // namespace
}  // namespace ppsearch::evidence
