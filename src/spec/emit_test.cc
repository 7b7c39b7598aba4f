// A derived spec reads the same wherever it is saved: its sweep is the one
// asked for, its relative paths are absolute, its overrides are applied.

#include "spec/emit.h"

#include <gtest/gtest.h>

#include "spec/disaggregation_section.h"
#include "spec/spec_parser.h"

namespace ppsearch::spec {
namespace {

constexpr char kSource[] = R"(# a comment that is not kept
[experiment]
name = "x"
results_dir = "../results"
[cluster]
hosts = ["a"]
gpus_per_node = 8
[engine]
model_config = "../data/m.json"
command = ["python3", "{spec_dir}/launch.py"]
[engine.args]
chunked-prefill-size = 8192
[sweep]
pp = [1, 2]
ep = [4]
concurrency = [8]
[workload]
input_tokens = 100
requests = 4
)";

TEST(DeriveSpecText, ReplacesTheSweepAndMakesPathsAbsolute) {
  DerivedSweep sweep;
  LayoutSpec a;
  a.pp = 2;
  a.tp = 4;
  a.ep = 4;
  LayoutSpec b = a;
  b.pp = 1;
  b.tp = 8;
  b.dp = 2;
  LayoutSpec c = a;
  c.pp = 1;
  c.instances = 2;
  sweep.layouts = {a, b, c};
  sweep.concurrency = {8, 16};
  sweep.engine_args = {{"chunked-prefill-size", 4096}, {"max-running-requests", 32}};
  Result<std::string> text =
      DeriveSpecText(kSource, "/specs/dir/s.toml", {"workload.requests=16"}, sweep, "# derived\n");
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->rfind("# derived\n", 0), 0u);
  EXPECT_EQ(text->find("a comment"), std::string::npos);
  // Parsed from another directory, it means what the source meant.
  Result<Spec> s = ParseSpec(*text, "/elsewhere/derived.toml");
  ASSERT_TRUE(s.ok()) << s.error().message << "\n" << *text;
  EXPECT_EQ(s->experiment.results_dir, "/specs/results");
  EXPECT_EQ(s->engine.model_config, "/specs/data/m.json");
  EXPECT_EQ(s->engine.command[1], "/specs/dir/launch.py");
  ASSERT_EQ(s->sweep.layouts.size(), 3u);
  EXPECT_EQ(s->sweep.layouts[0].Label(), "PP2/TP4/EP4");
  EXPECT_EQ(s->sweep.layouts[1].Label(), "PP1/TP8/EP4/DP2");
  EXPECT_EQ(s->sweep.layouts[2].Label(), "2xPP1/TP4/EP4");
  EXPECT_EQ(s->sweep.concurrency, (std::vector<int>{8, 16}));
  EXPECT_EQ(s->engine.ArgInt("chunked-prefill-size"), 4096);
  EXPECT_EQ(s->engine.ArgInt("max-running-requests"), 32);
  EXPECT_EQ(s->workload.requests, 16);
  // A profile file the spec names (as `probe -o` writes one, no slash) is
  // found from the derived spec's directory too; a shipped name stays one.
  Result<std::string> overlay = DeriveSpecText(kSource, "/specs/dir/s.toml",
                                               {"cluster.hardware=\"measured.toml\""}, sweep, "");
  ASSERT_TRUE(overlay.ok()) << overlay.error().message;
  Result<Spec> o = ParseSpec(*overlay, "/elsewhere/derived.toml");
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->cluster.hardware, "/specs/dir/measured.toml");
  Result<std::string> shipped =
      DeriveSpecText(kSource, "/specs/dir/s.toml", {"cluster.hardware=\"h200\""}, sweep, "");
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(ParseSpec(*shipped, "/elsewhere/derived.toml")->cluster.hardware, "h200");
}

TEST(DeriveSpecText, WordFlagsAndRatesReadBackAsWritten) {
  DerivedSweep sweep;
  LayoutSpec a;
  a.tp = 8;
  a.ep = 8;
  sweep.layouts = {a};
  sweep.concurrency = {64};
  sweep.request_rate = 0.3;
  sweep.engine_args = {{"moe-a2a-backend", std::string("deepep")}};
  Result<std::string> text = DeriveSpecText(kSource, "/specs/dir/s.toml", {}, sweep, "");
  ASSERT_TRUE(text.ok()) << text.error().message;
  // 0.3 as a person writes it, not its 17-digit expansion.
  EXPECT_NE(text->find("request_rate = 0.3\n"), std::string::npos) << *text;
  Result<Spec> s = ParseSpec(*text, "/elsewhere/derived.toml");
  ASSERT_TRUE(s.ok()) << s.error().message << "\n" << *text;
  EXPECT_EQ(s->workload.request_rate, 0.3);
  EXPECT_EQ(s->engine.ArgString("moe-a2a-backend"), "deepep");
  EXPECT_EQ(s->engine.ArgInt("chunked-prefill-size"), 8192);  // the source's, kept
}

TEST(DeriveSpecText, ADisaggregatedDeploymentBecomesItsTwoPools) {
  const std::string source = std::string(kSource).replace(
      std::string(kSource).find("hosts = [\"a\"]"), 13, "hosts = [\"a\", \"b\", \"c\"]");
  DerivedSweep sweep;
  LayoutSpec p, d;
  p.tp = p.ep = 8;
  d.tp = d.ep = d.dp = 8;
  d.instances = 2;
  sweep.prefill = DerivedSweep::Pool{{"a"}, p};
  sweep.decode = DerivedSweep::Pool{{"b", "c"}, d};
  sweep.concurrency = {16, 64};
  Result<std::string> text = DeriveSpecText(source, "/specs/dir/s.toml", {}, sweep, "");
  ASSERT_TRUE(text.ok()) << text.error().message;
  Result<std::optional<Disaggregation>> pd = ParseDisaggregation(*text, "/elsewhere/pd.toml", {});
  ASSERT_TRUE(pd.ok()) << pd.error().message << "\n" << *text;
  ASSERT_TRUE(pd->has_value()) << *text;
  EXPECT_EQ((*pd)->prefill.layout.Label(), "PP1/TP8/EP8");
  EXPECT_EQ((*pd)->prefill.hosts, (std::vector<int>{0}));
  EXPECT_EQ((*pd)->decode.layout.Label(), "2xPP1/TP8/EP8/DP8");
  EXPECT_EQ((*pd)->decode.hosts, (std::vector<int>{1, 2}));
  // The source's layout lists are gone; its sweep keeps the load points.
  Result<Spec> s = ParseSpec(*text, "/elsewhere/pd.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(IsDisaggregated(*s));
  EXPECT_EQ(s->sweep.concurrency, (std::vector<int>{16, 64}));
  EXPECT_EQ(text->find("pp = [1, 2]"), std::string::npos) << *text;
}

// A layer split per pipeline size becomes [engine.pp_layer_partition]'s
// entry, beside the source's own entries.
TEST(DeriveSpecText, LayerSplitsBecomeTheTablesEntries) {
  DerivedSweep sweep;
  LayoutSpec a;
  a.pp = 2;
  a.tp = 4;
  a.ep = 4;
  sweep.layouts = {a};
  sweep.pp_layer_partitions[8] = {12, 12, 12, 12, 12, 11, 11, 11};
  const std::string source = std::string(kSource) + R"([engine.pp_layer_partition]
2 = [47, 46]
)";
  Result<std::string> text = DeriveSpecText(source, "/specs/dir/s.toml", {}, sweep, "");
  ASSERT_TRUE(text.ok()) << text.error().message;
  Result<Spec> s = ParseSpec(*text, "/elsewhere/derived.toml");
  ASSERT_TRUE(s.ok()) << s.error().message << "\n" << *text;
  EXPECT_EQ(
      s->engine.pp_layer_partitions,
      (std::map<int, std::vector<int>>{{2, {47, 46}}, {8, {12, 12, 12, 12, 12, 11, 11, 11}}}));

  // From a source without the table.
  Result<std::string> plain = DeriveSpecText(kSource, "/specs/dir/s.toml", {}, sweep, "");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  Result<Spec> p = ParseSpec(*plain, "/elsewhere/derived.toml");
  ASSERT_TRUE(p.ok()) << p.error().message << "\n" << *plain;
  EXPECT_EQ(p->engine.pp_layer_partitions,
            (std::map<int, std::vector<int>>{{8, {12, 12, 12, 12, 12, 11, 11, 11}}}));
}

TEST(DeriveSpecText, NotTomlIsAnError) {
  EXPECT_FALSE(DeriveSpecText("[sweep\n", "/s.toml", {}, {}, "").ok());
  EXPECT_FALSE(DeriveSpecText(kSource, "/s.toml", {"no-equals-sign"}, {}, "").ok());
}

}  // namespace
}  // namespace ppsearch::spec
