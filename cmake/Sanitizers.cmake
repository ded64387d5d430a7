# Sanitizer builds: configure a separate build directory with one of
#   -DSTOKER_ASAN=ON   AddressSanitizer + UndefinedBehaviorSanitizer
#   -DSTOKER_TSAN=ON   ThreadSanitizer (the pipeline's concurrency tests)
#   -DSTOKER_FUZZ=ON   ASan + UBSan, and every object compiled with libFuzzer's coverage
#                      (fuzzer-no-link): the same build runs the tests and the fuzz targets of
#                      tests/fuzz. Needs clang; without libtorch.
if(STOKER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "STOKER_FUZZ needs clang (libFuzzer is clang's): configure with "
                        "CC=clang CXX=clang++ in a build directory of its own")
  endif()
  if(STOKER_WITH_TORCH)
    message(FATAL_ERROR "STOKER_FUZZ builds the torch-free libraries only: add -DSTOKER_WITH_TORCH=OFF")
  endif()
  set(STOKER_ASAN ON)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(STOKER_ASAN AND STOKER_TSAN)
  message(FATAL_ERROR "STOKER_ASAN and STOKER_TSAN cannot be combined; use two build directories")
endif()
if(STOKER_ASAN)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(STOKER_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
