// torch.save files written byte by byte, so the .pt reader is tested (and its damaged files
// made) without Python: the zip archive torch writes around a pickle and its storages.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stoker::testing {

// The pickle opcodes torch.save uses, appended one call at a time (protocol 2).
class PickleWriter {
 public:
  PickleWriter();
  PickleWriter& mark();                                                      // (
  PickleWriter& empty_dict();                                                // }
  PickleWriter& empty_list();                                                // ]
  PickleWriter& text(const std::string& s);                                  // X: a str
  PickleWriter& integer(int64_t v);                                          // J or LONG1
  PickleWriter& boolean(bool v);                                             // NEWTRUE / NEWFALSE
  PickleWriter& global(const std::string& module, const std::string& name);  // c
  PickleWriter& tuple();                                                     // t: the items since the last mark
  PickleWriter& set_items();                                                 // u: key, value pairs since the last mark
  PickleWriter& append();                                                    // a
  PickleWriter& reduce();                                                    // R
  PickleWriter& persistent_id();                                             // Q
  PickleWriter& memo_put(uint8_t key);                                       // q
  PickleWriter& memo_get(uint8_t key);                                       // h
  // torch._utils._rebuild_tensor_v2(persistent_load(("storage", torch.<storage>, key, "cpu",
  // numel)), offset, sizes, strides, False, OrderedDict()), as torch.save writes a tensor.
  PickleWriter& tensor(const std::string& storage, const std::string& key, int64_t numel, int64_t offset,
                       const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);
  std::string stop();  // .: the finished pickle
  std::string bytes() const { return out_; }

 private:
  PickleWriter& ints(const std::vector<int64_t>& values);
  std::string out_;
};

// A torch.save archive: archive/data.pkl, archive/data/<key> for each storage (stored, as
// torch writes them) and archive/version.
std::vector<uint8_t> torch_save_bytes(const std::string& pickle,
                                      const std::vector<std::pair<std::string, std::vector<uint8_t>>>& storages);

}  // namespace stoker::testing
