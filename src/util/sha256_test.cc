// Digests against the FIPS 180-2 examples and the file reader's errors.

#include "util/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ppsearch {
namespace {

TEST(Sha256Test, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, FileDigestAndMissingFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ppsearch-sha-" + std::to_string(getpid())))
          .string();
  std::ofstream(path) << "abc";
  Result<std::string> d = Sha256File(path);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, Sha256Hex("abc"));
  std::filesystem::remove(path);
  Result<std::string> missing = Sha256File(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(path), std::string::npos);
}

}  // namespace
}  // namespace ppsearch
