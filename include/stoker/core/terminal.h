// stoker/core/terminal.h — lines redrawn in place must fit the terminal: a line that wraps
// cannot be overwritten with '\r' and scrolls instead.
#pragma once

#include <cstdio>
#include <string>

namespace stoker {

// Columns of the terminal `out` is connected to; 0 when it is not a terminal.
int terminal_columns(std::FILE* out);

// `line` cut to at most `columns` characters (UTF-8 code points, which is what the box and
// degree symbols in stoker's lines need); unchanged when columns <= 0.
std::string fit_to_width(const std::string& line, int columns);

}  // namespace stoker
