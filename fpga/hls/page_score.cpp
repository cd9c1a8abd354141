// Quest "Compute Relevancy": the upper bound sum_d max(q_d * kmin_d, q_d * kmax_d) of each page's
// largest q.k (Tang et al., Quest, ICML 2024).
//
// q: [heads][dim]; kmin, kmax: [heads][n_pages][dim]; scores: [heads][n_pages].
// Summation order is fixed: d = 0, 1, ..., dim-1 into a float32 accumulator starting at +0.0.
// The torch reference (mlx26.core.profile_memory.reference.page_score_ordered) sums in the same
// order, so the two agree bit for bit (build with -ffp-contract=off: no fused multiply-add).
#include "hls_shim.h"

static void score_pages(const float* q, const float* kmin, const float* kmax, int n_pages, int dim,
                        hls::stream<float>& out) {
  float qreg[MLX26_MAX_DIM];
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = qreg cyclic factor = 16)
  for (int d = 0; d < dim; ++d) qreg[d] = q[d];
  for (int p = 0; p < n_pages; ++p) {
    float acc = 0.0f;
    for (int d = 0; d < dim; ++d) {
      HLS_PRAGMA(HLS PIPELINE II = 1)
      const float a = qreg[d] * kmin[(long)p * dim + d];
      const float b = qreg[d] * kmax[(long)p * dim + d];
      acc += a > b ? a : b;
    }
    out.write(acc);
  }
}

extern "C" void page_score(const float* q, const float* kmin, const float* kmax, int heads, int n_pages,
                           int dim, float* scores) {
  HLS_PRAGMA(HLS INTERFACE m_axi port = q offset = slave bundle = gmem0)
  HLS_PRAGMA(HLS INTERFACE m_axi port = kmin offset = slave bundle = gmem1)
  HLS_PRAGMA(HLS INTERFACE m_axi port = kmax offset = slave bundle = gmem2)
  HLS_PRAGMA(HLS INTERFACE m_axi port = scores offset = slave bundle = gmem0)
  HLS_PRAGMA(HLS INTERFACE s_axilite port = return)
  for (int h = 0; h < heads; ++h) {
    hls::stream<float> stream_scores("scores");
    score_pages(q + (long)h * dim, kmin + (long)h * n_pages * dim, kmax + (long)h * n_pages * dim, n_pages,
                dim, stream_scores);
    for (int p = 0; p < n_pages; ++p) {
      HLS_PRAGMA(HLS PIPELINE II = 1)
      scores[(long)h * n_pages + p] = stream_scores.read();
    }
  }
}
