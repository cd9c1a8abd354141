// Quest "Prepare Memory": per-page elementwise min / max of the keys (Tang et al., Quest, ICML 2024).
//
// keys:  [heads][n_tokens][dim] float32 rows, read as 512-bit beats of 16 floats; head h starts
//        h * head_stride beats after keys, so a view of a preallocated [heads][capacity][dim] cache
//        is read in place (head_stride = capacity * dim / 16) and the dense layout is
//        head_stride = n_tokens * dim / 16.
// kmin, kmax: [heads][n_pages][dim] (dense), n_pages = ceil(n_tokens / page); the last page may be partial.
// dim must be a multiple of 16 and at most MLX26_MAX_DIM, head_stride at least n_tokens * dim / 16
// (heads never overlap); else MLX26_BAD_ARGS, nothing written.
//
// DATAFLOW of three stages joined by streams: read_keys (one burst per head) -> reduce_pages ->
// write_bounds. Intended II=1 per beat everywhere: the keys port moves 64 B/cycle (19.2 GB/s at
// 300 MHz) within a head's burst, plus a burst start per head; kmin and kmax get their own ports,
// each busy one beat per page row (1/page of the read rate), so the read port is the only one
// streaming. The running min/max of beat b is next touched
// dim/16 beats later; a compare-and-select fits in one cycle, so even dim = 16 keeps II=1 (no
// floating-point adder in the loop). min/max are exact in any order, so the result equals torch.amin
// / torch.amax bit for bit.
#include "hls_shim.h"

// The heads' rows are contiguous, the heads themselves need not be: one burst per head.
static void read_keys(const beat_t* keys, int heads, long head_beats, long head_stride, hls::stream<beat_t>& out) {
  for (int h = 0; h < heads; ++h) {
    const beat_t* rows = keys + h * head_stride;
    for (long i = 0; i < head_beats; ++i) {
      HLS_PRAGMA(HLS PIPELINE II = 1)
      out.write(rows[i]);
    }
  }
}

// Keeps one page row of running bounds in registers and emits it after the page's last token.
static void reduce_pages(hls::stream<beat_t>& in, int heads, int n_tokens, int beats, int page,
                         hls::stream<beat_t>& lo_out, hls::stream<beat_t>& hi_out) {
  beat_t lo[MLX26_MAX_BEATS];
  beat_t hi[MLX26_MAX_BEATS];
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = lo complete dim = 0)
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = hi complete dim = 0)
  const long n_beats = (long)heads * n_tokens * beats;
  int b = 0;        // beat within the key row
  int t = 0;        // token within the head
  int in_page = 0;  // token within the page
  for (long i = 0; i < n_beats; ++i) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    const beat_t v = in.read();
    for (int l = 0; l < MLX26_LANES; ++l) {
      HLS_PRAGMA(HLS UNROLL)
      lo[b][l] = in_page == 0 || v[l] < lo[b][l] ? v[l] : lo[b][l];
      hi[b][l] = in_page == 0 || v[l] > hi[b][l] ? v[l] : hi[b][l];
    }
    if (in_page == page - 1 || t == n_tokens - 1) {
      lo_out.write(lo[b]);
      hi_out.write(hi[b]);
    }
    if (++b == beats) {
      b = 0;
      const bool head_done = ++t == n_tokens;
      in_page = head_done || in_page == page - 1 ? 0 : in_page + 1;
      if (head_done) t = 0;
    }
  }
}

static void write_bounds(hls::stream<beat_t>& lo_in, hls::stream<beat_t>& hi_in, long n_beats, beat_t* kmin,
                         beat_t* kmax) {
  for (long i = 0; i < n_beats; ++i) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    kmin[i] = lo_in.read();
    kmax[i] = hi_in.read();
  }
}

static void minmax_dataflow(const beat_t* keys, int heads, int n_tokens, int beats, long head_stride, int page,
                            int n_pages, beat_t* kmin, beat_t* kmax) {
  HLS_PRAGMA(HLS DATAFLOW)
  hls::stream<beat_t> rows("rows");
  hls::stream<beat_t> lo("lo");
  hls::stream<beat_t> hi("hi");
  HLS_PRAGMA(HLS STREAM variable = rows depth = 64)
  HLS_PRAGMA(HLS STREAM variable = lo depth = 32)
  HLS_PRAGMA(HLS STREAM variable = hi depth = 32)
  read_keys(keys, heads, (long)n_tokens * beats, head_stride, rows);
  reduce_pages(rows, heads, n_tokens, beats, page, lo, hi);
  write_bounds(lo, hi, (long)heads * n_pages * beats, kmin, kmax);
}

extern "C" int page_minmax(const beat_t* keys, int heads, int n_tokens, int dim, int head_stride, int page,
                           beat_t* kmin, beat_t* kmax) {
  HLS_PRAGMA(HLS INTERFACE m_axi port = keys offset = slave bundle = gmem0 max_read_burst_length = 64)
  HLS_PRAGMA(HLS INTERFACE m_axi port = kmin offset = slave bundle = gmem1)
  HLS_PRAGMA(HLS INTERFACE m_axi port = kmax offset = slave bundle = gmem2)
  HLS_PRAGMA(HLS INTERFACE s_axilite port = return)
  if (!dim_fits(dim) || page < 1 || heads < 0 || n_tokens < 0) return MLX26_BAD_ARGS;
  const int beats = dim / MLX26_LANES;
  if (!stride_fits(head_stride, (long)n_tokens * beats)) return MLX26_BAD_ARGS;
  const int n_pages = (n_tokens + page - 1) / page;
  minmax_dataflow(keys, heads, n_tokens, beats, head_stride, page, n_pages, kmin, kmax);
  return MLX26_OK;
}
