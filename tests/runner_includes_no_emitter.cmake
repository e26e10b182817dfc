# `run` executes only verified artifacts (docs/run.md): the runner never emits anything
# itself, so no file of runner/ may include an emitter. The layering link check cannot
# see this (the runner links the pipeline, which links the emitters).
file(GLOB sources "${SOURCE_DIR}/runner/*.cpp" "${SOURCE_DIR}/runner/*.hpp")
set(offenders)
foreach(f IN LISTS sources)
  file(STRINGS "${f}" hits REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]emitters/")
  if(hits)
    list(APPEND offenders "${f}: ${hits}")
  endif()
endforeach()
if(offenders)
  list(JOIN offenders "\n" text)
  message(FATAL_ERROR "runner/ includes an emitter:\n${text}")
endif()
