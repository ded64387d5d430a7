// Private: the libjpeg error plumbing (error_exit formats the message and longjmps back to
// run_guarded()), kept in one place so the JPEG decoder and encoder fail the same, safe way.
#pragma once

#include <csetjmp>
#include <cstdio>
#include <type_traits>

// jpeglib.h needs FILE and size_t declared before it.
#include <jpeglib.h>
// after jpeglib.h
#include <jerror.h>

namespace stoker::data {

// One libjpeg error manager plus where to jump and the message of the last failure.
struct ErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg hands us a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

// Formats libjpeg's current message into err->message and jumps back to run_guarded().
[[noreturn]] inline void fail_with_message(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

inline void on_error_exit(j_common_ptr cinfo) { fail_with_message(cinfo); }

// libjpeg only warns about corrupt or missing entropy-coded data and then fills in gray, as
// if nothing happened. A sample with invented pixels is a bad sample, so those warnings are
// failures. Warnings about metadata that does not affect pixels are let through.
inline void fail_on_data_warnings(j_common_ptr cinfo, int msg_level) {
  if (msg_level >= 0) return;  // trace and informational messages
  switch (cinfo->err->msg_code) {
    case JWRN_JFIF_MAJOR:   // unknown JFIF version: the JFIF marker is not used for pixels
    case JWRN_ADOBE_XFORM:  // unknown Adobe transform: libjpeg then guesses like everyone
    case JWRN_BOGUS_ICC:    // broken ICC profile: we do not apply ICC profiles
      cinfo->err->num_warnings++;
      return;
    default:
      fail_with_message(cinfo);
  }
}

// Sets up `err` with our error_exit and the caller's warning policy (`emit_message`);
// returns what goes into cinfo.err.
inline jpeg_error_mgr* install_error_manager(ErrorManager* err, void (*emit_message)(j_common_ptr, int)) {
  jpeg_error_mgr* pub = jpeg_std_error(&err->pub);
  pub->error_exit = on_error_exit;
  pub->emit_message = emit_message;
  return pub;
}

// Runs `fn` (which calls libjpeg) with the error manager armed. Returns false if libjpeg
// failed; the message is then in err->message. `fn` must keep only trivially destructible
// locals: a longjmp out of it skips their destructors. The objects libjpeg modifies live in
// the caller's frame, not in this one, so they keep their values across the longjmp.
template <typename Fn>
bool run_guarded(ErrorManager* err, Fn&& fn) {
  static_assert(std::is_trivially_destructible_v<std::remove_reference_t<Fn>>);
  err->pub.msg_code = 0;  // so a stale code is never mistaken for this call's failure
  err->message[0] = '\0';
  if (setjmp(err->jump) != 0) return false;
  fn();
  return true;
}

}  // namespace stoker::data
