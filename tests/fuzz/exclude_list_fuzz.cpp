// The exclude list (stoker/data/exclude_list.h: a name per line, '#' comments, tabs, escapes)
// as `stoker train --exclude-list` reads it, applied to a source whose samples are named by the
// list's own first lines; and the round trip of the input as one sample's name: the line
// exclude_list_name writes reads back as the name.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/source/image_list.h"
#include "data/source/relative_path.h"
#include "fuzz_input.h"
#include "stoker/data/exclude_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string list = stoker::fuzz::write_file("exclude.txt", data, size);
  const std::string root = (stoker::fuzz::scratch_dir() / "data").string();
  std::filesystem::create_directories(root);  // a folder: names are relative to it, not to its parent

  // A source of up to 8 samples named root/<line> by the list's first lines, and one more.
  std::vector<std::string> paths;
  std::string_view rest(text);
  while (!rest.empty() && paths.size() < 8) {
    const size_t end = rest.find('\n');
    paths.push_back(root + "/" + stoker::data::unescape_exclude_list_name(rest.substr(0, end)));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  paths.push_back(root + "/never-listed.jpg");
  std::vector<int64_t> labels(paths.size(), 0);
  std::shared_ptr<const stoker::data::Source> source =
      stoker::data::open_image_list("fuzz", paths, std::move(labels), {"a"});
  stoker::fuzz::expect_clean_outcome([&] {
    const stoker::data::Excluded left = stoker::data::exclude_listed(source, list, root);
    if (left.source->size() + left.excluded != source->size()) std::abort();
  });

  // The input as a sample's name below the root: the line written for it names it again.
  if (stoker::data::plain_relative(text)) {
    const std::string line = stoker::data::exclude_list_name(root + "/" + text, root);
    if (line.find('\n') != std::string::npos || stoker::data::unescape_exclude_list_name(line) != text) std::abort();
  }
  return 0;
}
