# What keeps a build affordable on a small machine (docs/TESTING.md, "Build time").

# ccache, when it is installed: a second build of the same sources with the same flags (another
# build folder, a fresh clone, CI after a local build) takes its objects from the user's cache
# (~/.cache/ccache). The sloppiness lets it cache the translation units that use a precompiled
# header, and ignore the file times a fresh clone changes.
option(STOKER_CCACHE "Compile through ccache when it is installed" ON)
if(STOKER_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(STOKER_CCACHE_PROGRAM ccache)
  if(STOKER_CCACHE_PROGRAM)
    set(launcher ${CMAKE_COMMAND} -E env
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        ${STOKER_CCACHE_PROGRAM})
    set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
    message(STATUS "stoker: compiling through ${STOKER_CCACHE_PROGRAM}")
  endif()
endif()


# Every translation unit pays for the headers it includes before its own code starts: 8-15 s
# for libtorch's, 1-3 s for GoogleTest, fmt and CLI11. A unity build compiles a target's files
# in batches (CMake's UNITY_BUILD), so that cost is paid once per batch. Off, each file is its
# own translation unit: quicker to rebuild after a one-file change, slower from scratch.
option(STOKER_UNITY_BUILD "Compile each target's files in batches (a unity build)" ON)
set(STOKER_UNITY_BATCH_SIZE 8 CACHE STRING "Files per batch of a unity build")
if(STOKER_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${STOKER_UNITY_BATCH_SIZE})
  # GCC warns when a class has a member whose type is in an anonymous namespace and the class
  # is not in the main file; in a batch every file is an included one, so the warning would
  # fire on each .cpp-local Impl/State struct (GCC's -Wsubobject-linkage).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endif()
