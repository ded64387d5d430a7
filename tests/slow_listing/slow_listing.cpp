// A library preloaded (LD_PRELOAD) into the stoker program to make listing folders slow, as a
// network file system's round trips make it: each opendir or fdopendir of a folder whose path
// starts with $SLOW_LISTING_UNDER first sleeps $SLOW_LISTING_MS milliseconds (100 if unset);
// with $SLOW_LISTING_DEPTH set, only the folders at most that many levels below it (0: the
// folder alone, as a root whose listing is slow and whose class folders are not). With
// $SLOW_STAT_MS set, each stat of a path under $SLOW_LISTING_UNDER also first sleeps that long
// (as on a loaded machine or a slow server, even the checks of a path that fail take a while).
// For the tests of what the commands show while they list (tests/integration, python/tests).
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

bool is_under(const char* path) {
  const char* under = std::getenv("SLOW_LISTING_UNDER");
  return path != nullptr && under != nullptr && *under != '\0' && std::strncmp(path, under, std::strlen(under)) == 0;
}

void wait_ms(const char* ms_text, long otherwise) {
  const long ms = ms_text != nullptr && *ms_text != '\0' ? std::atol(ms_text) : otherwise;
  timespec left{ms / 1000, (ms % 1000) * 1000000};
  while (::nanosleep(&left, &left) != 0) {
  }
}

void pause_before_listing(const char* path) {
  if (!is_under(path)) return;
  const char* under = std::getenv("SLOW_LISTING_UNDER");
  if (const char* depth = std::getenv("SLOW_LISTING_DEPTH"); depth != nullptr && *depth != '\0') {
    long levels = 0;
    const char* rest = path + std::strlen(under);
    for (const char* c = rest; *c != '\0'; ++c) {
      if (*c == '/' && c[1] != '/' && c[1] != '\0') ++levels;  // "a/", "a//b": one level each
    }
    if (*rest != '\0' && *rest != '/') ++levels;  // under "/d/data", "/d/data2" is not the folder itself
    if (levels > std::atol(depth)) return;
  }
  wait_ms(std::getenv("SLOW_LISTING_MS"), 100);
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

extern "C" int stat(const char* path, struct stat* out) {
  static const auto next = real<int (*)(const char*, struct stat*)>("stat");
  if (is_under(path)) wait_ms(std::getenv("SLOW_STAT_MS"), 0);
  return next(path, out);
}
