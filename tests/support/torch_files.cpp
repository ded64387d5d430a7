#include "support/torch_files.h"

#include <cstdint>

#include "support/numpy_files.h"

namespace stoker::testing {

namespace {

void little_endian(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

PickleWriter::PickleWriter() : out_("\x80\x02", 2) {}

PickleWriter& PickleWriter::mark() {
  out_ += '(';
  return *this;
}
PickleWriter& PickleWriter::empty_dict() {
  out_ += '}';
  return *this;
}
PickleWriter& PickleWriter::empty_list() {
  out_ += ']';
  return *this;
}
PickleWriter& PickleWriter::tuple() {
  out_ += 't';
  return *this;
}
PickleWriter& PickleWriter::set_items() {
  out_ += 'u';
  return *this;
}
PickleWriter& PickleWriter::append() {
  out_ += 'a';
  return *this;
}
PickleWriter& PickleWriter::reduce() {
  out_ += 'R';
  return *this;
}
PickleWriter& PickleWriter::persistent_id() {
  out_ += 'Q';
  return *this;
}
PickleWriter& PickleWriter::boolean(bool v) {
  out_ += static_cast<char>(v ? 0x88 : 0x89);
  return *this;
}

PickleWriter& PickleWriter::text(const std::string& s) {
  out_ += 'X';
  little_endian(&out_, s.size(), 4);
  out_ += s;
  return *this;
}

PickleWriter& PickleWriter::integer(int64_t v) {
  if (v >= INT32_MIN && v <= INT32_MAX) {
    out_ += 'J';
    little_endian(&out_, static_cast<uint32_t>(v), 4);
  } else {
    out_ += '\x8a';
    out_ += '\x08';
    little_endian(&out_, static_cast<uint64_t>(v), 8);
  }
  return *this;
}

PickleWriter& PickleWriter::global(const std::string& module, const std::string& name) {
  out_ += 'c' + module + '\n' + name + '\n';
  return *this;
}

PickleWriter& PickleWriter::memo_put(uint8_t key) {
  out_ += 'q';
  out_ += static_cast<char>(key);
  return *this;
}

PickleWriter& PickleWriter::memo_get(uint8_t key) {
  out_ += 'h';
  out_ += static_cast<char>(key);
  return *this;
}

PickleWriter& PickleWriter::ints(const std::vector<int64_t>& values) {
  mark();
  for (const int64_t v : values) integer(v);
  return tuple();
}

PickleWriter& PickleWriter::tensor(const std::string& storage, const std::string& key, int64_t numel, int64_t offset,
                                   const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  global("torch._utils", "_rebuild_tensor_v2");
  mark();
  mark().text("storage").global("torch", storage).text(key).text("cpu").integer(numel).tuple().persistent_id();
  integer(offset);
  ints(sizes);
  ints(strides);
  boolean(false);
  global("collections", "OrderedDict").mark().tuple().reduce();
  tuple();
  return reduce();
}

std::string PickleWriter::stop() {
  out_ += '.';
  return out_;
}

std::vector<uint8_t> torch_save_bytes(const std::string& pickle,
                                      const std::vector<std::pair<std::string, std::vector<uint8_t>>>& storages) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> members;
  members.emplace_back("archive/data.pkl", std::vector<uint8_t>(pickle.begin(), pickle.end()));
  for (const auto& [key, bytes] : storages) members.emplace_back("archive/data/" + key, bytes);
  members.emplace_back("archive/version", std::vector<uint8_t>{'3', '\n'});
  return zip_bytes(members);
}

}  // namespace stoker::testing
