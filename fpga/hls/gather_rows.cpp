// "Retrieval" (fetch): copy the selected rows (tokens of the selected pages) into a dense buffer.
//
// src: [rows][n_src][width], row r's block of n_src entries starting r * row_stride beats after src (a
// view of a larger buffer is read in place; dense is row_stride = n_src * width / 16); idx: [rows][n_idx]
// (indices into n_src); dst: [rows][n_idx][width] (dense).
// A plain copy, so it is exact. width must be a positive multiple of 16 (whole 512-bit beats; no
// upper limit, rows are streamed, not held) and row_stride at least n_src * width / 16; else
// MLX26_BAD_ARGS. Every index is checked before
// anything moves: one outside [0, n_src) returns MLX26_BAD_INDEX with dst untouched.
//
// DATAFLOW: read_rows (one burst of width/16 beats per selected row) -> write_rows (one burst over
// the whole of dst), II=1 per beat: src and dst each move 64 B/cycle at the same time, 128 B/cycle
// (38.4 GB/s at 300 MHz). The idx port reads 4 B per row. Each selected row starts a new burst, so
// short rows (one 256-B token row of K or V) lose a few cycles per row to the burst start; Quest's
// page rows (16 tokens x dim) are long bursts.
#include "hls_shim.h"

static bool indices_ok(const int* idx, long n, int n_src) {
  bool ok = true;
  for (long i = 0; i < n; ++i) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    const int j = idx[i];
    ok = ok && j >= 0 && j < n_src;
  }
  return ok;
}

static void read_rows(const beat_t* src, int rows, long row_stride, int beats, const int* idx, int n_idx,
                      hls::stream<beat_t>& out) {
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < n_idx; ++i) {
      const beat_t* from = src + r * row_stride + (long)idx[(long)r * n_idx + i] * beats;
      for (int b = 0; b < beats; ++b) {
        HLS_PRAGMA(HLS PIPELINE II = 1)
        out.write(from[b]);
      }
    }
  }
}

static void write_rows(hls::stream<beat_t>& in, long n_beats, beat_t* dst) {
  for (long i = 0; i < n_beats; ++i) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    dst[i] = in.read();
  }
}

static void gather_dataflow(const beat_t* src, int rows, long row_stride, int beats, const int* idx, int n_idx,
                            beat_t* dst) {
  HLS_PRAGMA(HLS DATAFLOW)
  hls::stream<beat_t> moving("moving");
  HLS_PRAGMA(HLS STREAM variable = moving depth = 128)
  read_rows(src, rows, row_stride, beats, idx, n_idx, moving);
  write_rows(moving, (long)rows * n_idx * beats, dst);
}

extern "C" int gather_rows(const beat_t* src, int rows, int n_src, int width, int row_stride, const int* idx,
                           int n_idx, beat_t* dst) {
  HLS_PRAGMA(HLS INTERFACE m_axi port = src offset = slave bundle = gmem0 max_read_burst_length = 64)
  HLS_PRAGMA(HLS INTERFACE m_axi port = idx offset = slave bundle = gmem1)
  HLS_PRAGMA(HLS INTERFACE m_axi port = dst offset = slave bundle = gmem2 max_write_burst_length = 64)
  HLS_PRAGMA(HLS INTERFACE s_axilite port = return)
  if (width <= 0 || width % MLX26_LANES != 0 || rows < 0 || n_idx < 0 || n_src < 0) return MLX26_BAD_ARGS;
  const int beats = width / MLX26_LANES;
  if (!stride_fits(row_stride, (long)n_src * beats)) return MLX26_BAD_ARGS;
  if (!indices_ok(idx, (long)rows * n_idx, n_src)) return MLX26_BAD_INDEX;
  gather_dataflow(src, rows, row_stride, beats, idx, n_idx, dst);
  return MLX26_OK;
}
