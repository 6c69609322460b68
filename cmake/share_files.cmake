# Writes the man page and the shell completions by running the built binary (CMakeLists.txt).
# Inputs: BIN (the gpuadvisor binary), OUT_DIR, GZIP (gzip, or empty to leave the man page plain).
file(MAKE_DIRECTORY ${OUT_DIR})
foreach(job "man;gpuadvisor.1" "completion;bash;gpuadvisor.bash" "completion;zsh;_gpuadvisor"
            "completion;fish;gpuadvisor.fish")
  list(POP_BACK job out)
  execute_process(COMMAND ${BIN} ${job} OUTPUT_FILE ${OUT_DIR}/${out} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gpuadvisor ${job} failed (${rc})")
  endif()
endforeach()
if(GZIP)
  # -n: no name or time stamp in the header, so the file is the same on every build.
  execute_process(COMMAND ${GZIP} -9n -c ${OUT_DIR}/gpuadvisor.1 OUTPUT_FILE ${OUT_DIR}/gpuadvisor.1.gz
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip gpuadvisor.1 failed (${rc})")
  endif()
endif()
