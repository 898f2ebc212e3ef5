// The tile heights of the 16-column x86 kernels, one set per B packing: the
// 6-row main tile and the 5-, 4-, 3-, 2- and 1-row tiles that run few-row calls
// and a block's last rows (the driver's tail tile), and the one rule that
// picks among them. Shared by the ymm kernel files (AVX2 and AVX-VNNI, built
// from tile_mx16_ymm.h) and the AVX-512 BW file, whose zmm tiles read the
// AVX2 packing. Internal linkage: each includer has its own copy.
#pragma once

#include "kernels/int8_kernel.h"

namespace qmatmul::kernels {
namespace {

// for_rows(m) is the tile for m rows, the one of m's height; nullptr past 5
// rows (the main tile then runs).
struct Mx16TileKernels {
  Int8GemmKernel rows6, rows5, rows4, rows3, rows2, rows1;

  constexpr const Int8GemmKernel* for_rows(int m) const {
    switch (m) {
      case 1: return &rows1;
      case 2: return &rows2;
      case 3: return &rows3;
      case 4: return &rows4;
      case 5: return &rows5;
      default: return nullptr;
    }
  }
};

}  // namespace
}  // namespace qmatmul::kernels
