# Float8 QLinearMatMul-21 (SEMANTICS.md §5): the float8 conversions, the
# operator branch, the portable GEMM, its AVX-512 twin and that twin's
# AVX-512 BF16 tile. Included from src/gemm/CMakeLists.txt (which defines
# QMATMUL_AVX512_TEST); the AVX-512 files get their own flags and are stubs
# without them.
target_sources(qmatmul PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../numeric/float8.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../api/float8_operator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/float8_gemm.cpp)
qmatmul_isa_source(x86/float8_gemm_avx512.cpp QMATMUL_HAVE_FLOAT8_AVX512 "${QMATMUL_AVX512_TEST}"
  -mavx512f -mavx512bw -mavx512dq -mavx512vl)
qmatmul_isa_source(x86/float8_gemm_avx512bf16.cpp QMATMUL_HAVE_FLOAT8_AVX512BF16
  "__m512 f = _mm512_setzero_ps(); __m512bh h = _mm512_cvtne2ps_pbh(f, f); return _mm512_reduce_add_ps(_mm512_dpbf16_ps(f, h, h)) > 0;"
  -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512bf16)
