// [engine.disaggregation] and the [sweep.prefill] / [sweep.decode] pools:
// parsing, the exact errors for the common mistakes, and the engine each
// pool runs with.

#include "spec/disaggregation_section.h"

#include <gtest/gtest.h>

#include <string>

#include "spec/spec_parser.h"

namespace ppsearch::spec {
namespace {

// Lines: 1-2 experiment, 3-5 cluster, 6-8 engine, 9 [engine.disaggregation]
// and its keys from 10, then `sweep` (its first line is [sweep]).
std::string PdSpecText(const std::string& disagg, const std::string& sweep) {
  return "[experiment]\nname = \"t\"\n"                                              // 1-2
         "[cluster]\ngpus_per_node = 8\nhosts = [\"n0\", \"n1\", \"n2\", \"n3\"]\n"  // 3-5
         "[engine]\nmodel_config = \"m.json\"\nargs = {page-size = 1}\n"             // 6-8
         "[engine.disaggregation]\n" +                                               // 9
         disagg +
         "\n" + sweep + "\n[workload]\ninput_tokens = 100\nrequests = 4\n";
}

const char* const kPools =
    "[sweep]\nconcurrency = [8]\n"
    "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\nargs = {chunked-prefill-size = 16384}\n"
    "[sweep.decode]\nhosts = [\"n1\", \"n2\", \"n3\"]\ninstances = 3\ntp = 8\ndp = 8\n";

std::string PdErrorOf(const std::string& text) {
  Result<ppsearch::spec::Spec> s = ParseSpec(text, "/s/spec.toml", {});
  return s.ok() ? "" : s.error().message;
}

Disaggregation MustRead(const std::string& text) {
  Result<std::optional<Disaggregation>> d = ParseDisaggregation(text, "/s/spec.toml", {});
  EXPECT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d.ok() && d->has_value());
  return d.ok() && d->has_value() ? **d : Disaggregation{};
}

TEST(SpecDisaggregation, PoolsAndTransferSettingsParse) {
  const std::string text = PdSpecText(
      "transfer_backend = \"nixl\"\nib_device = \"mlx5_0,mlx5_1\"\n"
      "router_policy = \"round_robin\"\nrouter_port = 9000",
      kPools);
  Result<ppsearch::spec::Spec> s = ParseSpec(text, "/s/spec.toml", {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(IsDisaggregated(*s));
  // The sweep holds the deployment alone, written where its prefill pool is.
  ASSERT_EQ(s->sweep.layouts.size(), 1u);
  EXPECT_EQ(s->sweep.layouts[0].Label(), "1P3D PP1/TP8/EP1 + 3xPP1/TP8/EP1/DP8");
  EXPECT_EQ(s->sweep.layouts[0].origin.Position(), "/s/spec.toml:16:1");
  EXPECT_EQ(s->sweep.layouts[0].gpus(), 32);
  ASSERT_TRUE(s->disaggregation.has_value());
  const Disaggregation d = MustRead(text);
  EXPECT_EQ(d.prefill.role, "prefill");
  EXPECT_EQ(d.prefill.hosts, std::vector<int>{0});
  EXPECT_EQ(d.prefill.layout.Label(), "PP1/TP8/EP1");
  EXPECT_EQ(d.decode.hosts, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(d.decode.layout.Label(), "3xPP1/TP8/EP1/DP8");
  EXPECT_EQ(d.decode.origin.Position(), "/s/spec.toml:20:1");
  EXPECT_EQ(d.transfer.transfer_backend, "nixl");
  EXPECT_EQ(d.transfer.ib_device, "mlx5_0,mlx5_1");
  EXPECT_EQ(d.transfer.bootstrap_port, 8998);  // SGLang's default
  EXPECT_EQ(d.transfer.router_policy, "round_robin");
  EXPECT_EQ(d.transfer.router_port, 9000);
}

// The [sim] inject table names a deployment's samples by its slug.
TEST(SpecDisaggregation, InjectNamesTheDeploymentsSamples) {
  const std::string text =
      PdSpecText("", kPools) +
      "[sim]\ninject = [{sample = \"1p3d-pp1-tp8-ep1+3x-pp1-tp8-ep1-dp8_c8_r1\", fault = "
      "\"oom\"}]\n";
  Result<ppsearch::spec::Spec> s = ParseSpec(text, "/s/spec.toml", {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->sim.inject.size(), 1u);
  const std::string wrong = PdSpecText("", kPools) +
                            "[sim]\ninject = [{sample = \"pp1-tp8-ep1_c8_r1\", fault = \"oom\"}]\n";
  EXPECT_NE(PdErrorOf(wrong).find("1p3d-pp1-tp8-ep1+3x-pp1-tp8-ep1-dp8_c8_r1"), std::string::npos)
      << PdErrorOf(wrong);
}

TEST(SpecDisaggregation, OverridesReachThePools) {
  Result<std::optional<Disaggregation>> d =
      ParseDisaggregation(PdSpecText("", kPools), "/s/spec.toml", {"sweep.decode.instances=1"});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)->decode.layout.instances, 1);
}

TEST(SpecDisaggregation, AnAggregatedSpecHasNone) {
  Result<std::optional<Disaggregation>> d = ParseDisaggregation(
      "[experiment]\nname = \"t\"\n[cluster]\nhosts = [\"n0\"]\n[engine]\n"
      "model_config = \"m.json\"\n[sweep]\npp = [1]\nconcurrency = [8]\n"
      "[workload]\ninput_tokens = 100\nrequests = 4\n",
      "/s/spec.toml", {});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(d->has_value());
}

TEST(SpecDisaggregation, EachPoolRunsWithItsArgsAndSglangsPdFlags) {
  const std::string text = PdSpecText("ib_device = \"mlx5_0\"", kPools);
  Result<ppsearch::spec::Spec> s = ParseSpec(text, "/s/spec.toml", {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  const Disaggregation d = MustRead(text);
  const EngineSpec prefill = PoolEngineSpec(*s, d, d.prefill);
  EXPECT_EQ(prefill.ArgInt("chunked-prefill-size"), 16384);
  EXPECT_EQ(prefill.ArgInt("page-size"), 1);  // [engine.args] still apply
  EXPECT_EQ(prefill.ArgString("disaggregation-mode"), "prefill");
  EXPECT_EQ(prefill.ArgString("disaggregation-transfer-backend"), "mooncake");
  EXPECT_EQ(prefill.ArgInt("disaggregation-bootstrap-port"), 8998);
  EXPECT_EQ(prefill.ArgString("disaggregation-ib-device"), "mlx5_0");
  const EngineSpec decode = PoolEngineSpec(*s, d, d.decode);
  EXPECT_EQ(decode.ArgString("disaggregation-mode"), "decode");
  EXPECT_FALSE(decode.ArgInt("chunked-prefill-size").has_value());
}

TEST(SpecDisaggregation, OverlappingPoolsAreRefused) {
  EXPECT_EQ(PdErrorOf(PdSpecText("",
                                 "[sweep]\nconcurrency = [8]\n"
                                 "[sweep.prefill]\nhosts = [\"n0\", \"n1\"]\ntp = 16\n"
                                 "[sweep.decode]\nhosts = [\"n2\", \"n1\"]\ntp = 16\n")),
            "/s/spec.toml:17:16: key 'sweep.decode.hosts[1]': host 'n1' is in the prefill pool "
            "too; the pools run on disjoint nodes");
}

TEST(SpecDisaggregation, APoolHostMustBeInTheCluster) {
  EXPECT_EQ(PdErrorOf(PdSpecText("",
                                 "[sweep]\nconcurrency = [8]\n"
                                 "[sweep.prefill]\nhosts = [\"n9\"]\ntp = 8\n"
                                 "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\n")),
            "/s/spec.toml:14:10: key 'sweep.prefill.hosts[0]': host 'n9' is not in "
            "cluster.hosts ('n0', 'n1', 'n2', 'n3')");
}

TEST(SpecDisaggregation, ABackendSglangLacksIsRefused) {
  // server_args.py DISAGG_TRANSFER_BACKEND_CHOICES has no "ucx".
  EXPECT_EQ(PdErrorOf(PdSpecText("transfer_backend = \"ucx\"", kPools)),
            "/s/spec.toml:10:20: key 'engine.disaggregation.transfer_backend': SGLang has no "
            "transfer backend 'ucx' (its --disaggregation-transfer-backend takes 'mooncake', "
            "'nixl', 'ascend', 'fake', 'mori', 'mooncake_tcp'); expected 'mooncake' or 'nixl'");
  // "fake" is SGLang's, but moves no KV (and handle_pd_disaggregation
  // refuses it on a prefill server).
  EXPECT_EQ(PdErrorOf(PdSpecText("transfer_backend = \"fake\"", kPools)),
            "/s/spec.toml:10:20: key 'engine.disaggregation.transfer_backend': 'fake' is an "
            "SGLang transfer backend ppsearch does not plan (it plans KV transfer over RDMA "
            "between NVIDIA GPU nodes); expected 'mooncake' or 'nixl'");
}

TEST(SpecDisaggregation, ARouterPolicyTheRouterLacksIsRefused) {
  EXPECT_EQ(PdErrorOf(PdSpecText("router_policy = \"least_load\"", kPools)),
            "/s/spec.toml:10:17: key 'engine.disaggregation.router_policy': expected one of "
            "'random', 'round_robin', 'cache_aware', 'power_of_two', 'bucket', 'manual', "
            "'consistent_hashing', 'prefix_hash', got 'least_load'");
}

TEST(SpecDisaggregation, TheRoutersProgramDefaultsToSglangsAndTakesPlaceholders) {
  EXPECT_EQ(MustRead(PdSpecText("", kPools)).transfer.router_command,
            (std::vector<std::string>{"python3", "-m", "sglang_router.launch_router"}));
  EXPECT_EQ(MustRead(PdSpecText("router_command = [\"{ppsearch}\", \"router-sim\"]", kPools))
                .transfer.router_command,
            (std::vector<std::string>{"{ppsearch}", "router-sim"}));
  EXPECT_EQ(PdErrorOf(PdSpecText("router_command = [\"{ppsearch}\", \"{router}\"]", kPools)),
            "/s/spec.toml:10:18: key 'engine.disaggregation.router_command': unknown placeholder "
            "'{router}' (known: {host}, {node_rank}, {sample}, {port}, {spec_dir}, {ppsearch})");
}

TEST(SpecDisaggregation, PoolsAndLayoutListsDoNotMix) {
  EXPECT_EQ(PdErrorOf(PdSpecText("",
                                 "[sweep]\npp = [1]\nconcurrency = [8]\n"
                                 "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\n"
                                 "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\n")),
            "/s/spec.toml:12:6: key 'sweep.pp': a disaggregated sweep's layouts are "
            "[sweep.prefill] and [sweep.decode]; remove 'sweep.pp'");
}

TEST(SpecDisaggregation, BothPoolsAreNeeded) {
  EXPECT_EQ(PdErrorOf(PdSpecText("",
                                 "[sweep]\nconcurrency = [8]\n"
                                 "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\n")),
            "/s/spec.toml:11:1: missing required key 'sweep.decode'");
}

TEST(SpecDisaggregation, PdFlagsBelongToTheirTables) {
  EXPECT_EQ(PdErrorOf(PdSpecText("",
                                 "[sweep]\nconcurrency = [8]\n"
                                 "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\n"
                                 "args = {disaggregation-mode = \"decode\"}\n"
                                 "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\n")),
            "/s/spec.toml:16:9: key 'sweep.prefill.args.disaggregation-mode': the pools set it "
            "([sweep.prefill], [sweep.decode]); remove it from [sweep.prefill.args]");
}

TEST(SpecDisaggregation, TransferSettingsWithoutPoolsAreRefused) {
  EXPECT_EQ(
      PdErrorOf(PdSpecText("bootstrap_port = 9000", "[sweep]\npp = [1]\nconcurrency = [8]\n")),
      "/s/spec.toml:9:1: key 'engine.disaggregation': [engine.disaggregation] configures a "
      "disaggregated deployment, but the sweep has no [sweep.prefill] and [sweep.decode]");
}

TEST(SpecDisaggregation, TheBootstrapPortIsNotTheServersHttpPort) {
  EXPECT_EQ(PdErrorOf(PdSpecText("bootstrap_port = 30000", kPools)),
            "/s/spec.toml:10:18: key 'engine.disaggregation.bootstrap_port': 30000 is also "
            "cluster.server_port; a prefill server's bootstrap server and its HTTP server would "
            "both bind it");
}

}  // namespace
}  // namespace ppsearch::spec
