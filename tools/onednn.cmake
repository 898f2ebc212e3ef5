# Optional oneDNN for the `qmatmul bench` baseline (tools/onednn_baseline.cpp).
# Include from tools/CMakeLists.txt after qmatmul_cli is defined. When the
# `dnnl` CMake package (Debian: libdnnl-dev) is found, links it and defines
# QMATMUL_HAVE_ONEDNN=1; otherwise the bench runs qmatmul alone.
# -DQMATMUL_WITH_ONEDNN=OFF skips the search.
option(QMATMUL_WITH_ONEDNN "Compare against oneDNN in `qmatmul bench` when it is installed" ON)
# Debian's dnnl-config.cmake does find_package(OpenCL REQUIRED) (the package
# is built with the OpenCL GPU runtime), which would stop the whole configure
# when ocl-icd-opencl-dev (only a Recommends of libdnnl-dev) is missing; look
# for OpenCL first and skip oneDNN with a message instead.
if(QMATMUL_WITH_ONEDNN)
  find_package(OpenCL QUIET)
  if(OpenCL_FOUND)
    find_package(dnnl CONFIG QUIET)
  else()
    message(STATUS "qmatmul bench: OpenCL development files not found; "
                   "install ocl-icd-opencl-dev to enable the oneDNN baseline")
  endif()
endif()
if(QMATMUL_WITH_ONEDNN AND dnnl_FOUND AND TARGET DNNL::dnnl)
  target_link_libraries(qmatmul_cli PRIVATE DNNL::dnnl)
  target_compile_definitions(qmatmul_cli PRIVATE QMATMUL_HAVE_ONEDNN=1)
  message(STATUS "qmatmul bench: oneDNN ${dnnl_VERSION} baseline enabled")
else()
  message(STATUS "qmatmul bench: oneDNN not used (not found or QMATMUL_WITH_ONEDNN=OFF)")
endif()
