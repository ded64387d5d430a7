// stoker/core/dynamic_library.h — a shared library opened at run time (RAII over dlopen,
// dlsym and dlclose), for optional dependencies such as NVML that stoker must build and run
// without.
//
// Ownership: a DynamicLibrary owns one dlopen reference; destroying it calls dlclose, which
// may unmap the code. Pointers taken from symbol() or get() dangle from then on, so keep the
// DynamicLibrary alive as long as anything may use them. It is neither copyable nor movable:
// keep it behind the unique_ptr open() returns.
//
// Thread safety: open() and symbol() may be called from any thread (dlopen and dlsym are
// thread-safe, and dlerror's message is per thread). Destroy it only once no thread can still
// call into the library.
#pragma once

#include <memory>
#include <string>

namespace stoker {

class DynamicLibrary {
 public:
  // Opens `name` (a file name searched the usual way, or a path with a '/'), resolving all of
  // its undefined symbols now so that a broken install fails here rather than mid-run.
  // On failure returns nullptr and, if `error` is not null, sets it to one line naming the
  // library, e.g. "libnvidia-ml.so.1: cannot open shared object file: No such file or directory".
  static std::unique_ptr<DynamicLibrary> open(const std::string& name, std::string* error);

  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // The address of `symbol_name`, or nullptr when the library does not export it (an optional
  // function of a newer library version, say).
  void* symbol(const char* symbol_name) const;

  // symbol() as a pointer to a function of type Fn, e.g. get<int(unsigned*)>("f").
  // The caller vouches that Fn is the symbol's real type: nothing can check it.
  template <typename Fn>
  Fn* get(const char* symbol_name) const {
    return reinterpret_cast<Fn*>(symbol(symbol_name));
  }

  // The name open() was given.
  const std::string& name() const { return name_; }

 private:
  DynamicLibrary(void* handle, std::string name);
  void* handle_;
  std::string name_;
};

}  // namespace stoker
