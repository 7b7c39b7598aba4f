#include "sglang/commands.h"

#include <gtest/gtest.h>

#include "launch/launchers.h"
#include "launch/process.h"
#include "sglang/nsys_profile.h"
#include "spec/spec_parser.h"

namespace ppsearch::sglang {
namespace {

spec::Spec Parse(const std::string& engine, const std::string& cluster_extra = "",
                 const std::string& workload_extra = "") {
  const std::string text =
      "[experiment]\nname = \"t\"\n[cluster]\nhosts = [{name = \"n0\", address = \"10.0.0.1\"}, "
      "\"n1\"]\ngpus_per_node = 4\n" +
      cluster_extra + "\n[engine]\nmodel_config = \"m.json\"\nmodel_path = \"/models/k3\"\n" +
      engine +
      "\n[sweep]\npp = [2]\nconcurrency = [8]\n[workload]\ninput_tokens = 100\nrequests = 4\n" +
      workload_extra;
  Result<spec::Spec> s = spec::ParseSpec(text, "/s/spec.toml", {});
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? *s : spec::Spec{};
}

evidence::SampleId MakeSample() {
  evidence::SampleId id;
  id.layout.pp = 2;
  id.layout.tp = 4;
  id.layout.ep = 2;
  id.concurrency = 8;
  id.repeat = 1;
  return id;
}
const evidence::SampleId kSample = MakeSample();

TEST(ServerCommand, SglangFlagsPerNodeThenTheFixedArgs) {
  spec::Spec s = Parse(
      "[engine.args]\nchunked-prefill-size = 8192\ndisable-radix-cache = true\n"
      "enable-mixed-chunk = false");
  NodeCommand c = ServerCommand(s, kSample, 1);
  EXPECT_EQ(launch::ShellJoin(c.argv),
            "python3 -m sglang.launch_server --model-path /models/k3 --tp-size 4 --pp-size 2 "
            "--ep-size 2 --nnodes 2 --node-rank 1 --dist-init-addr 10.0.0.1:5000 --host n1 "
            "--port 30000 --chunked-prefill-size 8192 --disable-radix-cache");
  EXPECT_TRUE(c.cleanup.empty());
}

// Two instances of PP1/TP4 on the two 4-GPU nodes: each node is a whole
// deployment of one node, its own node 0; the benchmark spreads over both.
TEST(ServerCommand, EachInstanceIsADeploymentOfItsOwnNodes) {
  spec::Spec s = Parse("");
  evidence::SampleId two = kSample;
  two.layout.pp = 1;
  two.layout.instances = 2;
  EXPECT_EQ(InstanceHeads(s, two.layout), (std::vector<int>{0, 1}));
  EXPECT_EQ(launch::ShellJoin(ServerCommand(s, two, 1).argv),
            "python3 -m sglang.launch_server --model-path /models/k3 --tp-size 4 --pp-size 1 "
            "--ep-size 2 --host n1 --port 30000");
  const loadgen::BenchOptions o = BenchOptionsFor(s, two, 7);
  EXPECT_EQ(o.url, "http://10.0.0.1:30000");
  EXPECT_EQ(o.more_urls, (std::vector<std::string>{"http://n1:30000"}));
  EXPECT_NE(launch::ShellJoin(BenchArgv(o)).find("--url http://10.0.0.1:30000,http://n1:30000"),
            std::string::npos);
  EXPECT_NE(launch::ShellJoin(BenchArgv(o)).find("--routing least-outstanding"), std::string::npos);
  // workload.routing chooses the policy; bench records it in its summary.
  const spec::Spec rr = Parse("", "", "routing = \"round-robin\"\n");
  EXPECT_NE(launch::ShellJoin(BenchArgv(BenchOptionsFor(rr, two, 7))).find("--routing round-robin"),
            std::string::npos);
  evidence::SampleId three = two;
  three.layout.instances = 3;
  EXPECT_TRUE(InstanceHeads(s, three.layout).empty());
}

// [engine.pp_layer_partition]: a layout's servers get its pipeline size's
// split as SGLang's variable; another size's layouts get none.
TEST(ServerCommand, APipelineSizesSplitIsItsServersVariable) {
  const spec::Spec s = Parse(
      "[engine.env]\nNCCL_DEBUG = \"WARN\"\n"
      "[engine.pp_layer_partition]\n2 = [47, 46]\n4 = [23, 24, 23, 23]");
  const NodeCommand c = ServerCommand(s, kSample, 0);
  EXPECT_EQ(c.env,
            (launch::EnvList{{"NCCL_DEBUG", "WARN"}, {"SGLANG_PP_LAYER_PARTITION", "47,46"}}));
  evidence::SampleId pp8 = kSample;
  pp8.layout.pp = 8;
  EXPECT_EQ(ServerCommand(s, pp8, 0).env, (launch::EnvList{{"NCCL_DEBUG", "WARN"}}));
}

TEST(ServerCommand, DpAttentionFlagsOnlyAboveDpOne) {
  spec::Spec s = Parse("");
  evidence::SampleId dp = kSample;
  dp.layout.dp = 2;
  EXPECT_NE(launch::ShellJoin(ServerCommand(s, dp, 0).argv)
                .find("--ep-size 2 --enable-dp-attention --dp-size 2 --nnodes 2"),
            std::string::npos);
  EXPECT_EQ(launch::ShellJoin(ServerCommand(s, kSample, 0).argv).find("dp"), std::string::npos);
}

TEST(ServerCommand, FlagSpellingsFollowTheEngineVersion) {
  const std::string args = "[engine.args]\ncuda-graph-max-bs = 64\ndisable-cuda-graph = true";
  auto words = [](const spec::Spec& s) { return launch::ShellJoin(EngineArgWords(s.engine)); };
  EXPECT_EQ(words(Parse("version = \"0.5.13\"\n" + args)),
            "--cuda-graph-max-bs 64 --disable-cuda-graph");
  EXPECT_EQ(words(Parse("version = \"0.5.14\"\n" + args)),
            "--cuda-graph-max-bs-decode 64 --cuda-graph-backend-decode disabled "
            "--cuda-graph-backend-prefill disabled");
  EXPECT_EQ(words(Parse("version = \"0.5.9\"\n[engine.args]\ncuda-graph-max-bs-decode = 64")),
            "--cuda-graph-max-bs 64");
  EXPECT_EQ(words(Parse(args)), "--cuda-graph-max-bs 64 --disable-cuda-graph") << "as written";
}

TEST(ServerCommand, ContainerWrappersKeepSecretsOutOfArgv) {
  spec::Spec s = Parse("image = \"local/sglang:k3\"\n[engine.env]\nHF_TOKEN = \"hf_abc\"");
  NodeCommand c = ServerCommand(s, kSample, 0);
  const std::string line = launch::ShellJoin(c.argv);
  EXPECT_EQ(line.rfind("docker run --rm --name ppsearch-pp2-tp4-ep2_c8_r1-n0 --network host --ipc "
                       "host --gpus all --shm-size 32g -v /models/k3:/models/k3 -e HF_TOKEN "
                       "local/sglang:k3 python3 -m sglang.launch_server",
                       0),
            0u)
      << line;
  EXPECT_EQ(line.find("hf_abc"), std::string::npos) << "the value travels in the environment";
  EXPECT_EQ(c.env, (launch::EnvList{{"HF_TOKEN", "hf_abc"}}));
  EXPECT_EQ(c.cleanup,
            (std::vector<std::string>{"docker", "rm", "-f", "ppsearch-pp2-tp4-ep2_c8_r1-n0"}));
  // apptainer: the value goes in as APPTAINERENV_<name>, not --env K=V.
  s = Parse(
      "image = \"/img/k3.sif\"\ncontainer = \"apptainer\"\n[engine.env]\nHF_TOKEN = \"hf_abc\"");
  c = ServerCommand(s, kSample, 0);
  EXPECT_EQ(launch::ShellJoin(c.argv).rfind(
                "apptainer exec --nv --bind /models/k3:/models/k3 /img/k3.sif python3", 0),
            0u)
      << launch::ShellJoin(c.argv);
  EXPECT_EQ(launch::ShellJoin(c.argv).find("hf_abc"), std::string::npos);
  EXPECT_EQ(c.env, (launch::EnvList{{"APPTAINERENV_HF_TOKEN", "hf_abc"}}));
  s = Parse("image = \"local/sglang:k3\"\ncontainer = \"podman\"");
  c = ServerCommand(s, kSample, 0);
  EXPECT_EQ(launch::ShellJoin(c.argv).rfind(
                "podman run --rm --name ppsearch-pp2-tp4-ep2_c8_r1-n0 --network host --ipc host "
                "--device nvidia.com/gpu=all -v /models/k3:/models/k3 local/sglang:k3 python3",
                0),
            0u)
      << "podman refuses --shm-size in the host's IPC namespace: " << launch::ShellJoin(c.argv);
  EXPECT_EQ(c.cleanup,
            (std::vector<std::string>{"podman", "rm", "-f", "ppsearch-pp2-tp4-ep2_c8_r1-n0"}));
}

TEST(ServerCommand, PlaceholdersAreFilledPerNodeAndSample) {
  spec::Spec s = Parse(
      "command = [\"srv\", \"--log\", \"/logs/{sample}/{host}-{node_rank}.log\", \"{port}\"]");
  NodeCommand c = ServerCommand(s, kSample, 1);
  EXPECT_EQ(c.argv[2], "/logs/pp2-tp4-ep2_c8_r1/n1-1.log");
  EXPECT_EQ(c.argv[3], "30000");
}

TEST(BenchCommand, ReproducesTheSampleQuoted) {
  spec::Spec s = Parse("", "",
                       "input_distribution = \"uniform\"\nrange_ratio = 0.5\n"
                       "warmup_requests = 2");
  const std::string line = launch::ShellJoin(BenchArgv(BenchOptionsFor(s, kSample, 99)));
  EXPECT_EQ(line,
            "ppsearch bench --url http://10.0.0.1:30000 --api native --concurrency 8 --requests 4 "
            "--input-tokens 100 --output-tokens 1 --seed 99 --timeout-s 3600 --range-ratio 0.5 "
            "--warmup 2 --flush-cache");
  s.cluster.hosts[0].address = "::1";
  EXPECT_EQ(NodeUrl(s, 0), "http://[::1]:30000");
}

TEST(SampleCommands, EveryWordIsQuotedForTheShell) {
  spec::Spec s = Parse("[engine.args]\nserved-model-name = \"k3; touch /tmp/x\"");
  auto lines = SampleCommands(s, kSample, 1, nullptr);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("--served-model-name 'k3; touch /tmp/x'"), std::string::npos) << lines[0];
  auto ssh = launch::MakeSshLauncher(s, "/tmp/c", 30);
  lines = SampleCommands(s, kSample, 1, ssh.get());
  EXPECT_EQ(lines[1].rfind("n1: ssh -n -T -o BatchMode=yes -o ConnectTimeout=30", 0), 0u);
  // The remote command is one word; inside it each spec value is quoted again.
  EXPECT_NE(lines[1].find("-p 22 -- n1 'exec /bin/sh -c '\\''echo ppsearch-pid"), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find("--served-model-name '\\''k3; touch /tmp/x'\\''"), std::string::npos)
      << lines[1];
}

}  // namespace
}  // namespace ppsearch::sglang

namespace ppsearch::sglang {
namespace {

TEST(ServerCommand, ProfiledServersRunUnderNsysWithTheReportMounted) {
  spec::Spec s = Parse("", "", "[profile]\nnsys = true\noutput_dir = \"/scratch/nsys\"");
  NodeCommand c = ServerCommand(s, kSample, 1);
  EXPECT_EQ(launch::ShellJoin(c.argv).rfind(
                "nsys profile --trace=cuda,nvtx --trace-fork-before-exec=true "
                "--cuda-graph-trace=node --force-overwrite=true "
                "--output=/scratch/nsys/pp2-tp4-ep2_c8_r1-n1 python3 -m sglang.launch_server ",
                0),
            0u)
      << launch::ShellJoin(c.argv);
  spec::Spec image = Parse("image = \"sglang:dev\"", "", "[profile]\nnsys = true");
  const std::string in_image = launch::ShellJoin(ServerCommand(image, kSample, 0).argv);
  EXPECT_NE(in_image.find("-v /tmp/ppsearch-nsys:/tmp/ppsearch-nsys"), std::string::npos)
      << in_image;
  EXPECT_NE(in_image.find("sglang:dev nsys profile "), std::string::npos) << in_image;
  EXPECT_EQ(launch::ShellJoin(NsysExportArgv(s.profile, "/scratch/nsys/x")),
            "nsys export --type=sqlite --force-overwrite=true --output=/scratch/nsys/x.sqlite "
            "/scratch/nsys/x.nsys-rep");
}

TEST(ServerCommand, UnprofiledServersRunBare) {
  spec::Spec s = Parse("", "", "[profile]\nfile = \"p.sqlite\"");
  EXPECT_EQ(ServerCommand(s, kSample, 0).argv.front(), "python3");
  EXPECT_EQ(s.profile.file, "/s/p.sqlite");
}

}  // namespace
}  // namespace ppsearch::sglang
