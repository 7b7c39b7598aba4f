#include "run/redact.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "spec/secret_text.h"
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

TEST(Secrets, NamesAreSecretByWholeWordsNotSubstrings) {
  spec::Spec s = Parse("secret_env = [\"MY_CREDS_X\"]");
  for (const char* name :
       {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY", "aws_secret_access_key",
        "DB_PASSWORD", "WANDB_APIKEY", "MY_CREDS_X", "GOOGLE_APPLICATION_CREDENTIALS"})
    EXPECT_TRUE(IsSecretEnvName(name, s.engine)) << name;
  for (const char* name :
       {"TOKENIZERS_PARALLELISM", "NCCL_DEBUG", "MAX_TOKENS", "MONKEY_PATCH", "SGLANG_KEYRING_OFF"})
    EXPECT_FALSE(IsSecretEnvName(name, s.engine)) << name;
  for (const char* flag : {"api-key", "admin-api-key", "ssl-keyfile-password"})
    EXPECT_TRUE(spec::IsSecretFlag(flag)) << flag;
  for (const char* flag : {"max-total-tokens", "ssl-keyfile", "chunked-prefill-size"})
    EXPECT_FALSE(spec::IsSecretFlag(flag)) << flag;
}

TEST(Redactor, FreeTextLosesEachSecretsAssignment) {
  spec::Spec s = Parse(
      "secret_env = [\"MY_CREDS\"]\n[engine.args]\napi-key = \"sk-abcdefgh123\"\n"
      "admin-api-key = \"16\"\n[engine.env]\nHF_TOKEN = \"true\"\nMY_CREDS = \"hunter2\"\n"
      "NCCL_DEBUG = \"WARN\"");
  Redactor r(s);
  // A short secret is redacted in its own assignment only: the other "true"
  // and "16" stay.
  EXPECT_EQ(r.Apply("HF_TOKEN=true trust_remote_code=true MY_CREDS='hunter2' d=WARN"),
            "HF_TOKEN=<redacted> trust_remote_code=true MY_CREDS='<redacted>' d=WARN");
  EXPECT_EQ(r.Apply("server_args=ServerArgs(tp_size=16, admin_api_key='16', "
                    "api_key='sk-abcdefgh123')"),
            "server_args=ServerArgs(tp_size=16, admin_api_key='<redacted>', "
            "api_key='<redacted>')");
  EXPECT_EQ(r.Apply("python3 -m sglang.launch_server --api-key sk-abcdefgh123 --port 16"),
            "python3 -m sglang.launch_server --api-key <redacted> --port 16");
  EXPECT_EQ(r.Apply("ppsearch run s.toml --set 'engine.args.api-key=sk-abcdefgh123' --set "
                    "'engine.env.HF_TOKEN = true'"),
            "ppsearch run s.toml --set 'engine.args.api-key=<redacted>' --set "
            "'engine.env.HF_TOKEN = <redacted>'");
  // Not a value: left alone, however long.
  EXPECT_EQ(r.Apply("echo sk-abcdefgh123; x=sk-abcdefgh1234"),
            "echo sk-abcdefgh123; x=sk-abcdefgh1234");
}

TEST(Redactor, AKeyThatReadsLikeProseIsRedactedOnlyWhereItIsAValue) {
  spec::Spec s = Parse("[engine.args]\napi-key = \"ppsearch\"");
  Redactor r(s);
  // ppsearch's own stop marker and command line keep their words.
  EXPECT_EQ(r.Apply("[ppsearch] stopping the server\nNode lost: rank 3\n"),
            "[ppsearch] stopping the server\nNode lost: rank 3\n");
  EXPECT_EQ(r.Apply("ppsearch run /s/spec.toml --set 'engine.args.api-key=ppsearch' --engine sim"),
            "ppsearch run /s/spec.toml --set 'engine.args.api-key=<redacted>' --engine sim");
  EXPECT_EQ(r.Apply("server_args=ServerArgs(api_key='ppsearch', served_model_name='ppsearch')"),
            "server_args=ServerArgs(api_key='<redacted>', served_model_name='ppsearch')");
  EXPECT_EQ(r.Apply("python3 -m sglang.launch_server --api-key=ppsearch --host ppsearch"),
            "python3 -m sglang.launch_server --api-key=<redacted> --host ppsearch");
}

// What `ppsearch redact-log` is handed: the same redaction, from JSON.
TEST(Redactor, TheSecretsTravelAsJsonAndRedactAlike) {
  spec::Spec s = Parse("[engine.args]\napi-key = \"sk-abc\"\n[engine.env]\nHF_TOKEN = \"hf_x\"");
  const Redactor original(s);
  Result<Redactor> back = Redactor::FromJsonText(original.ToJsonText());
  ASSERT_TRUE(back.ok()) << back.error().message;
  const std::string line = "server_args=ServerArgs(api_key='sk-abc') HF_TOKEN=hf_x sk-abc\n";
  EXPECT_EQ(back->Apply(line),
            "server_args=ServerArgs(api_key='<redacted>') HF_TOKEN=<redacted> sk-abc\n");
  EXPECT_EQ(back->Apply(line), original.Apply(line));
  for (const char* bad :
       {"", "{}", "[{\"names\": [\"a\"]}]", "[{\"names\": [1], \"value\": \"v\"}]"}) {
    Result<Redactor> refused = Redactor::FromJsonText(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().message,
              "PPSEARCH_REDACT_SECRETS must be a JSON array of {\"names\": [strings], \"value\": "
              "string} objects");
  }
}

TEST(Secrets, TheSpecCopyKeepsEveryOtherByteAndStillParses) {
  const std::string text =
      "# my spec\n[experiment]\nname = \"t\"  # the name\n[cluster]\nhosts = [\"n0\"]\n"
      "gpus_per_node = 16\n[engine]\nmodel_config = \"m.json\"\nmodel_path = \"/m\"\n"
      "env = { HF_TOKEN = 'true', NCCL_DEBUG = \"WARN\" }\n"
      "[engine.args]\napi-key = \"16\"  # short on purpose\ntrust-remote-code = true\n"
      "chunked-prefill-size = 16\n[sweep]\npp = [1]\nconcurrency = [16]\n[workload]\n"
      "input_tokens = 16\nrequests = 16\n";
  Result<spec::Spec> original = spec::ParseSpec(text, "/s/spec.toml", {});
  ASSERT_TRUE(original.ok()) << original.error().message;
  Result<std::string> copy = spec::RedactSpecText(text, "/s/spec.toml", original->engine);
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  std::string expected = text;
  expected.replace(expected.find("'true'"), 6, "\"<redacted>\"");
  expected.replace(expected.find("\"16\""), 4, "\"<redacted>\"");
  EXPECT_EQ(*copy, expected);
  Result<spec::Spec> reread = spec::ParseSpec(*copy, "/s/spec.toml", {});
  ASSERT_TRUE(reread.ok()) << reread.error().message;
  EXPECT_EQ(reread->cluster.gpus_per_node, 16);
  EXPECT_TRUE(reread->engine.ArgTrue("trust-remote-code"));
  EXPECT_EQ(reread->engine.ArgInt("chunked-prefill-size"), 16);
  EXPECT_EQ(reread->engine.ArgString("api-key"), std::string(kRedacted));
}

TEST(Secrets, TheResolvedSpecAndOverridesHoldNoSecret) {
  spec::Spec s = Parse("[engine.args]\napi-key = \"true\"\n[engine.env]\nHF_TOKEN = \"16\"");
  const spec::Spec shown = spec::WithoutSecrets(s);
  EXPECT_EQ(shown.engine.env[0].second, kRedacted);
  EXPECT_EQ(shown.engine.ArgString("api-key"), std::string(kRedacted));
  EXPECT_EQ(spec::RedactOverride("engine.env.HF_TOKEN=hf_x=y", s.engine),
            "engine.env.HF_TOKEN=<redacted>");
  EXPECT_EQ(spec::RedactOverride("engine.args.api-key = k", s.engine),
            "engine.args.api-key =<redacted>");
  EXPECT_EQ(spec::RedactOverride("workload.requests=16", s.engine), "workload.requests=16");
  EXPECT_EQ(spec::RedactOverride("engine.env.TOKENIZERS_PARALLELISM=true", s.engine),
            "engine.env.TOKENIZERS_PARALLELISM=true");
}

// A disaggregated deployment's pools take flags of their own: a secret
// among them is kept out of the resolved spec, the spec copy, the free text
// (commands.txt, logs) and the overrides, and a resume takes it back from
// its variable.
TEST(Secrets, APoolsOwnSecretFlagIsRedactedEverywhere) {
  const std::string text =
      "[experiment]\nname = \"t\"\n[cluster]\nhosts = [\"n0\", \"n1\"]\ngpus_per_node = 8\n"
      "[engine]\nmodel_config = \"m.json\"\nmodel_path = \"/m\"\n[sweep]\nconcurrency = [8]\n"
      "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\nargs = {api-key = \"pk-123456\"}\n"
      "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\n[workload]\ninput_tokens = 16\n"
      "requests = 16\n";
  Result<spec::Spec> s = spec::ParseSpec(text, "/s/spec.toml", {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  const spec::Spec shown = spec::WithoutSecrets(*s);
  EXPECT_EQ(shown.disaggregation->prefill.args.at(0).second.text, kRedacted);
  Result<std::string> copy = spec::RedactSpecText(text, "/s/spec.toml", s->engine);
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  EXPECT_EQ(copy->find("pk-123456"), std::string::npos) << *copy;
  EXPECT_EQ(Redactor(*s).Apply("n0: launch_server --api-key pk-123456 --port 1"),
            "n0: launch_server --api-key <redacted> --port 1");
  EXPECT_EQ(spec::RedactOverride("sweep.prefill.args.api-key=pk", s->engine),
            "sweep.prefill.args.api-key=<redacted>");
  Result<spec::Spec> resumed = spec::ParseSpec(*copy, "/s/spec.toml", {});
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  ::unsetenv("PPSEARCH_SECRET_API_KEY");
  Status missing = RestoreSecrets(*resumed);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("sweep.prefill.args.api-key is a secret"),
            std::string::npos)
      << missing.error().message;
  ::setenv("PPSEARCH_SECRET_API_KEY", "pk-123456", 1);
  ASSERT_TRUE(RestoreSecrets(*resumed).ok());
  EXPECT_EQ(resumed->disaggregation->prefill.args.at(0).second.text, "pk-123456");
  ::unsetenv("PPSEARCH_SECRET_API_KEY");
}

TEST(Redactor, AResumedRunTakesARedactedFlagFromItsVariable) {
  spec::Spec s = Parse("[engine.args]\napi-key = \"<redacted>\"");
  ::unsetenv("PPSEARCH_SECRET_API_KEY");
  Status missing = RestoreSecrets(s);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "engine.args.api-key is a secret and the run's copy of the spec holds it redacted; "
            "export PPSEARCH_SECRET_API_KEY in the environment of `ppsearch run --resume`");
  ::setenv("PPSEARCH_SECRET_API_KEY", "sk-1", 1);
  ASSERT_TRUE(RestoreSecrets(s).ok());
  EXPECT_EQ(s.engine.ArgString("api-key"), std::string("sk-1"));
  ::unsetenv("PPSEARCH_SECRET_API_KEY");
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
