#include "stoker/data/open_progress.h"

#include <fmt/format.h>

#include <cmath>

#include "file_reader.h"

namespace stoker::data {

namespace {
thread_local OpenProgress* t_progress = nullptr;
}  // namespace

OpenProgressScope::OpenProgressScope(OpenProgress* progress) : before_(t_progress) { t_progress = progress; }
OpenProgressScope::~OpenProgressScope() { t_progress = before_; }

OpenProgress* current_open_progress() { return t_progress; }

std::string open_progress_text(const std::string& path, uint64_t files, uint64_t parts_done, uint64_t parts,
                               bool shards, double seconds) {
  std::string line = shards ? fmt::format("indexing {}: {} of {} files ({} samples)", path, with_commas(parts_done),
                                          with_commas(parts), with_commas(files))
                     : parts == 0 ? fmt::format("listing {}", path)
                                  : fmt::format("listing {}: {} files in {} of {} class folders", path,
                                                with_commas(files), with_commas(parts_done), with_commas(parts));
  line += fmt::format(", {:.0f} s", std::floor(seconds));
  if (parts_done > 0 && parts > parts_done) {
    const double left = seconds * static_cast<double>(parts - parts_done) / static_cast<double>(parts_done);
    line += fmt::format("; about {:.0f} s left", std::ceil(left));
  }
  return line;
}

std::string open_progress_text(const std::string& path, const OpenProgress& progress, double seconds) {
  return open_progress_text(path, progress.files, progress.parts_done, progress.parts, progress.shards, seconds);
}

}  // namespace stoker::data
