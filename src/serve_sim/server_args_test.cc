#include "serve_sim/server_args.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ppsearch::serve_sim {
namespace {

ServerArgs Valid() {
  ServerArgs a;
  a.model_path = "data/models/qwen3-235b-a22b";
  a.tp_size = 4;
  a.pp_size = 2;
  return a;
}

TEST(ServerArgsTest, ValidationMessages) {
  EXPECT_TRUE(ValidateServerArgs(Valid()).ok());
  ServerArgs a = Valid();
  a.nnodes = 3;
  a.dist_init_addr = "127.0.0.1:25000";
  EXPECT_EQ(ValidateServerArgs(a).error().message,
            "tp_size must be divisible by number of nodes: --tp-size 4 x --pp-size 2 is not a "
            "multiple of --nnodes 3");
  a.nnodes = 2;
  a.dist_init_addr.clear();
  EXPECT_EQ(ValidateServerArgs(a).error().message,
            "--dist-init-addr host:port is required when --nnodes > 1");
  a.dist_init_addr = "127.0.0.1";
  EXPECT_EQ(ValidateServerArgs(a).error().message, "--dist-init-addr '127.0.0.1' is not host:port");
  a = Valid();
  a.fault.log = "segv";
  EXPECT_EQ(ValidateServerArgs(a).error().message,
            "--fault-log must be one of oom, nccl, traceback (got 'segv')");
  a = Valid();
  a.node_rank = 1;
  EXPECT_EQ(ValidateServerArgs(a).error().message, "--node-rank 1 is outside 0..0 (--nnodes 1)");
  a = Valid();
  a.extra_flags = {{"enable-dp-attention", std::nullopt}, {"dp-size", "2"}};
  EXPECT_EQ(ValidateServerArgs(a).error().message,
            "--enable-dp-attention: serve-sim does not serve DP attention (its per-rank "
            "schedulers, logs and routes); predict the layout with `ppsearch simulate`, or "
            "rehearse it without the flag");
}

TEST(ServerArgsTest, PdFlagsAreCheckedAsSglangWould) {
  ServerArgs a = Valid();
  a.disaggregation_mode = "encode";
  EXPECT_EQ(ValidateServerArgs(a).error().message,
            "--disaggregation-mode must be one of null, prefill, decode (got 'encode')");
  a.disaggregation_mode = "prefill";
  a.disaggregation_bootstrap_port = a.port;
  EXPECT_NE(ValidateServerArgs(a).error().message.find("the bootstrap server needs its own"),
            std::string::npos);
  a.disaggregation_bootstrap_port = 8998;
  a.disaggregation_transfer_backend = "ucx";
  EXPECT_NE(ValidateServerArgs(a).error().message.find("mooncake and nixl"), std::string::npos);
  a.disaggregation_transfer_backend = "nixl";
  EXPECT_TRUE(ValidateServerArgs(a).ok());
  a.disaggregation_mode = "decode";
  a.fault.kv_fail_after = 2;
  EXPECT_NE(ValidateServerArgs(a).error().message.find("needs --disaggregation-mode prefill"),
            std::string::npos);
  a.fault.kv_fail_after = 0;
  a.waiting_timeout_s = 0;
  EXPECT_NE(ValidateServerArgs(a).error().message.find("SGLANG_DISAGGREGATION_WAITING_TIMEOUT"),
            std::string::npos);
  // Shown as SGLang's server_args line shows them.
  a.waiting_timeout_s = 300;
  EXPECT_NE(ServerArgsRepr(a).find("disaggregation_mode='decode', "
                                   "disaggregation_transfer_backend='nixl', "
                                   "disaggregation_bootstrap_port=8998"),
            std::string::npos)
      << ServerArgsRepr(a);
}

TEST(ServerArgsTest, SplitHostPort) {
  auto hp = SplitHostPort("10.0.0.2:25000");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->first, "10.0.0.2");
  EXPECT_EQ(hp->second, 25000);
  EXPECT_FALSE(SplitHostPort("host:99999").ok());
  EXPECT_FALSE(SplitHostPort("host:x").ok());
}

TEST(ServerArgsTest, ReprAndJsonUseSglangNames) {
  ServerArgs a = Valid();
  a.chunked_prefill_size = 16384;
  const std::string repr = ServerArgsRepr(a);
  EXPECT_EQ(repr.rfind("ServerArgs(model_path='data/models/qwen3-235b-a22b', ", 0), 0u) << repr;
  EXPECT_NE(repr.find("tp_size=4, pp_size=2, pp_max_micro_batch_size=None, ep_size=1"),
            std::string::npos)
      << repr;
  EXPECT_NE(repr.find("chunked_prefill_size=16384"), std::string::npos);
  nlohmann::json j = ServerArgsJson(a);
  EXPECT_EQ(j["tp_size"], 4);
  EXPECT_EQ(j["chunked_prefill_size"], 16384);
  EXPECT_TRUE(j["max_running_requests"].is_null());
}

// serve-sim's log line goes to --log-file: the key is not in it.
TEST(ServerArgsTest, TheApiKeyIsNotPrinted) {
  ServerArgs a = Valid();
  a.extra_flags.push_back({"api-key", std::string("sk-serve-1")});
  a.extra_flags.push_back({"trust-remote-code", std::nullopt});
  const std::string repr = ServerArgsRepr(a);
  EXPECT_EQ(repr.find("sk-serve-1"), std::string::npos) << repr;
  EXPECT_NE(repr.find("api_key='<redacted>'"), std::string::npos) << repr;
  EXPECT_NE(repr.find("trust_remote_code=True"), std::string::npos) << repr;
  EXPECT_EQ(ServerArgsJson(a)["api_key"], "<redacted>");
}

}  // namespace
}  // namespace ppsearch::serve_sim
