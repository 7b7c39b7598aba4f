#include "serve_sim/pd_router.h"

#include <gtest/gtest.h>

namespace ppsearch::serve_sim {
namespace {

RouterFlags PdFlags() {
  RouterFlags f;
  f.pd_disaggregation = true;
  f.prefill = {{"http://a:1"}};
  f.decode = {"http://b:1"};
  return f;
}

TEST(PdRouterArgs, TheRoutersCommandLineIsCheckedInOrder) {
  RouterFlags f;
  f.pd_disaggregation = true;
  f.prefill = {{"http://127.0.0.1:30000", "8998"}, {"http://[::1]:30001"}, {"http://c:2", "none"}};
  f.decode = {"http://10.0.0.2:30000/"};
  f.policy = "round_robin";
  f.decode_policy = "power_of_two";
  f.host = "0.0.0.0";
  f.port = "8000";
  f.worker_startup_timeout_secs = "900";
  auto a = RouterArgsFromFlags(f);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->prefill.size(), 3u);
  EXPECT_EQ(a->prefill[0].host, "127.0.0.1");
  EXPECT_EQ(a->prefill[0].port, 30000);
  EXPECT_EQ(a->prefill[0].bootstrap_port, 8998);
  EXPECT_EQ(a->prefill[1].host, "::1");
  EXPECT_EQ(a->prefill[1].port, 30001);
  EXPECT_EQ(a->prefill[1].bootstrap_port, 8998) << "SGLang's default when none is given";
  EXPECT_EQ(a->prefill[2].bootstrap_port, 8998) << "\"none\" is the default too";
  ASSERT_EQ(a->decode.size(), 1u);
  EXPECT_EQ(a->decode[0].host, "10.0.0.2");
  EXPECT_EQ(a->policy, "round_robin");
  EXPECT_EQ(a->decode_policy, "power_of_two");
  EXPECT_EQ(a->prefill_policy, "");
  EXPECT_EQ(a->worker_startup_timeout_s, 900);
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_EQ(a->port, 8000);
  f.prefill.pop_back();
  EXPECT_EQ(RouterStartLine(*RouterArgsFromFlags(f)),
            "Starting router on 0.0.0.0:8000 | mode: PrefillDecode { prefill_urls: "
            "[(\"http://127.0.0.1:30000\", Some(8998)), (\"http://[::1]:30001\", Some(8998))], "
            "decode_urls: [\"http://10.0.0.2:30000/\"] } | policy: round_robin");
  const auto defaults = RouterArgsFromFlags(PdFlags());
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_EQ(defaults->port, 30000);
  EXPECT_EQ(defaults->policy, "cache_aware");
}

TEST(PdRouterArgs, WhatItCannotPlayIsRefusedNamingTheWord) {
  auto error = [](RouterFlags f) {
    auto a = RouterArgsFromFlags(f);
    return a.ok() ? std::string("ok") : a.error().message;
  };
  RouterFlags f = PdFlags();
  f.pd_disaggregation = false;
  EXPECT_NE(error(f).find("PD mode only"), std::string::npos);
  f = PdFlags();
  f.prefill = {{"a:1"}};
  EXPECT_EQ(error(f), "--prefill 'a:1': not an http:// URL (expected http://host:port)");
  f = PdFlags();
  f.prefill = {{"http://a:1", "99999"}};
  EXPECT_EQ(error(f), "--prefill http://a:1 '99999': expected a TCP port");
  f = PdFlags();
  f.decode.clear();
  EXPECT_EQ(error(f), "--pd-disaggregation needs at least one --decode URL");
  f = PdFlags();
  f.unknown = {"--worker-urls", "http://a:1"};
  EXPECT_NE(error(f).find("unknown argument '--worker-urls'"), std::string::npos);
  f = PdFlags();
  f.policy = "fastest";
  EXPECT_NE(error(f).find("--policy 'fastest'"), std::string::npos);
  f = PdFlags();
  f.prefill_policy = "fastest";
  EXPECT_NE(error(f).find("--prefill-policy 'fastest'"), std::string::npos);
  f = PdFlags();
  f.port = "http";
  EXPECT_EQ(error(f), "--port 'http': expected a TCP port");
  f = PdFlags();
  f.worker_startup_timeout_secs = "1.5";
  EXPECT_EQ(error(f), "--worker-startup-timeout-secs '1.5': expected whole seconds");
}

}  // namespace
}  // namespace ppsearch::serve_sim
