// Private: reading and scanning the small text files under /proc without iostreams or
// per-call allocations — the host reader runs on the sampling thread every second or faster.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker::monitor::host {

// Reads the whole of `path` into *out, reusing its capacity (procfs reports size 0, so the
// file is read until EOF rather than sized with stat). False, with *out empty, if the file
// is missing or unreadable — including a process that exits while it is read (ESRCH).
bool read_small_file(const char* path, std::string* out);

// Splits the next line (without its '\n') off the front of *text; false when none is left.
bool next_line(std::string_view* text, std::string_view* line);

// Splits the next run of non-blank characters off the front of *text; false when none is
// left. Blanks are spaces and tabs (lines are split first).
bool next_field(std::string_view* text, std::string_view* field);

// Drops `count` fields from the front of *text; false if there were fewer.
bool skip_fields(std::string_view* text, int count);

// The whole of `field` as a decimal number; false for anything else (sign, junk, overflow).
bool parse_u64(std::string_view field, uint64_t* out);

// next_field() then parse_u64().
bool next_u64(std::string_view* text, uint64_t* out);

// Appends the decimal digits of `value` to *out (for "<root>/<pid>/stat" paths).
void append_decimal(std::string* out, uint64_t value);

}  // namespace stoker::monitor::host
