# Sanitizer builds: configure a separate build directory with one of
#   -DSTOKER_ASAN=ON   AddressSanitizer + UndefinedBehaviorSanitizer
#   -DSTOKER_TSAN=ON   ThreadSanitizer (the pipeline's concurrency tests)
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
