#include "run/redact.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "spec/spec_parser.h"

namespace ppsearch::run {
namespace {

spec::Spec Parse(const std::string& engine) {
  const std::string text =
      "[experiment]\nname = \"t\"\n[cluster]\nhosts = [\"n0\", \"n1\"]\ngpus_per_node = 4\n"
      "[engine]\nmodel_config = \"m.json\"\nmodel_path = \"/models/k3\"\n" +
      engine +
      "\n[sweep]\npp = [2]\nconcurrency = [8]\n[workload]\ninput_tokens = 100\nrequests = 4\n";
  Result<spec::Spec> s = spec::ParseSpec(text, "/s/spec.toml", {});
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? *s : spec::Spec{};
}

TEST(Redactor, SecretValuesNeverReachTheText) {
  spec::Spec s = Parse(
      "secret_env = [\"MY_CREDS\"]\n[engine.env]\nHF_TOKEN = \"hf_abc123\"\nAPI_KEY = \"k-9\"\n"
      "MY_CREDS = \"hunter2\"\nNCCL_DEBUG = \"WARN\"");
  Redactor r(s);
  EXPECT_EQ(r.Apply("HF_TOKEN=hf_abc123 x=k-9 p=hunter2 d=WARN"),
            "HF_TOKEN=<redacted> x=<redacted> p=<redacted> d=WARN");
  EXPECT_TRUE(IsSecretEnvName("aws_secret_access_key", s.engine));
  EXPECT_FALSE(IsSecretEnvName("NCCL_DEBUG", s.engine));
}

TEST(Redactor, AResumedRunTakesRedactedValuesFromTheEnvironment) {
  spec::Spec s = Parse("[engine.env]\nPPS_TEST_TOKEN = \"<redacted>\"");
  ::unsetenv("PPS_TEST_TOKEN");
  Status missing = RestoreSecrets(s);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "engine.env.PPS_TEST_TOKEN is a secret and the run's copy of the spec holds it "
            "redacted; export PPS_TEST_TOKEN in the environment of `ppsearch run --resume`");
  ::setenv("PPS_TEST_TOKEN", "tok", 1);
  ASSERT_TRUE(RestoreSecrets(s).ok());
  EXPECT_EQ(s.engine.env[0].second, "tok");
  ::unsetenv("PPS_TEST_TOKEN");
}

}  // namespace
}  // namespace ppsearch::run
