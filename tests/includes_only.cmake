# A layer includes only the headers of the layers below it (issue 18). The layering link
# check cannot see a header-only use (an inline function, a type, a `using`): a file of
# ${FOLDER} (recursively) may include only its own headers and those whose path matches
# ${ALLOWED}.
# System and library headers (<...>) are not the tree's and are not looked at.
file(GLOB_RECURSE sources "${SOURCE_DIR}/${FOLDER}/*.cpp" "${SOURCE_DIR}/${FOLDER}/*.hpp")
if(NOT sources)
  message(FATAL_ERROR "${FOLDER}/ has no sources: the check would pass on nothing")
endif()
set(offenders)
foreach(f IN LISTS sources)
  file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS includes)
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"(${FOLDER}|${ALLOWED})/")
      list(APPEND offenders "${f}: ${line}")
    endif()
  endforeach()
endforeach()
if(offenders)
  list(JOIN offenders "\n" text)
  message(FATAL_ERROR "${FOLDER}/ includes more than ${ALLOWED}:\n${text}")
endif()
