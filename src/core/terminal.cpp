#include "stoker/core/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

namespace stoker {

int terminal_columns(std::FILE* out) {
  const int fd = ::fileno(out);
  if (fd < 0 || ::isatty(fd) != 1) return 0;
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

std::string fit_to_width(const std::string& line, int columns) {
  if (columns <= 0) return line;
  int seen = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    if ((byte & 0xC0) != 0x80 && ++seen > columns) return line.substr(0, i);  // a lead byte
  }
  return line;
}

}  // namespace stoker
