#include "util/host_name.h"

#include <gtest/gtest.h>

#include <string>

namespace ppsearch {
namespace {

TEST(HostName, SafeAsAFileNameAndACommandWord) {
  for (const char* ok : {"601", "gpu-node.1", "n_0", "A"}) EXPECT_TRUE(IsValidHostName(ok)) << ok;
  for (const char* bad :
       {"", ".", "..", "../x", "a/b", "-x", ".hidden", "a b", "a;b", "a$b", "a\nb"})
    EXPECT_FALSE(IsValidHostName(bad)) << bad;
  // It names evidence files ("<host>.csv.tmp.<pid>"): a long DNS name is an address.
  EXPECT_TRUE(IsValidHostName(std::string(128, 'h')));
  EXPECT_FALSE(IsValidHostName(std::string(200, 'h')));
}

TEST(HostAddress, DnsNamesAndIpAddressesOnly) {
  for (const char* ok : {"10.0.6.1", "127.0.0.4", "::1", "fe80::1", "node-1.cluster.local", "601"})
    EXPECT_TRUE(IsValidHostAddress(ok)) << ok;
  for (const char* bad :
       {"", "999.1.1.1", "1.2.3", "a..b", "-a", "a_b", "[::1]", "a;b", "$(id)", "a b", "host:22"})
    EXPECT_FALSE(IsValidHostAddress(bad)) << bad;
}

}  // namespace
}  // namespace ppsearch
