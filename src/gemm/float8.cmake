# Float8 QLinearMatMul-21 (SEMANTICS.md §5): the float8 conversions, the
# operator branch, the portable GEMM, its AVX-512 twin and that twin's
# AVX-512 BF16 tile. Included from
# src/gemm/CMakeLists.txt (after QMATMUL_HAS_AVX512_FLAGS is known); the
# AVX-512 files get their own flags and are stubs without them.
target_sources(qmatmul PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../numeric/float8.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../api/float8_operator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/float8_gemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/x86/float8_gemm_avx512.cpp
  ${CMAKE_CURRENT_LIST_DIR}/x86/float8_gemm_avx512bf16.cpp)
check_cxx_compiler_flag("-mavx512f -mavx512bf16" QMATMUL_HAS_AVX512BF16_FLAGS)
if(QMATMUL_HAS_AVX512_FLAGS AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/x86/float8_gemm_avx512.cpp TARGET_DIRECTORY qmatmul
    PROPERTIES COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl")
endif()
if(QMATMUL_HAS_AVX512BF16_FLAGS AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/x86/float8_gemm_avx512bf16.cpp TARGET_DIRECTORY qmatmul
    PROPERTIES COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl;-mavx512bf16")
endif()
