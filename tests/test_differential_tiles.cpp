// Randomized differential tests of the GEMM driver's tile-level paths,
// each against the plain reference bit for bit, at 1 to 3 threads with B
// plain and packed (expect_every_path_at_1_to_3_threads): A read in place by
// the kernel (uint8 A, and int8 A shifted as it is read), with the
// overread past a row's end at K % 4 != 0 kept within the matrix; and a last
// panel of at most half the kernel's width, which runs the half-width tile,
// with MatMulInteger sums the kernel finished copied by the epilogue; and
// requantization ties (v exactly halfway between two integers) in every
// form that requantizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "differential_support.h"

namespace qmatmul::testing {
namespace {

// A (uint8, or int8 shifted as the kernel reads it) with weights whose zero
// points make every zb' 0 (int8 B with zero point 0, uint8 B with 128): the
// AVX-512 VNNI driver then reads A in place, without a packing pass, for
// whole 8-row tiles, and packs a last partial
// tile; when K is not a multiple of 4 it also packs the whole tiles too near
// a matrix's end for their rows' last k-group to read past the row (more
// than one at K = 1 and 2). A is an exact-size allocation, so a read past
// it fails under AddressSanitizer. M around the tile edge and large (a
// multiple of 8 or not), K a multiple of 4 or not (1 and 2 among them),
// batched A or B, raw and packed B; B zero points per
// tensor, per column, per batch, and per column with one nonzero zb' (then A
// is packed); random layouts of A's parameters; MatMulInteger and
// QLinearMatMul at 1-3 threads.
TEST(DifferentialAInPlace, WithZeroWeightZeroPoints) {
  std::mt19937 rng(4242);
  const Dims dims[] = {{{8, 64}, {64, 33}},       {{9, 64}, {64, 70}},           {{23, 100}, {100, 64}},
                       {{70, 37}, {37, 70}},      {{2, 17, 128}, {128, 40}},     {{40, 256}, {2, 256, 96}},
                       {{300, 12}, {12, 65}},     {{3, 41, 8}, {3, 8, 33}},     {{16, 37}, {37, 40}},
                       {{2, 24, 13}, {13, 33}},   {{64, 6}, {2, 6, 64}},         {{41, 1023}, {1023, 32}},
                       {{9, 1}, {1, 40}},         {{16, 2}, {2, 33}},            {{2, 17, 1}, {1, 64}}};
  int cases = 0;
  for (const Dims& d : dims)
    for (ET at : kIntTypes)
      for (ET bt : kIntTypes)
        for (int zb_kind = 0; zb_kind < 4; ++zb_kind) {
          const int64_t n = d.b.back();
          Shape zb_dims;
          if (zb_kind == 0) zb_dims = {};
          if (zb_kind == 1 || zb_kind == 2) zb_dims = {n};
          if (zb_kind == 3 && !(d.b.size() > 2 && param_shape(Layout::BatchedMatrix, false, d.b, &zb_dims))) continue;
          Tensor b_zp(bt, zb_dims);
          const unsigned char zero_code = bt == ET::Uint8 ? 0x80 : 0x00;  // zb' = 0
          std::memset(b_zp.raw(), zero_code, static_cast<std::size_t>(b_zp.size()));
          if (zb_kind == 2) static_cast<unsigned char*>(b_zp.raw())[n / 2] = 0x7F;  // one zb' != 0
          const Layout la = kOperandLayouts[rng() % 5];
          Shape probe;
          if (!param_shape(la, true, d.a, &probe)) continue;
          QCase c = make_qcase(rng, d, at, bt, kIntTypes[rng() % 2], ET::Float32, la, Layout::Scalar, rng(), 2);
          c.b_zp = std::move(b_zp);
          c.what = case_name(c.a, c.b, {&c.a_scale, &c.a_zp, &c.b_scale, &c.b_zp, &c.y_scale, &c.y_zp});
          expect_every_path_at_1_to_3_threads(c);
          ++cases;
        }
  EXPECT_GT(cases, 100);
}

// A last panel of at most NR/2 columns runs the half-width tile (where the
// kernel has one), and whole-panel MatMulInteger sums the kernel finished
// reach the output through a plain copy (Tile::final_sums): N just past a
// panel edge, at and either side of half a panel, M with and without a tail
// tile, A uint8 (read in place) and int8 (packed), weight zero points that
// are the domain zero (zb' = 0) or not.
TEST(DifferentialPartialPanels, HalfWidthLastPanels) {
  std::mt19937 rng(3131);
  int cases = 0;
  for (int64_t n : {1, 15, 16, 17, 33, 47, 48, 49, 197})
    for (int64_t m : {8, 17, 41})
      for (ET at : kIntTypes)
        for (ET bt : kIntTypes)
          for (bool zb_domain_zero : {true, false}) {
            const int64_t k = 20 + static_cast<int64_t>(rng() % 50);
            QCase c = make_qcase(rng, Dims{{m, k}, {k, n}}, at, bt, kIntTypes[rng() % 2], ET::Float32,
                                 Layout::Scalar, Layout::Scalar, rng(), 2);
            if (zb_domain_zero)
              c.b_zp = bt == ET::Uint8 ? make_tensor<uint8_t>(ET::Uint8, {}, {128})
                                       : make_tensor<int8_t>(ET::Int8, {}, {0});
            c.what = "half-width last panel: " +
                     case_name(c.a, c.b, {&c.a_scale, &c.a_zp, &c.b_scale, &c.b_zp, &c.y_scale, &c.y_zp});
            expect_every_path_at_1_to_3_threads(c);
            ++cases;
          }
  EXPECT_EQ(cases, 9 * 3 * 2 * 2 * 2);
}

// Ties in the requantization, v = C * m + zp exactly halfway between two
// integers, which must round to the even one: operands within 7 of their
// zero points and multipliers 0.5, 0.25, 0.75 and 1.5 (a_scale 1, b_scale
// per column, y_scale 1), so that about half of all outputs are ties, some
// saturate and the bounded form (every |m| <= 0.5) and the clamping one
// both run. Whole 6- and 8-row tiles with weight zero points that are the
// domain zero (zb' = 0: the kernels' requantizing form), tails, partial
// panels, few rows against a wide B (the raw-B path), batches, uint8 and
// int8 output, B plain and packed, 1-3 threads.
TEST(DifferentialRequantization, TiesRoundToEvenInEveryForm) {
  std::mt19937 rng(2718);
  const Dims dims[] = {{{12, 64}, {64, 48}},  {{13, 64}, {64, 37}},   {{24, 33}, {33, 64}},   {{48, 40}, {40, 96}},
                       {{4, 300}, {300, 1024}}, {{3, 12, 64}, {64, 32}}, {{1, 96}, {96, 4100}}};
  const auto near_zero_point = [&rng](ET type, const Shape& dims, int zero_point) {
    Tensor t(type, dims);
    auto* p = static_cast<unsigned char*>(t.raw());
    for (int64_t i = 0; i < t.size(); ++i) {
      const int v = std::clamp(zero_point + static_cast<int>(rng() % 15) - 7, is_signed8(type) ? -128 : 0,
                               is_signed8(type) ? 127 : 255);
      p[i] = static_cast<unsigned char>(v);
    }
    return t;
  };
  int cases = 0;
  for (const Dims& d : dims)
    for (ET at : kIntTypes)
      for (ET bt : kIntTypes)
        for (ET yt : kIntTypes)
          for (bool bounded : {true, false}) {
            const int64_t n = d.b.back();
            const int za = at == ET::Uint8 ? 3 + static_cast<int>(rng() % 250) : static_cast<int>(rng() % 250) - 125;
            const bool zb_domain_zero = rng() % 2 == 0;
            const int zb = zb_domain_zero ? (bt == ET::Uint8 ? 128 : 0) : (bt == ET::Uint8 ? 200 : -60);
            QCase c;
            c.a = near_zero_point(at, d.a, za);
            c.b = near_zero_point(bt, d.b, zb);
            c.a_zp = at == ET::Uint8 ? make_tensor<uint8_t>(at, {}, {static_cast<uint8_t>(za)})
                                     : make_tensor<int8_t>(at, {}, {static_cast<int8_t>(za)});
            c.b_zp = bt == ET::Uint8 ? make_tensor<uint8_t>(bt, {}, {static_cast<uint8_t>(zb)})
                                     : make_tensor<int8_t>(bt, {}, {static_cast<int8_t>(zb)});
            std::vector<float> b_scale(static_cast<std::size_t>(n));
            const float bounded_scales[] = {0.5f, 0.25f}, any_scales[] = {0.5f, 1.5f, 0.75f, 0.25f};
            for (int64_t j = 0; j < n; ++j)
              b_scale[static_cast<std::size_t>(j)] = bounded ? bounded_scales[j % 2] : any_scales[j % 4];
            c.a_scale = make_tensor<float>(ET::Float32, {}, {1.0f});
            c.b_scale = make_tensor<float>(ET::Float32, {n}, b_scale);
            c.y_scale = make_tensor<float>(ET::Float32, {}, {1.0f});
            c.y_zp = yt == ET::Uint8 ? make_tensor<uint8_t>(yt, {}, {static_cast<uint8_t>(100 + rng() % 56)})
                                     : make_tensor<int8_t>(yt, {}, {static_cast<int8_t>(static_cast<int>(rng() % 41) - 20)});
            c.what = std::string("ties, ") + (bounded ? "bounded" : "multipliers up to 1.5") + ": " +
                     case_name(c.a, c.b, {&c.a_scale, &c.a_zp, &c.b_scale, &c.b_zp, &c.y_scale, &c.y_zp});
            // The case must hold ties: odd sums of the reference in the
            // columns of multiplier 0.5 (C * 0.5 halfway).
            const Tensor sums = reference::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view());
            const auto* s = static_cast<const int32_t*>(sums.raw());
            int64_t odd = 0;
            for (int64_t i = 0; i < sums.size(); ++i) odd += i % n % 4 == 0 && s[i] % 2 != 0;
            ASSERT_GT(odd * 16, sums.size()) << c.what;  // about 1 in 8 of all outputs
            expect_every_path_at_1_to_3_threads(c);
            ++cases;
          }
  EXPECT_EQ(cases, 7 * 2 * 2 * 2 * 2);
}

}  // namespace
}  // namespace qmatmul::testing
