// Digest is MurmurHash3_x64_128 (seed 0) whatever pieces the bytes come in.
#include "stoker/core/digest.h"

#include <gtest/gtest.h>

#include <string>

namespace stoker {
namespace {

std::string digest_of(std::string_view bytes) {
  Digest d;
  d.update(bytes);
  return d.hex();
}

TEST(DigestTest, IsMurmurHash3x64_128) {
  EXPECT_EQ(digest_of(""), "00000000000000000000000000000000");
  EXPECT_EQ(digest_of("The quick brown fox jumps over the lazy dog"), "6c1b07bc7bbc4be347939ac4a93c437a");
}

TEST(DigestTest, PiecesOfAnySizeGiveTheWholesDigest) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += static_cast<char>('a' + i % 26);
  for (size_t length = 0; length <= text.size(); ++length) {
    const std::string_view whole(text.data(), length);
    for (size_t piece = 1; piece <= 17; ++piece) {
      Digest d;
      for (size_t at = 0; at < length; at += piece) d.update(whole.substr(at, piece));
      ASSERT_EQ(d.hex(), digest_of(whole)) << "length " << length << " in pieces of " << piece;
    }
  }
}

TEST(DigestTest, TellsApartOneByteChangedOrMoved) {
  EXPECT_NE(digest_of("a/1.jpg"), digest_of("a/2.jpg"));
  EXPECT_NE(digest_of(std::string("ab\0c", 4)), digest_of(std::string("a\0bc", 4)));
  EXPECT_NE(digest_of(std::string(16, '\0')), digest_of(std::string(17, '\0')));
}

}  // namespace
}  // namespace stoker
