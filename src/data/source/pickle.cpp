// The pickle subset of torch.save: a stack machine over the opcodes protocols 2 to 5 use for
// containers, numbers, strings, globals, REDUCE, BUILD and persistent ids.
#include "pickle.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "stoker/core/error.h"

namespace stoker::data {

namespace {

using Node = std::shared_ptr<PickleValue>;

class Unpickler {
 public:
  Unpickler(std::span<const uint8_t> bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  PickleRef run() {
    while (true) {
      const size_t at = pos_;
      const uint8_t op = take(1)[0];
      switch (op) {
        case 0x80:
          take(1);
          break;  // PROTO
        case 0x95:
          take(8);
          break;  // FRAME
        case '.':
          return pop(at);  // STOP
        case '(':
          marks_.push_back(stack_.size());
          break;
        case '}':
          push(make(PickleValue::Kind::kDict));
          break;
        case ']':
        case ')':
          push(make(PickleValue::Kind::kTuple));
          break;
        case 'N':
          push(make(PickleValue::Kind::kNone));
          break;
        case 0x88:
        case 0x89:
          push(integer(op == 0x88 ? 1 : 0, PickleValue::Kind::kBool));
          break;
        case 'K':
          push(integer(unsigned_le(take(1))));
          break;
        case 'M':
          push(integer(unsigned_le(take(2))));
          break;
        case 'J':
          push(integer(static_cast<int32_t>(unsigned_le(take(4)))));
          break;
        case 0x8a:
          push(integer(long1(take(unsigned_le(take(1))), at)));
          break;
        case 'G': {
          const auto raw = take(8);
          uint64_t bits = 0;
          for (const uint8_t b : raw) bits = (bits << 8) | b;  // big-endian
          auto v = make(PickleValue::Kind::kFloat);
          v->number = std::bit_cast<double>(bits);
          push(v);
          break;
        }
        case 'X':
        case 'B':
        case 'T':
          push(string(take(unsigned_le(take(4)))));
          break;
        case 0x8c:
        case 'C':
        case 'U':
          push(string(take(unsigned_le(take(1)))));
          break;
        case 0x8d:
        case 0x8e:
          push(string(take(unsigned_le(take(8)))));
          break;
        case 'c': {
          const std::string module = line(at), qualified = line(at);
          push(global(module + "." + qualified));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          const Node qualified = pop(at), module = pop(at);
          push(global(module->text + "." + qualified->text));
          break;
        }
        case 'q':
          memo_[unsigned_le(take(1))] = top(at);
          break;
        case 'r':
          memo_[unsigned_le(take(4))] = top(at);
          break;
        case 0x94:
          memo_[memo_.size()] = top(at);
          break;  // MEMOIZE
        case 'h':
        case 'j': {
          const uint64_t key = unsigned_le(take(op == 'h' ? 1 : 4));
          const auto found = memo_.find(key);
          if (found == memo_.end()) fail(at, fmt::format("refers to memo entry {}, which was never stored", key));
          push(found->second);
          break;
        }
        case 't':
        case 'l':
          push(container(PickleValue::Kind::kTuple, pop_mark(at), at));
          break;
        case 'd': {
          const std::vector<Node> items = pop_mark(at);
          auto dict = make(PickleValue::Kind::kDict);
          set_items(dict, items, at);
          push(dict);
          break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {
          std::vector<Node> items(static_cast<size_t>(op - 0x84));
          for (size_t i = items.size(); i-- > 0;) items[i] = pop(at);
          push(container(PickleValue::Kind::kTuple, items, at));
          break;
        }
        case 'a': {
          const Node item = pop(at);
          const Node list = top(at);
          place_in(list, {item}, at);
          list->items.push_back(item);
          break;
        }
        case 'e': {
          const std::vector<Node> items = pop_mark(at);
          const Node list = top(at);
          place_in(list, items, at);
          list->items.insert(list->items.end(), items.begin(), items.end());
          break;
        }
        case 's': {
          const Node value = pop(at), key = pop(at);
          set_items(top(at), {key, value}, at);
          break;
        }
        case 'u': {
          const std::vector<Node> items = pop_mark(at);
          set_items(top(at), items, at);
          break;
        }
        case 'R':
        case 0x81: {  // REDUCE, NEWOBJ: kept as callable(args); an empty OrderedDict (state_dict) is a dict
          const Node args = pop(at), callable = pop(at);
          const bool ordered_dict = callable->is_global("collections.OrderedDict") &&
                                    args->kind == PickleValue::Kind::kTuple && args->items.empty();
          push(ordered_dict ? make(PickleValue::Kind::kDict)
                            : container(PickleValue::Kind::kReduce, {callable, args}, at));
          break;
        }
        case 'Q':
          push(container(PickleValue::Kind::kPersistent, {pop(at)}, at));
          break;
        case 'b': {  // BUILD: an object becomes {object, state} in place, so the memo sees it too; the
                     // attributes of a dict (an OrderedDict's _metadata) are dropped
          const Node state = pop(at), object = top(at);
          if (object->kind != PickleValue::Kind::kReduce) break;
          const Node unbuilt = make(object->kind);
          *unbuilt = *object;
          depth_[unbuilt.get()] = depth_of(object);
          place_in(object, {unbuilt, state}, at);
          *object = PickleValue{};
          object->kind = PickleValue::Kind::kBuilt;
          object->items = {unbuilt, state};
          break;
        }
        default:
          fail(at, fmt::format("uses pickle opcode 0x{:02x}, which a torch.save file of tensors does not; save "
                               "the tensors alone (torch.save({{\"x\": x, \"y\": y}}, path))",
                               op));
      }
    }
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    throw DataError(fmt::format("{}: its pickle (byte {}) {}", name_, at, what));
  }
  std::span<const uint8_t> take(uint64_t n) {
    if (n > bytes_.size() - pos_) fail(pos_, "is truncated");
    const auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  static uint64_t unsigned_le(std::span<const uint8_t> raw) {
    uint64_t v = 0;
    for (size_t i = raw.size(); i-- > 0;) v = (v << 8) | raw[i];
    return v;
  }
  int64_t long1(std::span<const uint8_t> raw, size_t at) const {
    if (raw.size() > 8) fail(at, "holds an integer wider than 64 bits");
    if (raw.empty()) return 0;
    uint64_t v = unsigned_le(raw);
    if (raw.size() < 8 && (raw.back() & 0x80)) v |= ~uint64_t{0} << (8 * raw.size());  // sign-extend
    return static_cast<int64_t>(v);
  }
  std::string line(size_t at) {
    const auto rest = bytes_.subspan(pos_);
    const auto* end = static_cast<const uint8_t*>(std::memchr(rest.data(), '\n', rest.size()));
    if (end == nullptr) fail(at, "has a GLOBAL without its newline");
    std::string text(reinterpret_cast<const char*>(rest.data()), static_cast<size_t>(end - rest.data()));
    pos_ += text.size() + 1;
    return text;
  }
  // Every node lives until the parse ends, so the addresses placed_ and depth_ hold stay theirs.
  Node make(PickleValue::Kind kind) {
    auto v = std::make_shared<PickleValue>();
    v->kind = kind;
    made_.push_back(v);
    return v;
  }
  Node integer(int64_t value, PickleValue::Kind kind = PickleValue::Kind::kInt) {
    auto v = make(kind);
    v->integer = value;
    return v;
  }
  Node string(std::span<const uint8_t> raw) {
    auto v = make(PickleValue::Kind::kString);
    v->text.assign(reinterpret_cast<const char*>(raw.data()), raw.size());
    return v;
  }
  Node global(std::string dotted) {
    auto v = make(PickleValue::Kind::kGlobal);
    v->text = std::move(dotted);
    return v;
  }
  Node container(PickleValue::Kind kind, const std::vector<Node>& items, size_t at) {
    auto v = make(kind);
    place_in(v, items, at);
    v->items.assign(items.begin(), items.end());
    return v;
  }
  void set_items(const Node& dict, const std::vector<Node>& items, size_t at) {
    if (dict->kind != PickleValue::Kind::kDict || items.size() % 2 != 0) fail(at, "sets items on what is not a dict");
    place_in(dict, items, at);
    for (size_t i = 0; i < items.size(); i += 2) dict->entries.emplace_back(items[i], items[i + 1]);
  }
  // Before `items` go into `parent`: a container placed in another is never changed again, so
  // no container can come to hold itself; and the nesting stays within kMaxPickleDepth.
  void place_in(const Node& parent, const std::vector<Node>& items, size_t at) {
    if (placed_.contains(parent.get()))
      fail(at, "changes a container after placing it in another, which torch.save never does");
    int depth = depth_of(parent);
    for (const Node& item : items) {
      if (item == parent) fail(at, "puts a container inside itself, which torch.save never does");
      depth = std::max(depth, depth_of(item) + 1);
      placed_.insert(item.get());
    }
    if (depth > kMaxPickleDepth) fail(at, fmt::format("nests containers more than {} deep", kMaxPickleDepth));
    depth_[parent.get()] = depth;
  }
  int depth_of(const Node& v) const {
    const auto found = depth_.find(v.get());
    return found == depth_.end() ? 0 : found->second;
  }
  void push(Node v) { stack_.push_back(std::move(v)); }
  Node top(size_t at) const {
    if (stack_.empty()) fail(at, "reads an empty stack");
    return stack_.back();
  }
  Node pop(size_t at) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail(at, "pops past its mark or an empty stack");
    Node v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  std::vector<Node> pop_mark(size_t at) {
    if (marks_.empty()) fail(at, "closes a MARK it never opened");
    const size_t from = marks_.back();
    marks_.pop_back();
    std::vector<Node> items(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
    stack_.resize(from);
    return items;
  }

  std::span<const uint8_t> bytes_;
  const std::string& name_;
  size_t pos_ = 0;
  std::vector<Node> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Node> memo_;
  std::vector<Node> made_;
  std::unordered_set<const PickleValue*> placed_;      // containers placed in another one
  std::unordered_map<const PickleValue*, int> depth_;  // how deep the containers below one nest
};

}  // namespace

PickleRef read_pickle(std::span<const uint8_t> bytes, const std::string& name) { return Unpickler(bytes, name).run(); }

}  // namespace stoker::data
