// "Retrieval": top-k indices of each row of scores, by a systolic insertion chain.
//
// scores: [rows][n]; out_idx: [rows][k], best first. Tie rule: a larger score ranks first; equal
// scores rank by the smaller index first. This is exactly a stable descending sort truncated to k,
// the torch reference mlx26.core.profile_memory.reference.topk_stable. Scores must be finite (no NaN).
// 1 <= k <= min(n, MLX26_MAX_TOPK), else MLX26_BAD_ARGS and nothing written.
//
// Design: a chain of MLX26_TOPK_CELLS = 512 cells, fully partitioned into registers. A score enters
// cell 0 every cycle; each cell compares what arrives from its left neighbour with what it holds,
// keeps the better and passes the other on one cell per cycle. Only neighbours are wired (no
// broadcast of the new score to all cells, which would not close timing at 300 MHz for hundreds of
// slots), so the loop runs at II=1 with a latency of n + 512 cycles per pass. The chain ends sorted,
// and it equals serial insertion because every element meets the cells in the same order as its
// predecessors. With (score, index) compared as "larger score, then smaller index", the order is
// strict and total (indices are unique), which gives the tie rule and makes larger k possible:
// for k > 512 the row is streamed again, ceil(k / 512) passes in all, and a pass only admits
// elements ranked after the last one the previous pass emitted. 4096 cells in one chain would need
// about eight times the registers and comparators (about half the U55C's LUTs) for a stage that is
// not the bottleneck of retrieval (the row gather is).
//
// DATAFLOW: read_scores -> select -> write_indices. The chain takes one 32-bit score per cycle, so
// the scores port is 32 bits (4 B/cycle, 1.2 GB/s at 300 MHz per pass): a 512-bit port would idle
// 15 cycles out of 16 and, with n not a multiple of 16, need padded rows.
#include "hls_shim.h"

struct Entry {
  float score;
  int idx;
  bool valid;
};

// Does a rank before b? An empty cell ranks after everything.
static bool ranks_before(const Entry& a, const Entry& b) {
  if (!a.valid) return false;
  if (!b.valid) return true;
  return a.score > b.score || (a.score == b.score && a.idx < b.idx);
}

static int passes_for(int k) { return (k + MLX26_TOPK_CELLS - 1) / MLX26_TOPK_CELLS; }

static void read_scores(const float* scores, int rows, int n, int k, hls::stream<float>& out) {
  for (int r = 0; r < rows; ++r) {
    for (int pass = 0; pass < passes_for(k); ++pass) {
      for (int i = 0; i < n; ++i) {
        HLS_PRAGMA(HLS PIPELINE II = 1)
        out.write(scores[(long)r * n + i]);
      }
    }
  }
}

// One pass: the best `cells` entries ranked after `floor` (all of them when floor is empty).
static void chain_pass(hls::stream<float>& in, int n, int cells, const Entry& floor, Entry cell[MLX26_TOPK_CELLS]) {
  Entry moving[MLX26_TOPK_CELLS];  // what cell j hands to cell j + 1 next cycle
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = moving complete)
  for (int j = 0; j < MLX26_TOPK_CELLS; ++j) {
    HLS_PRAGMA(HLS UNROLL)
    cell[j].valid = false;
    moving[j].valid = false;
  }
  for (int i = 0; i < n + cells; ++i) {  // n entries, then `cells` cycles to settle the last one
    HLS_PRAGMA(HLS PIPELINE II = 1)
    Entry arriving = {0.0f, i, false};
    if (i < n) {
      const Entry candidate = {in.read(), i, true};
      arriving.score = candidate.score;
      arriving.valid = !floor.valid || ranks_before(floor, candidate);
    }
    // From the last cell back, so every cell sees what its neighbour passed in the previous cycle.
    for (int j = MLX26_TOPK_CELLS - 1; j >= 0; --j) {
      HLS_PRAGMA(HLS UNROLL)
      if (j >= cells) continue;
      const Entry in_j = j == 0 ? arriving : moving[j - 1];
      if (ranks_before(in_j, cell[j])) {
        moving[j] = cell[j];
        cell[j] = in_j;
      } else {
        moving[j] = in_j;
      }
    }
  }
}

static void select_rows(hls::stream<float>& in, int rows, int n, int k, hls::stream<int>& out) {
  Entry cell[MLX26_TOPK_CELLS];
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = cell complete)
  for (int r = 0; r < rows; ++r) {
    Entry floor = {0.0f, 0, false};
    for (int done = 0; done < k; done += MLX26_TOPK_CELLS) {
      const int cells = k - done < MLX26_TOPK_CELLS ? k - done : MLX26_TOPK_CELLS;
      chain_pass(in, n, cells, floor, cell);
      for (int j = 0; j < cells; ++j) {
        HLS_PRAGMA(HLS PIPELINE II = 1)
        out.write(cell[j].idx);
      }
      floor = cell[cells - 1];
    }
  }
}

static void write_indices(hls::stream<int>& in, long n, int* out_idx) {
  for (long i = 0; i < n; ++i) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    out_idx[i] = in.read();
  }
}

static void topk_dataflow(const float* scores, int rows, int n, int k, int* out_idx) {
  HLS_PRAGMA(HLS DATAFLOW)
  hls::stream<float> row("row");
  hls::stream<int> picked("picked");
  HLS_PRAGMA(HLS STREAM variable = row depth = 64)
  HLS_PRAGMA(HLS STREAM variable = picked depth = 64)
  read_scores(scores, rows, n, k, row);
  select_rows(row, rows, n, k, picked);
  write_indices(picked, (long)rows * k, out_idx);
}

extern "C" int topk_select(const float* scores, int rows, int n, int k, int* out_idx) {
  HLS_PRAGMA(HLS INTERFACE m_axi port = scores offset = slave bundle = gmem0)
  HLS_PRAGMA(HLS INTERFACE m_axi port = out_idx offset = slave bundle = gmem1)
  HLS_PRAGMA(HLS INTERFACE s_axilite port = return)
  if (k < 1 || k > n || k > MLX26_MAX_TOPK || rows < 0) return MLX26_BAD_ARGS;
  topk_dataflow(scores, rows, n, k, out_idx);
  return MLX26_OK;
}
