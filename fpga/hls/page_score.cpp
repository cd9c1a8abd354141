// Quest "Compute Relevancy": the upper bound sum_d max(q_d * kmin_d, q_d * kmax_d) of each page's
// largest q.k (Tang et al., Quest, ICML 2024).
//
// q: [heads][dim]; kmin, kmax: [heads][n_pages][dim] rows of 512-bit beats, head h starting h * head_stride
// beats after the array's start (both arrays share the stride), so the first n_pages of a
// [heads][capacity_pages][dim] buffer are read in place; dense is head_stride = n_pages * dim / 16.
// scores: [heads][n_pages] (dense).
// dim must be a multiple of 16 and at most MLX26_MAX_DIM, head_stride at least n_pages * dim / 16
// (else MLX26_BAD_ARGS, nothing written).
//
// Summation order (fixed, shared bit for bit with the torch reference
// mlx26.core.profile_memory.reference.page_score_ordered; build with -ffp-contract=off, no FMA):
//   1. lane l of the 16-float beat keeps its own float32 partial sum, starting at +0.0, adding the
//      beats b = 0, 1, ..., dim/16 - 1 of the page in order (so lane l sums d = l, l+16, l+32, ...);
//   2. the 16 lane sums are added by a fixed pairwise tree: (0+1), (2+3), ... then pairs of those.
//
// Why the page groups: a float adder takes several cycles, and consecutive beats of one page update
// the same 16 lane sums, so accumulating in memory order could not start a beat every cycle. The
// kernel therefore interleaves PAGE_GROUP pages: transpose_groups turns each group of 8 page rows
// (memory order) into beat-major order, so a lane sum is next touched 8 cycles later, which covers
// the adder latency. The interleave changes when an addition happens, never which operands it has,
// so the order above holds. The last group of a head is padded with zero pages, whose scores are
// dropped.
//
// DATAFLOW: read_bounds -> bound_products -> transpose_groups -> accumulate_lanes -> reduce_lanes ->
// write_scores, every stage at II=1 per beat. kmin and kmax stream concurrently on their own ports, one
// burst per head each: 2 x 64 B/cycle = 128 B/cycle (38.4 GB/s at 300 MHz) plus a burst start per head; q (dim floats per head) and the scores (4 B
// per page) are side ports. The padding costs (8 - n_pages % 8) page rows per head at most.
#include "hls_shim.h"

#define PAGE_GROUP 8  // pages interleaved by the accumulator: at least the float adder's latency

// A head's page rows are contiguous, the heads need not be: one burst per head on each port.
static void read_bounds(const beat_t* kmin, const beat_t* kmax, int heads, long head_beats, long head_stride,
                        hls::stream<beat_t>& lo, hls::stream<beat_t>& hi) {
  for (int h = 0; h < heads; ++h) {
    const beat_t* lo_rows = kmin + h * head_stride;
    const beat_t* hi_rows = kmax + h * head_stride;
    for (long i = 0; i < head_beats; ++i) {
      HLS_PRAGMA(HLS PIPELINE II = 1)
      lo.write(lo_rows[i]);
      hi.write(hi_rows[i]);
    }
  }
}

static void load_query(const beat_t* q, int beats, beat_t qreg[MLX26_MAX_BEATS]) {
  for (int b = 0; b < beats; ++b) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    qreg[b] = q[b];
  }
}

// max(q*kmin, q*kmax) per value: one product pair per lane, no loop-carried state.
static void bound_products(const beat_t* q, hls::stream<beat_t>& lo, hls::stream<beat_t>& hi, int heads,
                           int n_pages, int beats, hls::stream<beat_t>& out) {
  beat_t qreg[MLX26_MAX_BEATS];
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = qreg complete dim = 0)
  for (int h = 0; h < heads; ++h) {
    load_query(q + (long)h * beats, beats, qreg);
    int b = 0;
    for (long i = 0; i < (long)n_pages * beats; ++i) {
      HLS_PRAGMA(HLS PIPELINE II = 1)
      const beat_t a = lo.read();
      const beat_t c = hi.read();
      beat_t m;
      for (int l = 0; l < MLX26_LANES; ++l) {
        HLS_PRAGMA(HLS UNROLL)
        const float x = qreg[b][l] * a[l];
        const float y = qreg[b][l] * c[l];
        m[l] = x > y ? x : y;
      }
      out.write(m);
      b = b + 1 == beats ? 0 : b + 1;
    }
  }
}

// Page-major beats in, beat-major beats out, a group of PAGE_GROUP pages at a time. A ping-pong pair
// of group buffers lets one group fill while the previous one drains, so the loop keeps II=1.
static void transpose_groups(hls::stream<beat_t>& in, int heads, int n_pages, int beats, hls::stream<beat_t>& out) {
  beat_t buf[2][PAGE_GROUP * MLX26_MAX_BEATS];
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = buf complete dim = 1)
  const int groups = (n_pages + PAGE_GROUP - 1) / PAGE_GROUP;  // per head
  const long total_groups = (long)heads * groups;
  const int group_beats = PAGE_GROUP * beats;
  int fill_page = 0, fill_beat = 0;   // writer position: page in group, beat in page
  int drain_page = 0, drain_beat = 0; // reader position: beat-major
  int page_of_head = 0;               // first page of the filling group within its head
  long g = 0;                         // group being filled; group g - 1 is draining
  for (long step = 0; step < (total_groups + 1) * group_beats; ++step) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    HLS_PRAGMA(HLS DEPENDENCE variable = buf inter false)
    if (g < total_groups) {
      const bool real = page_of_head + fill_page < n_pages;
      buf[g & 1][fill_page * beats + fill_beat] = real ? in.read() : zero_beat();
    }
    if (g > 0) out.write(buf[(g - 1) & 1][drain_page * beats + drain_beat]);
    if (++fill_beat == beats) {
      fill_beat = 0;
      ++fill_page;
    }
    if (++drain_page == PAGE_GROUP) {
      drain_page = 0;
      ++drain_beat;
    }
    if (fill_page == PAGE_GROUP) {  // the group is full, and the previous one has drained
      fill_page = 0;
      drain_beat = 0;
      page_of_head = page_of_head + PAGE_GROUP >= n_pages ? 0 : page_of_head + PAGE_GROUP;
      ++g;
    }
  }
}

// Beat-major groups in: lane sums of page j of the group live in acc[j], touched every PAGE_GROUP cycles.
static void accumulate_lanes(hls::stream<beat_t>& in, long n_groups, int beats, hls::stream<beat_t>& out) {
  beat_t acc[PAGE_GROUP];
  HLS_PRAGMA(HLS ARRAY_PARTITION variable = acc complete dim = 0)
  int j = 0;
  int b = 0;
  for (long i = 0; i < n_groups * PAGE_GROUP * beats; ++i) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    HLS_PRAGMA(HLS DEPENDENCE variable = acc inter distance = 8 true)
    const beat_t m = in.read();
    for (int l = 0; l < MLX26_LANES; ++l) {
      HLS_PRAGMA(HLS UNROLL)
      acc[j][l] = (b == 0 ? 0.0f : acc[j][l]) + m[l];
    }
    if (b == beats - 1) out.write(acc[j]);
    if (++j == PAGE_GROUP) {
      j = 0;
      b = b + 1 == beats ? 0 : b + 1;
    }
  }
}

// The fixed tree over the 16 lane sums; padding pages are dropped here.
static void reduce_lanes(hls::stream<beat_t>& in, int heads, int n_pages, hls::stream<float>& out) {
  const int groups = (n_pages + PAGE_GROUP - 1) / PAGE_GROUP;
  int p = 0;
  for (long i = 0; i < (long)heads * groups * PAGE_GROUP; ++i) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    beat_t s = in.read();
    for (int width = MLX26_LANES / 2; width >= 1; width /= 2) {
      HLS_PRAGMA(HLS UNROLL)
      for (int l = 0; l < width; ++l) {
        HLS_PRAGMA(HLS UNROLL)
        s[l] = s[2 * l] + s[2 * l + 1];
      }
    }
    if (p < n_pages) out.write(s[0]);
    p = p + 1 == groups * PAGE_GROUP ? 0 : p + 1;
  }
}

static void write_scores(hls::stream<float>& in, long n, float* scores) {
  for (long i = 0; i < n; ++i) {
    HLS_PRAGMA(HLS PIPELINE II = 1)
    scores[i] = in.read();
  }
}

static void score_dataflow(const beat_t* q, const beat_t* kmin, const beat_t* kmax, int heads, int n_pages,
                           int beats, long head_stride, float* scores) {
  HLS_PRAGMA(HLS DATAFLOW)
  hls::stream<beat_t> lo("lo"), hi("hi"), products("products"), transposed("transposed"), sums("sums");
  hls::stream<float> result("result");
  HLS_PRAGMA(HLS STREAM variable = lo depth = 64)
  HLS_PRAGMA(HLS STREAM variable = hi depth = 64)
  HLS_PRAGMA(HLS STREAM variable = products depth = 256)
  const long groups = (long)heads * ((n_pages + PAGE_GROUP - 1) / PAGE_GROUP);
  read_bounds(kmin, kmax, heads, (long)n_pages * beats, head_stride, lo, hi);
  bound_products(q, lo, hi, heads, n_pages, beats, products);
  transpose_groups(products, heads, n_pages, beats, transposed);
  accumulate_lanes(transposed, groups, beats, sums);
  reduce_lanes(sums, heads, n_pages, result);
  write_scores(result, (long)heads * n_pages, scores);
}

extern "C" int page_score(const beat_t* q, const beat_t* kmin, const beat_t* kmax, int heads, int n_pages,
                          int dim, int head_stride, float* scores) {
  HLS_PRAGMA(HLS INTERFACE m_axi port = q offset = slave bundle = gmem0)
  HLS_PRAGMA(HLS INTERFACE m_axi port = kmin offset = slave bundle = gmem1 max_read_burst_length = 64)
  HLS_PRAGMA(HLS INTERFACE m_axi port = kmax offset = slave bundle = gmem2 max_read_burst_length = 64)
  HLS_PRAGMA(HLS INTERFACE m_axi port = scores offset = slave bundle = gmem3)
  HLS_PRAGMA(HLS INTERFACE s_axilite port = return)
  if (!dim_fits(dim) || heads < 0 || n_pages < 0) return MLX26_BAD_ARGS;
  const int beats = dim / MLX26_LANES;
  if (!stride_fits(head_stride, (long)n_pages * beats)) return MLX26_BAD_ARGS;
  score_dataflow(q, kmin, kmax, heads, n_pages, beats, head_stride, scores);
  return MLX26_OK;
}
