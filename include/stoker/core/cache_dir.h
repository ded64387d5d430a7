// stoker/core/cache_dir.h — where stoker keeps what it can make again (generated datasets,
// Standardize's fitted statistics): $STOKER_CACHE, else $XDG_CACHE_HOME/stoker, else
// ~/.cache/stoker, else ./.stoker-cache. Read from the environment at each call; creates
// nothing. Thread safety: as std::getenv (safe while nothing sets the environment).
#pragma once

#include <string>

namespace stoker {

std::string cache_dir();

}  // namespace stoker
