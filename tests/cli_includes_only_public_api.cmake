# The command line is options and printing over the public API (DESIGN.md "Pipeline":
# one way through; issue 18): a file of cli/ includes only cli/ and zpolicy/ headers of
# the tree, so everything it shows is something an embedder can get too. The layering
# link check cannot see this (the binary links the whole library).
# `inspect` still reads artifacts with the analyzer's disassembler and single-call BPF
# evaluator, which are not in the public API yet (issue 18).
cmake_policy(SET CMP0057 NEW)
set(allowed_exceptions "cmd_inspect.cpp")
file(GLOB sources "${SOURCE_DIR}/cli/*.cpp" "${SOURCE_DIR}/cli/*.hpp")
set(offenders)
foreach(f IN LISTS sources)
  get_filename_component(name "${f}" NAME)
  if(name IN_LIST allowed_exceptions)
    continue()
  endif()
  file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS includes)
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"(cli|zpolicy)/")
      list(APPEND offenders "${f}: ${line}")
    endif()
  endforeach()
endforeach()
if(offenders)
  list(JOIN offenders "\n" text)
  message(FATAL_ERROR "cli/ includes more than the public API:\n${text}")
endif()
