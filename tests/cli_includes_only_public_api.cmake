# The command line is options and printing over the public API (DESIGN.md "Pipeline":
# one way through; issue 18): a file of cli/ includes only cli/ and zpolicy/ headers of
# the tree, so everything it shows is something an embedder can get too. The layering
# link check cannot see this (the binary links the whole library).
file(GLOB sources "${SOURCE_DIR}/cli/*.cpp" "${SOURCE_DIR}/cli/*.hpp")
set(offenders)
foreach(f IN LISTS sources)
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
