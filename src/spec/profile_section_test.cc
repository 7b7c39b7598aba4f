#include <gtest/gtest.h>

#include "spec/spec_parser.h"

namespace ppsearch::spec {
namespace {

Result<Spec> WithProfile(const std::string& profile) {
  const std::string text =
      "[experiment]\nname = \"t\"\n[cluster]\nhosts = [\"n0\"]\ngpus_per_node = 8\n"
      "[engine]\nmodel_config = \"m.json\"\nmodel_path = \"/m\"\n"
      "[sweep]\npp = [1, 2]\nconcurrency = [8]\n[workload]\ninput_tokens = 100\nrequests = 4\n"
      "[profile]\n" +
      profile;
  return ParseSpec(text, "/s/spec.toml", {});
}

TEST(ProfileSection, DefaultsAndValues) {
  Result<Spec> s = WithProfile("nsys = true\nwindow = \"nvtx:prefill\"\ngap_us = 500\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->profile.nsys);
  EXPECT_TRUE(s->profile.enabled());
  EXPECT_EQ(s->profile.nsys_command, std::vector<std::string>{"nsys"});
  EXPECT_EQ(s->profile.output_dir, "/tmp/ppsearch-nsys");
  EXPECT_EQ(s->profile.window, "nvtx:prefill");
  EXPECT_EQ(s->profile.gap_us, 500);
  Result<Spec> f = WithProfile("file = \"p/pp1.sqlite\"\nlayout = \"pp1-tp8-ep1\"\n");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->profile.file, "/s/p/pp1.sqlite");
  EXPECT_FALSE(f->profile.nsys);
}

TEST(ProfileSection, ErrorsNameTheKey) {
  EXPECT_EQ(WithProfile("window = \"prefill\"\n").error().message,
            "/s/spec.toml:16:10: key 'profile.window': expected \"forward\" or \"nvtx:REGEX\", got "
            "\"prefill\"");
  EXPECT_EQ(
      WithProfile("file = \"a.sqlite\"\nlayout = \"pp4-tp2-ep1\"\n").error().message,
      "/s/spec.toml:17:10: key 'profile.layout': no layout \"pp4-tp2-ep1\" in the sweep (layouts: "
      "pp1-tp8-ep1, pp2-tp4-ep1)");
  EXPECT_EQ(
      WithProfile("nsys = true\nfile = \"a.sqlite\"\n").error().message,
      "/s/spec.toml:17:8: key 'profile.file': give either nsys = true (profile every sample) or "
      "file (attach an existing export), not both");
  EXPECT_EQ(
      WithProfile("output_dir = \"rel\"\n").error().message,
      "/s/spec.toml:16:14: key 'profile.output_dir': expected an absolute directory on every node, "
      "got \"rel\"");
}

}  // namespace
}  // namespace ppsearch::spec
