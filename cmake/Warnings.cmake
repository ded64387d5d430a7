# Warning flags for stoker's own targets (not for third-party code).
if(STOKER_THREAD_SAFETY AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "STOKER_THREAD_SAFETY needs clang (the analysis is clang's): configure with "
                      "CC=clang CXX=clang++ in a build directory of its own")
endif()

function(stoker_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wcast-align -Wunused)
  # GCC 12 at -O3 (Release) reports -Wrestrict inside libstdc++'s own std::string code
  # (char_traits.h memcpy "may overlap up to 9223372036854775811 bytes"), a known false
  # positive of that release (GCC bug 105329); it would stop a Release build with -Werror.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(STOKER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # Shared state is annotated (stoker/core/mutex.h); clang checks every access holds its lock.
  if(STOKER_THREAD_SAFETY)
    target_compile_options(${target} PRIVATE -Wthread-safety -Werror=thread-safety)
  endif()
endfunction()
