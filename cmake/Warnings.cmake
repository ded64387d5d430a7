# Warning flags for stoker's own targets (not for third-party code).
function(stoker_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wcast-align -Wunused)
  if(STOKER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
