// `ppsearch run` and `ppsearch report` on the simulated engine, through the
// built binary: the evidence directory, kill -9 and resume, injected
// failures, and "none qualifies".

#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_fixture.h"
#include "launch/process.h"
#include "util/csv.h"
#include "util/sha256.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRunSpec = "examples/kimi-k3-pp-search.toml";

class RunE2e : public CliTest {
 protected:
  std::string Results(const std::string& name) { return (dir_ / name).string(); }

  // The only run directory under `results`.
  fs::path RunDir(const std::string& results) {
    fs::path found;
    for (const auto& e : fs::directory_iterator(results)) found = e.path();
    return found;
  }

  int CountCompleted(const fs::path& run_dir) {
    std::string m = ReadText(run_dir / "manifest.jsonl");
    int n = 0;
    for (size_t p = m.find("\"completed\""); p != std::string::npos;
         p = m.find("\"completed\"", p + 1))
      ++n;
    return n;
  }

  // Runs `command` (a `ppsearch run` with --pace-ms) in the background and
  // sends it SIGINT once `manifest` records a completed sample (the handler
  // is set by then); stdout ends with "rc=<its exit code>". Bounded: polled
  // for at most 30 s, and `timeout` ends a run that would not stop.
  CommandResult InterruptOnceASampleCompleted(const std::string& command,
                                              const std::string& manifest) {
    return RunCommand("timeout 60 " + command +
                      " & pid=$!; for i in $(seq 300); do grep -q completed " +
                      launch::ShellQuote(manifest) +
                      " 2>/dev/null && break; sleep 0.1; done; kill -INT $pid; wait $pid; "
                      "echo \"rc=$?\"");
  }
};

TEST_F(RunE2e, ExampleSearchWritesTheWholeEvidenceDirectory) {
  CommandResult r = Run(std::string("run ") + kRunSpec +
                        " --engine sim --set experiment.results_dir='" + Results("a") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run = RunDir(Results("a"));
  EXPECT_EQ(run.filename().string().rfind("kimi3-pp-", 0), 0u) << run;
  for (const char* f : {"summary.csv", "results.csv", "summary.json", "report.md", "manifest.jsonl",
                        "metadata/run.json", "metadata/spec.toml", "metadata/commands.txt"})
    EXPECT_TRUE(fs::exists(run / f)) << f;
  const std::string sample = "pp8-tp4-ep4_c16_r3";
  EXPECT_TRUE(fs::exists(run / "raw" / (sample + ".jsonl")));
  EXPECT_TRUE(fs::exists(run / "bench" / (sample + ".json")));
  for (const char* host : {"601", "602", "603", "604"}) {
    EXPECT_TRUE(fs::exists(run / "gpu" / sample / (std::string(host) + ".csv"))) << host;
    EXPECT_TRUE(fs::exists(run / "service" / sample / (std::string(host) + ".log"))) << host;
  }
  EXPECT_NE(ReadText(run / "service" / sample / "601.log")
                .find("The server is fired up and ready to roll!"),
            std::string::npos);
  EXPECT_EQ(CountCompleted(run), 24);
  // The baseline copy travels with its hash, and run.json keeps its other keys.
  const nlohmann::json meta = nlohmann::json::parse(ReadText(run / "metadata/run.json"));
  ASSERT_TRUE(meta.contains("baseline_sha256")) << meta.dump(1);
  EXPECT_EQ(meta["baseline_sha256"], Sha256Hex(ReadText(run / "metadata/baseline.csv")));
  for (const char* key : {"engine", "simulated", "spec_path", "hosts", "seeds", "noise", "inputs"})
    EXPECT_TRUE(meta.contains(key)) << key;
  EXPECT_NE(r.out.find("PP / TP / EP"), std::string::npos);
  EXPECT_NE(ReadText(run / "report.md").find("simulated"), std::string::npos);

  // `report` rebuilds the derived files from the evidence alone.
  const std::string before = ReadText(run / "summary.csv");
  fs::remove(run / "summary.csv");
  fs::remove(run / "report.md");
  CommandResult rep = Run("report " + run.string());
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_EQ(ReadText(run / "summary.csv"), before);
  EXPECT_TRUE(fs::exists(run / "report.md"));
}

// The report's "How to reproduce" is a command a shell runs again as it
// stands, under a new run id, even with a quote in a value.
TEST_F(RunE2e, TheReportsReproduceCommandRunsAgain) {
  const std::string results = Results("the team's runs");
  CommandResult r = Run(std::string("run ") + kRunSpec +
                        " --engine sim --run-id first --set 'sweep.pp=[1, 2]'"
                        " --set sweep.concurrency=[8] --set \"experiment.results_dir=" +
                        results + "\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string report = ReadText(fs::path(results) / "first" / "report.md");
  const size_t block = report.find("## How to reproduce\n\n```sh\n");
  ASSERT_NE(block, std::string::npos) << report;
  const size_t start = report.find("ppsearch run ", block);
  ASSERT_NE(start, std::string::npos) << report;
  const std::string command = report.substr(start, report.find('\n', start) - start);
  EXPECT_NE(command.find("'sweep.pp=[1, 2]'"), std::string::npos) << command;
  EXPECT_EQ(command.find("--run-id"), std::string::npos) << command;
  CommandResult again = Run(command.substr(std::string("ppsearch ").size()));
  ASSERT_EQ(again.exit_code, 0) << command << "\n" << again.err;
  int runs = 0;
  for (const auto& e : fs::directory_iterator(results)) runs += e.is_directory() ? 1 : 0;
  EXPECT_EQ(runs, 2);
}

// Ctrl-C stops after the current sample (exit 3), and the resume command
// it prints runs as printed, through a shell, though the run's directory
// holds a space and a quote.
TEST_F(RunE2e, AnInterruptedRunsResumeCommandRunsAsPrinted) {
  const std::string results = Results("the team's runs");
  const std::string command =
      bin_ + " run " + kRunSpec +
      " --engine sim --run-id cut --pace-ms 1500 --set 'sweep.pp=[1, 2]'"
      " --set sweep.concurrency=[8] --set sweep.repeats=2 --set \"experiment.results_dir=" +
      results + "\"";
  CommandResult cut = InterruptOnceASampleCompleted(command, results + "/cut/manifest.jsonl");
  EXPECT_NE(cut.out.find("rc=3"), std::string::npos) << cut.out << cut.err;
  const std::string hint = "interrupted; resume with: ";
  const size_t at = cut.err.find(hint);
  ASSERT_NE(at, std::string::npos) << cut.err;
  const std::string resume =
      cut.err.substr(at + hint.size(), cut.err.find('\n', at) - at - hint.size());
  EXPECT_NE(resume.find("'" + results.substr(0, results.find('\'')) + "'\\''"), std::string::npos)
      << resume;
  ASSERT_EQ(resume.rfind("ppsearch run --resume ", 0), 0u) << resume;
  CommandResult again =
      RunCommand("timeout 120 " + bin_ + resume.substr(std::string("ppsearch").size()));
  EXPECT_EQ(again.exit_code, 0) << resume << "\n" << again.err;
  EXPECT_NE(again.err.find("already complete"), std::string::npos) << again.err;
}

// An interrupt after the last sample (here during the pause after it) has
// nothing left to stop: the run ends as complete, with its report and exit
// 0, and says why after announcing the stop.
TEST_F(RunE2e, AnInterruptAfterTheLastSampleEndsTheRunComplete) {
  const std::string results = Results("late");
  const std::string command = bin_ + " run " + kRunSpec +
                              " --engine sim --run-id late --pace-ms 3000 --set 'sweep.pp=[1]'"
                              " --set sweep.concurrency=[8] --set sweep.repeats=1"
                              " --set \"experiment.results_dir=" +
                              results + "\"";
  CommandResult late = InterruptOnceASampleCompleted(command, results + "/late/manifest.jsonl");
  EXPECT_NE(late.out.find("rc=0"), std::string::npos) << late.out << late.err;
  EXPECT_NE(late.err.find("interrupted: stopping after the current sample\n"), std::string::npos)
      << "the simulated engine starts no server: " << late.err;
  EXPECT_NE(late.err.find("the interrupt came after the last sample: the run is complete"),
            std::string::npos)
      << late.err;
  EXPECT_EQ(late.err.find("interrupted; resume with"), std::string::npos) << late.err;
  EXPECT_TRUE(fs::exists(results + "/late/report.md"));
}

// A report asked for while the run still goes is refused: written then,
// it would be replaced by the run's own, or replace it with fewer samples.
TEST_F(RunE2e, AReportOfARunStillGoingIsRefused) {
  const std::string results = Results("live");
  const std::string run_dir = results + "/going";
  const std::string manifest = launch::ShellQuote(run_dir + "/manifest.jsonl");
  // Bounded: the report is asked for once a sample completed (polled for at
  // most 30 s) while 3 more samples of 2 s of pace each remain; `timeout`
  // ends the run.
  CommandResult r =
      RunCommand("timeout 60 " + bin_ + " run " + kRunSpec +
                 " --engine sim --run-id going --pace-ms 2000 --set 'sweep.pp=[1, 2]' "
                 "--set sweep.concurrency=[8] --set sweep.repeats=2 --set experiment.results_dir=" +
                 results + " >/dev/null 2>&1 & pid=$!; for i in $(seq 300); do grep -q completed " +
                 manifest + " 2>/dev/null && break; sleep 0.1; done; " + bin_ + " report " +
                 run_dir + " >/dev/null; echo \"report=$?\"; kill -INT $pid; wait $pid");
  EXPECT_NE(r.out.find("report=2"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("error: run directory " + run_dir +
                       " is in use by another ppsearch process (pid "),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(run_dir + "/report.md"));
  // Once the run stopped, the report is built.
  CommandResult after = Run("report " + run_dir);
  EXPECT_EQ(after.exit_code, 3) << after.err;  // incomplete
  EXPECT_TRUE(fs::exists(run_dir + "/report.md"));
}

// The relay a server's output passes through on its way to live/: the key
// where it is a value, a line at a time, the last line without its newline
// too; ppsearch's own words stay although the key reads "ppsearch".
TEST_F(RunE2e, TheLogRelayRedactsTheKeyWhereItIsAValue) {
  const std::string secrets =
      R"([{"names":["--api-key","api_key","engine.args.api-key"],"value":"ppsearch"}])";
  const fs::path input = dir_ / "server.out";
  {
    std::ofstream out(input);
    out << "server_args=ServerArgs(api_key='ppsearch', tp_size=8)\n"
           "[ppsearch] stopping the server\nlast --api-key ppsearch";
  }
  CommandResult r = RunCommand("PPSEARCH_REDACT_SECRETS='" + secrets + "' " + bin_ +
                               " redact-log < " + input.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "server_args=ServerArgs(api_key='<redacted>', tp_size=8)\n"
            "[ppsearch] stopping the server\nlast --api-key <redacted>");
  CommandResult unset = Run("redact-log < " + input.string());
  EXPECT_EQ(unset.exit_code, 2);
  EXPECT_EQ(unset.err, "error: PPSEARCH_REDACT_SECRETS is not set\n");
  CommandResult typo = Run("redact-lo");
  EXPECT_EQ(typo.err.find("redact-log"), std::string::npos) << typo.err;  // not offered
}

TEST_F(RunE2e, KilledRunResumesToTheSameSummary) {
  CommandResult full = Run(std::string("run ") + kRunSpec +
                           " --engine sim --set experiment.results_dir='" + Results("full") + "'");
  ASSERT_EQ(full.exit_code, 0) << full.err;

  const std::string results = Results("killed");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    std::string set = "experiment.results_dir='" + results + "'";
    ::execl(bin_.c_str(), bin_.c_str(), "run", kRunSpec, "--engine", "sim", "--set", set.c_str(),
            "--pace-ms", "200", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Bounded wait until a few samples are complete, then SIGKILL mid-run.
  fs::path run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(results) && !fs::is_empty(results)) {
      run = RunDir(results);
      if (fs::exists(run / "manifest.jsonl") && CountCompleted(run) >= 5) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_FALSE(run.empty());
  const int done_before = CountCompleted(run);
  ASSERT_GE(done_before, 5);
  ASSERT_LT(done_before, 24);

  CommandResult resumed = Run(std::string("run ") + kRunSpec + " --resume " + run.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(CountCompleted(run), 24) << "every sample completed exactly once";
  EXPECT_EQ(ReadText(run / "summary.csv"), ReadText(RunDir(Results("full")) / "summary.csv"));
}

TEST_F(RunE2e, InjectedFailuresExcludeTheirLayoutsWithReasons) {
  const std::string inject =
      "sim.inject=[{sample=\"pp2-tp16-ep4_c8_r2\", fault=\"lose_requests\", count=3}, "
      "{sample=\"pp4-tp8-ep4_c16_r1\", fault=\"oom\"}]";
  CommandResult r =
      Run(std::string("run ") + kRunSpec + " --engine sim --set experiment.results_dir='" +
          Results("f") + "' --set '" + inject + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;  // PP8 and PP1 still qualify
  const std::string report = ReadText(RunDir(Results("f")) / "report.md");
  EXPECT_NE(report.find("37/40"), std::string::npos) << report;
  EXPECT_NE(report.find("out of memory"), std::string::npos) << report;
  EXPECT_NE(report.find("PP2/TP16/EP4"), std::string::npos);
  EXPECT_NE(report.find("PP4/TP8/EP4"), std::string::npos);
}

// A repeat in which no request completed measured no figure: its results.csv
// cells are empty and it is in no median; a point with no such repeat left
// has no medians, shown as '-', and a later calibrate or compare reads the
// summary as a row without them.
TEST_F(RunE2e, ARepeatThatCompletedNoRequestIsInNoMedian) {
  const std::string inject =
      "sim.inject=[{sample=\"pp4-tp8-ep4_c8_r1\", fault=\"lose_requests\", count=40}, "
      "{sample=\"pp8-tp4-ep4_c8_r1\", fault=\"lose_requests\", count=40}, "
      "{sample=\"pp8-tp4-ep4_c8_r2\", fault=\"lose_requests\", count=40}]";
  CommandResult r = Run(std::string("run ") + kRunSpec +
                        " --engine sim --set sweep.pp=[1,4,8] --set sweep.concurrency=[8]"
                        " --set sweep.repeats=2 --set experiment.results_dir='" +
                        Results("z") + "' --set '" + inject + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;  // PP1 qualifies
  const fs::path run = RunDir(Results("z"));
  auto Cell = [](const CsvTable& t, size_t row, const char* column) {
    return t.rows[row][static_cast<size_t>(t.Column(column))];
  };
  const CsvTable results = *ReadCsv((run / "results.csv").string());
  for (size_t i = 0; i < results.rows.size(); ++i) {
    if (Cell(results, i, "sample") != "pp4-tp8-ep4_c8_r1") continue;
    EXPECT_EQ(Cell(results, i, "input_tps"), "");
    EXPECT_EQ(Cell(results, i, "ttft_p50_s"), "");
  }
  const CsvTable summary = *ReadCsv((run / "summary.csv").string());
  double pp4_tps = 0, pp4_repeat_tps = 0;
  for (size_t i = 0; i < results.rows.size(); ++i)
    if (Cell(results, i, "sample") == "pp4-tp8-ep4_c8_r2")
      pp4_repeat_tps = std::stod(Cell(results, i, "input_tps"));
  for (size_t i = 0; i < summary.rows.size(); ++i) {
    if (Cell(summary, i, "pp") == "4") {
      pp4_tps = std::stod(Cell(summary, i, "input_tps_median"));
      EXPECT_EQ(Cell(summary, i, "input_tps_spread"), "");  // over one repeat: unknown
    }
    if (Cell(summary, i, "pp") == "8") {
      EXPECT_EQ(Cell(summary, i, "valid_repeats"), "0");
      for (const char* column : {"input_tps_median", "input_tps_spread", "ttft_p50_s_median",
                                 "ttft_p95_s_median", "e2e_p99_s_median"})
        EXPECT_EQ(Cell(summary, i, column), "") << column;
      EXPECT_EQ(Cell(summary, i, "input_tps_vs_baseline"), "");
    }
  }
  EXPECT_GT(pp4_repeat_tps, 0);
  EXPECT_DOUBLE_EQ(pp4_tps, pp4_repeat_tps);  // the repeat that measured it, alone
  const std::string report = ReadText(run / "report.md");
  EXPECT_NE(report.find("| 8 / 4 / 4             |   8 |         - |        - |        - |"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("-100.00%"), std::string::npos) << report;
  // Nor a stability it did not measure: one repeat of PP4 has figures, none of PP8.
  EXPECT_EQ(report.find("PP8/TP4/EP4 input TPS varies"), std::string::npos) << report;
  EXPECT_NE(report.find("PP4/TP8/EP4: fewer than two repeats with figures at C=8, so how much it "
                        "varies there is unknown."),
            std::string::npos)
      << report;
  CommandResult cal = Run(std::string("calibrate ") + kRunSpec +
                          " --set sweep.pp=[1,4,8] --set sweep.concurrency=[8] --measured " +
                          run.string() + " -o " + (dir_ / "cal.json").string());
  EXPECT_EQ(cal.exit_code, 0) << cal.err;
  CommandResult cmp = Run("compare " + run.string() + " " + run.string());
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_EQ(cmp.out.find("PP8/TP4/EP4 C=8"), std::string::npos) << cmp.out;
}

// A decode workload (64 output tokens) on two layouts: a TPOT p99 limit
// between their measured values qualifies the faster one and rejects the
// other, and both reports say which limit, where, and by how much.
TEST_F(RunE2e, TpotSlaQualifiesOneLayoutAndTheReportSaysWhy) {
  const std::string small =
      std::string(
          " --engine sim --set sweep.pp=[4,8] --set sweep.concurrency=[8] --set "
          "sweep.repeats=1 --set workload.requests=8 --set workload.output_tokens=64") +
      " --set experiment.results_dir='";
  CommandResult free = Run(std::string("run ") + kRunSpec + small + Results("free") + "'");
  ASSERT_EQ(free.exit_code, 0) << free.err;
  Result<CsvTable> summary = ReadCsv((RunDir(Results("free")) / "summary.csv").string());
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->rows.size(), 2u);
  const int column = summary->Column("tpot_p99_s_median");
  ASSERT_GE(column, 0);
  const double pp4 = std::stod(summary->rows[0][column]);
  const double pp8 = std::stod(summary->rows[1][column]);
  ASSERT_GT(std::abs(pp4 - pp8), 0.01 * std::min(pp4, pp8)) << pp4 << " " << pp8;
  const double limit_ms = std::sqrt(pp4 * pp8) * 1000;
  const std::string slower = pp4 > pp8 ? "PP4/TP8/EP4" : "PP8/TP4/EP4";
  const std::string faster = pp4 > pp8 ? "PP8/TP4/EP4" : "PP4/TP8/EP4";

  CommandResult r = Run(std::string("run ") + kRunSpec + small + Results("sla") +
                        "' --set decision.tpot_p99_ms=" + std::to_string(limit_ms));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run = RunDir(Results("sla"));
  const std::string report = ReadText(run / "report.md");
  EXPECT_NE(report.find("**Primary: " + faster + "**"), std::string::npos) << report;
  EXPECT_NE(report.find("**Fallback: none**"), std::string::npos) << report;
  const std::string why = slower + ": misses the SLA at C=8: TPOT p99 ";
  EXPECT_NE(report.find(why), std::string::npos) << report;
  EXPECT_NE(report.find("> tpot_p99_ms"), std::string::npos) << report;
  EXPECT_NE(report.find("| Over by"), std::string::npos) << report;  // the table of misses
  const std::string html = ReadText(run / "report.html");
  EXPECT_NE(html.find(why), std::string::npos);
  EXPECT_NE(html.find("id=\"decode-tradeoff\""), std::string::npos);
  const std::string json = ReadText(run / "summary.json");
  EXPECT_NE(json.find("\"sla_misses\""), std::string::npos);
  EXPECT_NE(json.find("\"key\": \"tpot_p99_ms\""), std::string::npos) << json;
}

// At mem-fraction-static 0.9 the pools leave PP1's full chunk no room (the
// planned peak passes the GPU): its server runs out of memory on the first
// chunk, as SGLang's would. Every request fails, the node's log has the
// error, and the GPU snapshot after the load shows the dead server's GPUs
// released, never more than the GPU.
TEST_F(RunE2e, ALayoutWhoseBatchesOutgrowTheGpuRunsOutOfMemory) {
  CommandResult r = Run(std::string("run ") + kRunSpec +
                        " --engine sim --set sweep.pp=[1] --set sweep.concurrency=[8]"
                        " --set sweep.repeats=1 --set engine.args.mem-fraction-static=0.9"
                        " --set experiment.results_dir='" +
                        Results("o") + "'");
  EXPECT_EQ(r.exit_code, 4) << r.err;  // none qualifies
  const fs::path run = RunDir(Results("o"));
  const std::string report = ReadText(run / "report.md");
  EXPECT_NE(report.find("completed 0/40 requests"), std::string::npos) << report;
  EXPECT_NE(report.find("CUDA out of memory in service/pp1-tp32-ep4_c8_r1/"), std::string::npos)
      << report;
  int gpus = 0;
  for (const auto& e : fs::directory_iterator(run / "gpu" / "pp1-tp32-ep4_c8_r1")) {
    std::istringstream in(ReadText(e.path()));
    for (std::string line; std::getline(in, line); ++gpus) {
      // index, uuid, name, used, total
      std::vector<std::string> cells;
      std::istringstream fields(line);
      for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
      ASSERT_GE(cells.size(), 5u) << line;
      EXPECT_EQ(std::stod(cells[3]), 0) << line;
    }
  }
  EXPECT_EQ(gpus, 32);
}

TEST_F(RunE2e, NoneQualifiesReturnsItsExitCode) {
  CommandResult r =
      Run(std::string("run ") + kRunSpec + " --engine sim --set experiment.results_dir='" +
          Results("n") + "' --set decision.min_headroom_mib=60000");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(ReadText(RunDir(Results("n")) / "report.md").find("one qualifies"), std::string::npos);
}

TEST_F(RunE2e, DryRunPrintsEverySampleAndStartsNothing) {
  CommandResult r =
      Run(std::string("run ") + kRunSpec +
          " --engine sim --dry-run --set experiment.results_dir='" + Results("d") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("24 samples"), std::string::npos);
  EXPECT_NE(r.out.find("pp1-tp32-ep4_c8_r1"), std::string::npos);
  EXPECT_NE(r.out.find("--tp-size 4 --pp-size 8 --ep-size 4 --nnodes 4 --node-rank 3"),
            std::string::npos);
  EXPECT_NE(r.out.find("local/sglang:kimi-k3-sm120-flashinfer-mxfp4-phase5"), std::string::npos);
  EXPECT_FALSE(fs::exists(Results("d")));
}

// A replay of a CSV of medians without TTFTs: results.csv marks each
// sample synthesized and leaves every figure the file did not hold empty,
// as summary.json's checks leave its TTFT null.
TEST_F(RunE2e, AReplayOfACsvWritesOnlyTheFiguresItHeld) {
  const fs::path csv = fs::path(Results("m")).parent_path() / "medians.csv";
  fs::create_directories(csv.parent_path());
  {
    std::ofstream out(csv);
    out << "pp,tp,ep,concurrency,input_tps_median,peak_gpu_mib,gpu_total_mib\n"
           "4,8,4,8,4100,80000,97871\n8,4,4,8,3900,82000,97871\n";
  }
  CommandResult r =
      Run(std::string("run ") + kRunSpec + " --engine replay:" + csv.string() +
          " --set 'sweep.pp=[4,8]' --set 'sweep.concurrency=[8]' --set sweep.repeats=2 --set "
          "experiment.results_dir='" +
          Results("m") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run = RunDir(Results("m"));
  const CsvTable results = *ReadCsv((run / "results.csv").string());
  ASSERT_EQ(results.rows.size(), 4u);
  for (const std::vector<std::string>& row : results.rows) {
    auto cell = [&](const char* column) {
      return row[static_cast<size_t>(results.Column(column))];
    };
    EXPECT_EQ(cell("synthesized"), "true");
    EXPECT_NE(cell("input_tps"), "");
    for (const char* unknown :
         {"ttft_mean_s", "ttft_p50_s", "ttft_p95_s", "ttft_p99_s", "e2e_p50_s", "goodput_rps"})
      EXPECT_EQ(cell(unknown), "") << unknown;
  }
  const nlohmann::json summary = nlohmann::json::parse(ReadText(run / "summary.json"));
  ASSERT_EQ(summary["checks"]["samples"].size(), 4u);
  for (const nlohmann::json& s : summary["checks"]["samples"]) {
    EXPECT_TRUE(s["input_tps"].is_number()) << s.dump();
    EXPECT_TRUE(s["ttft_p50_s"].is_null()) << s.dump();
  }
}

TEST_F(RunE2e, AReplayOfARunGivesItsSummaryAndResumesWithItsSource) {
  const std::string small =
      " --set 'sweep.pp=[4,8]' --set 'sweep.concurrency=[8]' --set "
      "sweep.repeats=2 --set workload.requests=8 --set "
      "experiment.results_dir='" +
      Results("r") + "'";
  CommandResult sim = Run(std::string("run ") + kRunSpec + " --engine sim --run-id sim" + small);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const fs::path source = fs::path(Results("r")) / "sim";
  CommandResult replay = Run(std::string("run ") + kRunSpec +
                             " --engine replay:" + source.string() + " --run-id replay" + small);
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const fs::path replayed = fs::path(Results("r")) / "replay";
  EXPECT_EQ(ReadText(replayed / "summary.csv"), ReadText(source / "summary.csv"));
  EXPECT_NE(replay.out.find("Every sample was **replayed** from the run directory `" +
                            source.string() + "`"),
            std::string::npos)
      << replay.out;

  // "replay:PATH" comes back from run.json on resume; another engine is refused.
  CommandResult resumed = Run("run --resume " + replayed.string());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("0 samples run, 0 not ok, 4 already complete"), std::string::npos)
      << resumed.err;
  CommandResult other = Run("run --resume " + replayed.string() + " --engine sim");
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE(other.err.find("was run with --engine replay:" + source.string() +
                           "; resume it with the same engine"),
            std::string::npos)
      << other.err;

  CommandResult bogus = Run(std::string("run ") + kRunSpec + " --engine replay" + small);
  EXPECT_NE(bogus.exit_code, 0);
  EXPECT_NE(bogus.err.find("--engine: expected sim, sglang or replay:PATH (a run directory or a "
                           "CSV of medians), got 'replay'"),
            std::string::npos)
      << bogus.err;
}

}  // namespace
}  // namespace ppsearch::testing

namespace ppsearch::testing {
namespace {

class RunAdaptiveE2e : public CliTest {};

// What an adaptive run cannot do is refused before a run directory exists.
TEST_F(RunAdaptiveE2e, RefusalsComeBeforeAnySample) {
  const std::string results = (dir_ / "r").string();
  CommandResult goodput =
      Run(std::string("run examples/kimi-k3-pp-search.toml --engine sim --adaptive") +
          " --set experiment.results_dir='" + results + "' --set decision.objective=goodput");
  EXPECT_EQ(goodput.exit_code, 2);
  EXPECT_NE(goodput.err.find("decision.objective"), std::string::npos) << goodput.err;
  EXPECT_NE(goodput.err.find("an adaptive run chooses by the input_tps or ttft_p50 objective"),
            std::string::npos)
      << goodput.err;
  EXPECT_FALSE(std::filesystem::exists(results));

  // A sample budget below one step's repeats could measure nothing.
  CommandResult budget =
      Run(std::string("run examples/kimi-k3-pp-search.toml --engine sim --adaptive") +
          " --set experiment.results_dir='" + results + "' --set adaptive.budget_samples=2");
  EXPECT_EQ(budget.exit_code, 2);
  EXPECT_NE(budget.err.find("--set adaptive.budget_samples=2: key 'adaptive.budget_samples': a "
                            "budget of 2 samples is less than one step of an adaptive run (a "
                            "point's 3 repeats, sweep.repeats), so it could measure nothing; "
                            "give at least 3, or 0 for no sample budget"),
            std::string::npos)
      << budget.err;
  EXPECT_FALSE(std::filesystem::exists(results));

  // A sweep run is resumed as one: --adaptive cannot change how it chooses.
  CommandResult full = Run(std::string("run examples/kimi-k3-pp-search.toml --engine sim") +
                           " --set experiment.results_dir='" + results + "' --run-id full");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  CommandResult resumed = Run("run --resume " + results + "/full --adaptive");
  EXPECT_EQ(resumed.exit_code, 2);
  EXPECT_NE(resumed.err.find("resume it without --adaptive"), std::string::npos) << resumed.err;
}

TEST_F(RunAdaptiveE2e, AdaptiveEvalPrintsEachScenarioAndTheSummary) {
  CommandResult r =
      Run("adaptive-eval examples/kimi-k3-pp-search.toml --scenarios 1 --seed 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["agrees"], true) << r.out;
  EXPECT_LT(j["results"][0]["adaptive"]["samples"].get<int>(),
            j["results"][0]["full"]["samples"].get<int>());
  CommandResult bad = Run("adaptive-eval examples/kimi-k3-pp-search.toml --hidden 2");
  EXPECT_NE(bad.exit_code, 0);
}

// An objective no adaptive run chooses by is refused before any scenario's
// full sweep is replayed into the work directory, with what to do here.
TEST_F(RunAdaptiveE2e, AdaptiveEvalRefusesAnObjectiveBeforeAnyWork) {
  const std::string work = (dir_ / "work").string();
  CommandResult r = Run("adaptive-eval examples/kimi-k3-pp-search.toml --scenarios 1 --work-dir '" +
                        work + "' --set decision.objective=output_tps_per_gpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("key 'decision.objective': an adaptive run chooses by the input_tps or "
                       "ttft_p50 objective, not output_tps_per_gpu (set one with --set "
                       "decision.objective=input_tps to score the adaptive run)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(!fs::exists(work) || fs::is_empty(work)) << "no scenario ran";
  // An SLA limit the replayed truths cannot hold: every layout would be
  // excluded in both runs, and their agreement would mean nothing.
  CommandResult sla =
      Run("adaptive-eval examples/kimi-k3-pp-search.toml --scenarios 1 --work-dir '" + work +
          "' --set decision.ttft_p99_s=30");
  EXPECT_EQ(sla.exit_code, 2);
  EXPECT_NE(sla.err.find("key 'decision.ttft_p99_s': a limit on TTFT p99 cannot be judged on "
                         "adaptive-eval's truths (CSVs of medians), whose replayed samples hold "
                         "input_tps, ttft_p50_s, ttft_p95_s at most"),
            std::string::npos)
      << sla.err;
  EXPECT_TRUE(!fs::exists(work) || fs::is_empty(work)) << "no scenario ran";
}

}  // namespace
}  // namespace ppsearch::testing
