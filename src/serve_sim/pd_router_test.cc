#include "serve_sim/pd_router.h"

#include <gtest/gtest.h>

namespace ppsearch::serve_sim {
namespace {

TEST(PdRouterArgs, TheRoutersCommandLineIsReadInOrder) {
  auto a = ParseRouterArgs({"--pd-disaggregation", "--prefill", "http://127.0.0.1:30000", "8998",
                            "--prefill", "http://[::1]:30001", "--decode", "http://10.0.0.2:30000/",
                            "--policy", "round_robin", "--decode-policy", "power_of_two", "--host",
                            "0.0.0.0", "--port", "8000", "--worker-startup-timeout-secs", "900"});
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->prefill.size(), 2u);
  EXPECT_EQ(a->prefill[0].host, "127.0.0.1");
  EXPECT_EQ(a->prefill[0].port, 30000);
  EXPECT_EQ(a->prefill[0].bootstrap_port, 8998);
  EXPECT_EQ(a->prefill[1].host, "::1");
  EXPECT_EQ(a->prefill[1].port, 30001);
  EXPECT_EQ(a->prefill[1].bootstrap_port, 8998) << "SGLang's default when none is given";
  ASSERT_EQ(a->decode.size(), 1u);
  EXPECT_EQ(a->decode[0].host, "10.0.0.2");
  EXPECT_EQ(a->policy, "round_robin");
  EXPECT_EQ(a->decode_policy, "power_of_two");
  EXPECT_EQ(a->prefill_policy, "");
  EXPECT_EQ(a->worker_startup_timeout_s, 900);
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_EQ(a->port, 8000);
  EXPECT_EQ(RouterStartLine(*a),
            "Starting router on 0.0.0.0:8000 | mode: PrefillDecode { prefill_urls: "
            "[(\"http://127.0.0.1:30000\", Some(8998)), (\"http://[::1]:30001\", Some(8998))], "
            "decode_urls: [\"http://10.0.0.2:30000/\"] } | policy: round_robin");
}

TEST(PdRouterArgs, WhatItCannotPlayIsRefusedNamingTheWord) {
  EXPECT_NE(ParseRouterArgs({"--prefill", "http://a:1", "--decode", "http://b:1"})
                .error()
                .message.find("PD mode only"),
            std::string::npos);
  EXPECT_EQ(ParseRouterArgs({"--pd-disaggregation", "--prefill", "a:1", "--decode", "http://b:1"})
                .error()
                .message,
            "--prefill 'a:1': not an http:// URL (expected http://host:port)");
  EXPECT_EQ(
      ParseRouterArgs({"--pd-disaggregation", "--prefill", "http://a:1", "99999"}).error().message,
      "--prefill http://a:1 '99999': expected a TCP port");
  EXPECT_EQ(ParseRouterArgs({"--pd-disaggregation", "--prefill", "http://a:1"}).error().message,
            "--pd-disaggregation needs at least one --decode URL");
  EXPECT_NE(ParseRouterArgs({"--pd-disaggregation", "--worker-urls", "http://a:1"})
                .error()
                .message.find("unknown argument '--worker-urls'"),
            std::string::npos);
  EXPECT_NE(ParseRouterArgs({"--pd-disaggregation", "--policy", "fastest"})
                .error()
                .message.find("--policy 'fastest'"),
            std::string::npos);
}

}  // namespace
}  // namespace ppsearch::serve_sim
