// Stand-ins for the x86 kernel getters on builds without the x86 kernel
// files (other architectures): every x86 path reads as "not compiled".
#include "kernels/int8_kernel.h"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_avx2() { return nullptr; }
const Int8GemmKernel* int8_kernel_avxvnni() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512vnni() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512bw() { return nullptr; }
const Int8GemmKernel* int8_kernel_amx() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512vnni_small_m() { return nullptr; }
}  // namespace qmatmul::kernels

#include "kernels/x86/x86_kernels_extra.h"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_avx512vnni_small_m_for(int) { return nullptr; }
const Int8GemmKernel* int8_kernel_avx2_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx2_small_m_for(int) { return nullptr; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m_for(int) { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512bw_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512bw_small_m_for(int) { return nullptr; }
const Int8GemmKernel* int8_kernel_amx_16_rows() { return nullptr; }
Int8PeakLoop vnni_peak_loop_avx512vnni() { return nullptr; }
Avx2PeakLoops int8_peak_loops_avx2() { return {}; }
}  // namespace qmatmul::kernels
