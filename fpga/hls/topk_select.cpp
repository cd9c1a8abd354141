// "Retrieval": top-k indices of each row of scores, by a streaming insertion array.
//
// scores: [rows][n]; out_idx: [rows][k], best first. Tie rule: a larger score ranks first; equal
// scores rank by the smaller index first (the element seen earlier is never displaced by an
// equal one). This is exactly a stable descending sort truncated to k, which is the torch
// reference (mlx26.core.profile_memory.reference.topk_stable). Scores must be finite (no NaN).
// On the FPGA the insertion array is fully partitioned and each element is compared with all
// k slots in parallel (one element per cycle); here the same array is updated serially.
#include "hls_shim.h"

extern "C" int topk_select(const float* scores, int rows, int n, int k, int* out_idx) {
  HLS_PRAGMA(HLS INTERFACE m_axi port = scores offset = slave bundle = gmem0)
  HLS_PRAGMA(HLS INTERFACE m_axi port = out_idx offset = slave bundle = gmem1)
  HLS_PRAGMA(HLS INTERFACE s_axilite port = return)
  if (k < 1 || k > n || k > MLX26_MAX_TOPK) return -1;
  float best[MLX26_MAX_TOPK];
  int best_idx[MLX26_MAX_TOPK];
  for (int r = 0; r < rows; ++r) {
    const float* row = scores + (long)r * n;
    int filled = 0;
    for (int i = 0; i < n; ++i) {
      HLS_PRAGMA(HLS PIPELINE II = 1)
      const float s = row[i];
      if (filled == k && !(s > best[k - 1])) continue;  // not better than the current k-th
      // First slot holding a strictly smaller score: equal scores stay ahead (smaller index).
      int lo = 0;
      int hi = filled;
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (best[mid] < s) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      const int last = filled < k ? filled : k - 1;
      for (int j = last; j > lo; --j) {
        best[j] = best[j - 1];
        best_idx[j] = best_idx[j - 1];
      }
      best[lo] = s;
      best_idx[lo] = i;
      if (filled < k) ++filled;
    }
    for (int j = 0; j < k; ++j) out_idx[(long)r * k + j] = best_idx[j];
  }
  return 0;
}
