// Which sanitizer a test program is built with, for the tests whose expectations differ under
// one: GCC defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang answers __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define STOKER_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STOKER_UNDER_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define STOKER_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STOKER_UNDER_TSAN 1
#endif
#endif
