# Optional oneDNN for the `qmatmul bench` baseline (tools/onednn_baseline.cpp).
# Include from tools/CMakeLists.txt after qmatmul_cli is defined. When the
# `dnnl` CMake package (Debian: libdnnl-dev) is found, links it and defines
# QMATMUL_HAVE_ONEDNN=1; otherwise the bench runs qmatmul alone.
# -DQMATMUL_WITH_ONEDNN=OFF skips the search.
option(QMATMUL_WITH_ONEDNN "Compare against oneDNN in `qmatmul bench` when it is installed" ON)
# A oneDNN built with the OpenCL GPU runtime (Debian's libdnnl-dev is) has a
# dnnl-config.cmake that does find_package(OpenCL REQUIRED), which stops the
# whole configure when the OpenCL headers are missing (Debian:
# ocl-icd-opencl-dev, only a Recommends of libdnnl-dev). So the config file's
# GPU runtime is read first, and without OpenCL oneDNN is skipped with a
# message instead. A oneDNN without that runtime needs no OpenCL.
if(QMATMUL_WITH_ONEDNN)
  find_file(QMATMUL_DNNL_CONFIG dnnl-config.cmake
            HINTS ${dnnl_DIR}
            PATHS ${CMAKE_PREFIX_PATH} ${CMAKE_SYSTEM_PREFIX_PATH}
            PATH_SUFFIXES lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/dnnl lib/cmake/dnnl lib64/cmake/dnnl)
  set(qmatmul_dnnl_opencl_ok TRUE)
  if(QMATMUL_DNNL_CONFIG)
    file(STRINGS "${QMATMUL_DNNL_CONFIG}" qmatmul_dnnl_ocl REGEX "set\\(DNNL_GPU_RUNTIME \"OCL\"\\)")
    if(qmatmul_dnnl_ocl)
      find_package(OpenCL QUIET)
      if(NOT OpenCL_FOUND)
        set(qmatmul_dnnl_opencl_ok FALSE)
        message(STATUS "qmatmul bench: oneDNN needs the OpenCL development files, not found; "
                       "install ocl-icd-opencl-dev to enable the oneDNN baseline")
      endif()
    endif()
  endif()
  if(qmatmul_dnnl_opencl_ok)
    find_package(dnnl CONFIG QUIET)
  endif()
endif()
if(QMATMUL_WITH_ONEDNN AND dnnl_FOUND AND TARGET DNNL::dnnl)
  target_link_libraries(qmatmul_cli PRIVATE DNNL::dnnl)
  target_compile_definitions(qmatmul_cli PRIVATE QMATMUL_HAVE_ONEDNN=1)
  message(STATUS "qmatmul bench: oneDNN ${dnnl_VERSION} baseline enabled")
else()
  message(STATUS "qmatmul bench: oneDNN not used (not found or QMATMUL_WITH_ONEDNN=OFF)")
endif()
