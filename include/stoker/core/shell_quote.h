// stoker/core/shell_quote.h — a word written so that a POSIX shell reads it back as exactly
// that word, for the command lines stoker prints for the user to paste ("report: stoker
// report RUN", "resume with: stoker train --resume CHECKPOINT").
//
// A word made only of letters, digits and @%+=:,./_- (ASCII) is written as it is, so that
// plain paths such as runs/2026-11-27_11-53-32 stay readable; any other word, the empty one
// included, is put in single quotes, inside which a shell expands nothing, with each ' written
// as '\'' (close, an escaped quote, open). Newlines, `;`, `$(...)`, backquotes, spaces, globs,
// `~` and bytes that are not ASCII are thus all taken literally, as by Python's shlex.quote.
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace stoker {

std::string shell_quote(std::string_view word);

}  // namespace stoker
