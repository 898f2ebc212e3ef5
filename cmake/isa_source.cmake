# qmatmul_isa_source(<file> <result var> <intrinsic test body> <flags>...)
#
# Adds <file> (relative to the calling directory) to the qmatmul library and,
# when the compiler accepts every flag and compiles <body> with them against
# <immintrin.h>, compiles that one file with those flags, so the rest of the
# library keeps the baseline instruction set. Otherwise the file is built
# without them: each such file then compiles to its stub ("not compiled").
# Used for every file that holds one instruction set: the int8 microkernels,
# the vectorized epilogues and packers, and the float8 GEMM.
include_guard(GLOBAL)
include(CheckCXXCompilerFlag)
include(CheckCXXSourceCompiles)

# The test body for AVX-512 VNNI, shared by the kernel file and the packer.
set(QMATMUL_PROBE_AVX512VNNI
    "__m512i z = _mm512_setzero_si512(); z = _mm512_dpbusd_epi32(z, z, z); return _mm512_reduce_add_epi32(z);")
# The test body for AVX2, shared by the AVX2 kernel file and its peak probe.
set(QMATMUL_PROBE_AVX2
    "__m256i y = _mm256_setzero_si256(); y = _mm256_madd_epi16(y, y); return _mm256_extract_epi32(y, 0);")

function(qmatmul_isa_source file var body)
  set(flags ${ARGN})
  set(all_flags_ok TRUE)
  foreach(flag IN LISTS flags)
    string(MAKE_C_IDENTIFIER "QMATMUL_HAS_FLAG${flag}" flag_var)
    check_cxx_compiler_flag(${flag} ${flag_var})
    if(NOT ${flag_var})
      set(all_flags_ok FALSE)
    endif()
  endforeach()
  if(all_flags_ok)
    list(JOIN flags " " CMAKE_REQUIRED_FLAGS)
    check_cxx_source_compiles("#include <immintrin.h>\nint main() { ${body} }" ${var})
  endif()
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/${file})
  target_sources(qmatmul PRIVATE ${src})
  if(all_flags_ok AND ${var})
    # The target lives in the top-level directory: set the property there.
    set_source_files_properties(${src} TARGET_DIRECTORY qmatmul PROPERTIES COMPILE_OPTIONS "${flags}")
  else()
    message(STATUS "qmatmul: ${file} built as a stub (compiler lacks ${flags})")
  endif()
endfunction()
