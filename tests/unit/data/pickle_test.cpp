// The pickle subset torch.save writes: containers, numbers, strings, memo, globals and
// REDUCE kept as nodes (never called), and one line for what lies outside it.
#include "data/source/pickle.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {

using testing::error_text;

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }

TEST(Pickle, ContainersNumbersStringsAndTheMemo) {
  // {"a": (1, -2, 300, 2**40), "b": ["s", None, True], "a2": <memo 1>} at protocol 2.
  const std::string pickle = std::string("\x80\x02}q\x00(", 6) +
                             std::string(
                                 "X\x01\x00\x00\x00"
                                 "a",
                                 6) +
                             std::string("(K\x01J\xfe\xff\xff\xffM\x2c\x01", 11) +
                             std::string("\x8a\x06\x00\x00\x00\x00\x00\x01tq\x01", 11) +
                             std::string(
                                 "X\x01\x00\x00\x00"
                                 "b",
                                 6) +
                             std::string(
                                 "]q\x02(X\x01\x00\x00\x00"
                                 "sN\x88"
                                 "e",
                                 13) +
                             std::string(
                                 "X\x02\x00\x00\x00"
                                 "a2h\x01u.",
                                 11);
  const PickleRef root = read_pickle(bytes(pickle), "p.pt");
  ASSERT_EQ(root->kind, PickleValue::Kind::kDict);
  ASSERT_EQ(root->entries.size(), 3u);
  EXPECT_EQ(root->entries[0].first->text, "a");
  const PickleValue& a = *root->entries[0].second;
  ASSERT_EQ(a.items.size(), 4u);
  EXPECT_EQ(a.items[0]->integer, 1);
  EXPECT_EQ(a.items[1]->integer, -2);
  EXPECT_EQ(a.items[2]->integer, 300);
  EXPECT_EQ(a.items[3]->integer, int64_t{1} << 40);
  const PickleValue& b = *root->entries[1].second;
  ASSERT_EQ(b.items.size(), 3u);
  EXPECT_EQ(b.items[0]->text, "s");
  EXPECT_EQ(b.items[1]->kind, PickleValue::Kind::kNone);
  EXPECT_EQ(b.items[2]->kind, PickleValue::Kind::kBool);
  EXPECT_EQ(root->entries[2].second.get(), &a);  // the memo gives the same object back
}

TEST(Pickle, CallablesAreKeptAsNodesNotCalled) {
  // os.system("echo pwned") as a pickle: read as a REDUCE node naming the global; nothing runs.
  const std::string pickle = std::string(
                                 "\x80\x02"
                                 "cos\nsystem\nX\x0a\x00\x00\x00",
                                 18) +
                             "echo pwned\x85R.";
  const PickleRef root = read_pickle(bytes(pickle), "evil.pt");
  ASSERT_EQ(root->kind, PickleValue::Kind::kReduce);
  EXPECT_TRUE(root->items[0]->is_global("os.system"));
  EXPECT_EQ(root->items[1]->items[0]->text, "echo pwned");
}

TEST(Pickle, BuildGivesTheObjectItsStateWhereverTheMemoRefersToIt) {
  // m.C.__new__() stored in the memo, then BUILD with {"a": 5}, then (object, memo 0): both
  // items are the one built object, as in Python, where BUILD changes the object in place.
  const std::string pickle = std::string(
      "\x80\x02"
      "cm\nC\n)\x81q\x00}X\x01\x00\x00\x00"
      "aK\x05sbh\x00\x86.",
      26);
  const PickleRef root = read_pickle(bytes(pickle), "obj.pt");
  ASSERT_EQ(root->kind, PickleValue::Kind::kTuple);
  ASSERT_EQ(root->items.size(), 2U);
  const PickleValue& built = *root->items[0];
  EXPECT_EQ(root->items[1].get(), &built);
  ASSERT_EQ(built.kind, PickleValue::Kind::kBuilt);
  ASSERT_EQ(built.items.size(), 2U);
  EXPECT_EQ(built.items[0]->kind, PickleValue::Kind::kReduce);
  EXPECT_TRUE(built.items[0]->items[0]->is_global("m.C"));
  ASSERT_EQ(built.items[1]->entries.size(), 1U);
  EXPECT_EQ(built.items[1]->entries[0].first->text, "a");
  EXPECT_EQ(built.items[1]->entries[0].second->integer, 5);
}

TEST(Pickle, WhatLiesOutsideTheSubsetIsOneLine) {
  EXPECT_EQ(error_text([] {
              read_pickle(bytes(std::string("\x80\x02X\x05\x00\x00\x00"
                                            "ab",
                                            9)),
                          "t.pt");
            }),
            "t.pt: its pickle (byte 7) is truncated");
  EXPECT_EQ(error_text([] { read_pickle(bytes("\x80\x02P0\n."), "p.pt"); }),
            "p.pt: its pickle (byte 2) uses pickle opcode 0x50, which a torch.save file of tensors does not; save the "
            "tensors alone (torch.save({\"x\": x, \"y\": y}, path))");
  EXPECT_EQ(error_text([] {
              read_pickle(bytes("\x80\x02h\x07"
                                "."),
                          "m.pt");
            }),
            "m.pt: its pickle (byte 2) refers to memo entry 7, which was never stored");
  EXPECT_EQ(error_text([] { read_pickle(bytes("\x80\x02t."), "s.pt"); }),
            "s.pt: its pickle (byte 2) closes a MARK it never opened");
}

// Lists nested 200,000 deep once overflowed the stack while they were freed; the reader now
// stops at kMaxPickleDepth with one line, and takes what torch.save nests.
TEST(Pickle, NestingIsBoundedAndSaysHowDeep) {
  const auto nested = [](int depth) {  // depth empty lists, each appended to the one before
    return bytes("\x80\x02" + std::string(static_cast<size_t>(depth), ']') +
                 std::string(static_cast<size_t>(depth - 1), 'a') + ".");
  };
  const PickleRef deepest = read_pickle(nested(kMaxPickleDepth + 1), "ok.pt");
  int depth = 0;
  for (const PickleValue* v = deepest.get(); !v->items.empty(); v = v->items[0].get()) ++depth;
  EXPECT_EQ(depth, kMaxPickleDepth);
  EXPECT_EQ(error_text([&] { read_pickle(nested(kMaxPickleDepth + 2), "deep.pt"); }),
            "deep.pt: its pickle (byte " + std::to_string(2 + (kMaxPickleDepth + 2) + kMaxPickleDepth) +
                ") nests containers more than 1000 deep");
  EXPECT_NE(error_text([&] { read_pickle(nested(200'000), "deeper.pt"); }).find("nests containers more than 1000 deep"),
            std::string::npos);
}

// The memo lets a pickle put a container inside itself; a walk of the tree would then never
// end. Both ways of making a cycle are refused.
TEST(Pickle, ACycleIsOneLine) {
  // l = []; l.append(l)
  EXPECT_EQ(error_text([] {
              read_pickle(bytes(std::string("\x80\x02]q\x00h\x00"
                                            "a.",
                                            9)),
                          "self.pt");
            }),
            "self.pt: its pickle (byte 7) puts a container inside itself, which torch.save never does");
  // a = []; b = []; a.append(b); b.append(a)
  EXPECT_EQ(error_text([] {
              read_pickle(bytes(std::string("\x80\x02]q\x00]q\x01"
                                            "ah\x01h\x00"
                                            "a.",
                                            15)),
                          "pair.pt");
            }),
            "pair.pt: its pickle (byte 13) changes a container after placing it in another, which torch.save never "
            "does");
}

}  // namespace
}  // namespace stoker::data
