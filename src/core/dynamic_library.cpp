#include "stoker/core/dynamic_library.h"

#include <dlfcn.h>

#include <utility>

namespace stoker {

std::unique_ptr<DynamicLibrary> DynamicLibrary::open(const std::string& name, std::string* error) {
  // RTLD_LOCAL: the library's symbols must not satisfy anyone else's (a fake NVML in tests,
  // or two libraries exporting the same C names).
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    if (error != nullptr) {
      const char* why = ::dlerror();
      std::string message = why != nullptr ? why : "cannot be opened";
      // glibc names the file in its message; make sure every libc does.
      if (message.find(name) == std::string::npos) message = name + ": " + message;
      *error = std::move(message);
    }
    return nullptr;
  }
  return std::unique_ptr<DynamicLibrary>(new DynamicLibrary(handle, name));
}

DynamicLibrary::DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}

DynamicLibrary::~DynamicLibrary() { ::dlclose(handle_); }

void* DynamicLibrary::symbol(const char* symbol_name) const { return ::dlsym(handle_, symbol_name); }

}  // namespace stoker
