// Private: the libpng error plumbing (the error callback keeps the message and longjmps back
// to run_guarded()), kept in one place so the PNG decoder and encoder fail the same, safe way.
#pragma once

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <type_traits>

namespace stoker::data {

// The error_ptr given to png_create_*_struct: holds the message of the last failure.
struct PngErrorState {
  char message[192] = {};
};

inline void on_png_error(png_structp png, png_const_charp message) {
  auto* state = static_cast<PngErrorState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof(state->message), "%s", message);
  png_longjmp(png, 1);
}

// Warnings concern ancillary chunks (bad iCCP, text, ...) that do not change the pixels.
inline void on_png_warning(png_structp, png_const_charp) {}

// Runs `fn` (which calls libpng) with png_jmpbuf(png) armed; false if libpng failed, the
// message is then in the PngErrorState. `fn` must keep only trivially destructible locals.
template <typename Fn>
bool run_guarded(png_structp png, Fn&& fn) {
  static_assert(std::is_trivially_destructible_v<std::remove_reference_t<Fn>>);
  if (setjmp(png_jmpbuf(png)) != 0) return false;
  fn();
  return true;
}

}  // namespace stoker::data
