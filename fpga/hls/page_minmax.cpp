// Quest "Prepare Memory": per-page elementwise min / max of the keys (Tang et al., Quest, ICML 2024).
//
// keys:  [heads][n_tokens][dim] (row-major float32)
// kmin, kmax: [heads][n_pages][dim], n_pages = ceil(n_tokens / page); the last page may be partial.
// One pass over the keys (burst reads, II=1 per element); min/max are exact, so the result equals
// torch.amin / torch.amax bit for bit.
#include "hls_shim.h"

extern "C" void page_minmax(const float* keys, int heads, int n_tokens, int dim, int page, float* kmin,
                            float* kmax) {
  HLS_PRAGMA(HLS INTERFACE m_axi port = keys offset = slave bundle = gmem0)
  HLS_PRAGMA(HLS INTERFACE m_axi port = kmin offset = slave bundle = gmem1)
  HLS_PRAGMA(HLS INTERFACE m_axi port = kmax offset = slave bundle = gmem1)
  HLS_PRAGMA(HLS INTERFACE s_axilite port = return)
  const int n_pages = (n_tokens + page - 1) / page;
  float lo[MLX26_MAX_DIM];
  float hi[MLX26_MAX_DIM];
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = lo cyclic factor = 16)
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = hi cyclic factor = 16)
  for (int h = 0; h < heads; ++h) {
    for (int p = 0; p < n_pages; ++p) {
      const int start = p * page;
      const int stop = start + page < n_tokens ? start + page : n_tokens;
      const float* first = keys + ((long)h * n_tokens + start) * dim;
      for (int d = 0; d < dim; ++d) {
        HLS_PRAGMA(HLS PIPELINE II = 1)
        lo[d] = first[d];
        hi[d] = first[d];
      }
      for (int t = start + 1; t < stop; ++t) {
        const float* row = keys + ((long)h * n_tokens + t) * dim;
        for (int d = 0; d < dim; ++d) {
          HLS_PRAGMA(HLS PIPELINE II = 1)
          const float v = row[d];
          lo[d] = v < lo[d] ? v : lo[d];
          hi[d] = v > hi[d] ? v : hi[d];
        }
      }
      float* out_lo = kmin + ((long)h * n_pages + p) * dim;
      float* out_hi = kmax + ((long)h * n_pages + p) * dim;
      for (int d = 0; d < dim; ++d) {
        HLS_PRAGMA(HLS PIPELINE II = 1)
        out_lo[d] = lo[d];
        out_hi[d] = hi[d];
      }
    }
  }
}
