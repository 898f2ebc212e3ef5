// How the x86 B packers split a run of panel pairs into groups: at most a
// packer's limit a group, the groups as even as possible (limit 4: 6 =
// 3 + 3, 7 = 4 + 3), so that each group packs its pairs over all of K in
// one pass with its column sums in registers (pack_avx512vnni.cpp for the
// zmm VNNI layout, pack_avx2.cpp for the exact AVX2 kernel's int16 layout
// and the AVX-VNNI kernels' ymm layout).
// Plain C++: it only counts, and is included by sources of either
// instruction set.
#pragma once

#include <cstdint>
#include <type_traits>

namespace qmatmul::gemm {

// Calls pack_group(std::integral_constant<int, P>{}, first_pair) for each
// group of P pairs (1 <= P <= kMaxPairs <= 4), in order, covering pairs
// [0, pairs).
template <int kMaxPairs, typename PackGroup>
void for_each_pair_group(int64_t pairs, const PackGroup& pack_group) {
  static_assert(kMaxPairs >= 1 && kMaxPairs <= 4);
  for (int64_t pair = 0; pair < pairs;) {
    const int64_t left = pairs - pair, groups = (left + kMaxPairs - 1) / kMaxPairs;
    const int64_t group = (left + groups - 1) / groups;
    switch (group) {
      case 4: if constexpr (kMaxPairs >= 4) pack_group(std::integral_constant<int, 4>{}, pair); break;
      case 3: if constexpr (kMaxPairs >= 3) pack_group(std::integral_constant<int, 3>{}, pair); break;
      case 2: if constexpr (kMaxPairs >= 2) pack_group(std::integral_constant<int, 2>{}, pair); break;
      default: pack_group(std::integral_constant<int, 1>{}, pair); break;
    }
    pair += group;
  }
}

// The same over `panels` whole panels, for packers that also take a single
// panel: pack_group(std::integral_constant<int, P>{}, first_panel) for each
// group of P pairs, then, when `panels` is odd, P = 0 for the last panel.
template <int kMaxPairs, typename PackGroup>
void for_each_panel_group(int64_t panels, const PackGroup& pack_group) {
  for_each_pair_group<kMaxPairs>(panels / 2, [&](auto group, int64_t pair) { pack_group(group, 2 * pair); });
  if (panels % 2 != 0) pack_group(std::integral_constant<int, 0>{}, panels - 1);
}

}  // namespace qmatmul::gemm
