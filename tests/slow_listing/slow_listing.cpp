// A library preloaded (LD_PRELOAD) into the stoker program to make listing folders slow, as a
// network file system's round trips make it: each opendir or fdopendir of a folder whose path
// starts with $SLOW_LISTING_UNDER first sleeps $SLOW_LISTING_MS milliseconds (100 if unset).
// For the tests of what the commands show while they list (tests/integration).
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

void pause_before_listing(const char* path) {
  const char* under = std::getenv("SLOW_LISTING_UNDER");
  if (path == nullptr || under == nullptr || *under == '\0' || std::strncmp(path, under, std::strlen(under)) != 0) {
    return;
  }
  const char* ms_text = std::getenv("SLOW_LISTING_MS");
  const long ms = ms_text != nullptr ? std::atol(ms_text) : 100;
  timespec pause{ms / 1000, (ms % 1000) * 1000000};
  while (::nanosleep(&pause, &pause) != 0) {
  }
}

template <typename Function>
Function real(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" DIR* opendir(const char* name) {
  static const auto next = real<DIR* (*)(const char*)>("opendir");
  pause_before_listing(name);
  return next(name);
}

extern "C" DIR* fdopendir(int fd) {
  static const auto next = real<DIR* (*)(int)>("fdopendir");
  char link[64];
  char path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, path, sizeof path - 1);
  if (n > 0) {
    path[n] = '\0';
    pause_before_listing(path);
  }
  return next(fd);
}
