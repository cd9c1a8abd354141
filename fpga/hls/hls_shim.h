// Small shim so the same kernel sources build with Vitis HLS and with g++ (software emulation).
//
// * Under Vitis HLS (__SYNTHESIS__ defined) the real <hls_stream.h> is used and HLS_PRAGMA(x)
//   expands to _Pragma("x"), which Vitis HLS accepts in place of `#pragma HLS ...`.
// * Under g++ hls::stream is a FIFO on std::deque and HLS_PRAGMA(x) expands to nothing, so
//   `g++ -Wall -Wextra` sees no unknown pragmas. A DATAFLOW region's stages then run one after the
//   other, which gives the same results because the FIFOs are unbounded.
// * mlx26::wide<T, N> is one memory beat of N values: hls::vector<T, N> under Vitis HLS (a 512-bit
//   m_axi port for float x 16), a plain struct with the same 64-byte layout under g++. It has no
//   alignas under g++: the host's numpy buffers are only 4-byte aligned, and g++ would otherwise be
//   free to emit aligned vector loads (on the card, XRT buffers and our row strides are 64-byte aligned).
#ifndef MLX26_HLS_SHIM_H
#define MLX26_HLS_SHIM_H

#ifdef __SYNTHESIS__
#include <hls_stream.h>
#include <hls_vector.h>
#define HLS_PRAGMA(x) _Pragma(#x)

namespace mlx26 {
template <typename T, int N>
using wide = hls::vector<T, N>;
}  // namespace mlx26
#else
#include <deque>

namespace hls {
template <typename T>
class stream {
 public:
  stream() = default;
  explicit stream(const char* /*name*/) {}
  void write(const T& value) { fifo_.push_back(value); }
  T read() {
    T value = fifo_.front();
    fifo_.pop_front();
    return value;
  }
  bool empty() const { return fifo_.empty(); }
  bool full() const { return false; }
  void operator<<(const T& value) { write(value); }
  void operator>>(T& value) { value = read(); }

 private:
  std::deque<T> fifo_;
};
}  // namespace hls

namespace mlx26 {
template <typename T, int N>
struct wide {
  T lane[N];
  T& operator[](int i) { return lane[i]; }
  const T& operator[](int i) const { return lane[i]; }
};
}  // namespace mlx26

#define HLS_PRAGMA(x)
#endif

// Compile-time capacities of the on-chip buffers (BRAM/URAM on the U55C).
#define MLX26_MAX_DIM 256      // head_dim (or indexer dim) held in registers
#define MLX26_MAX_TOPK 4096    // largest k of topk_select (k > MLX26_TOPK_CELLS takes several passes)
#define MLX26_MAX_PAGE 64      // tokens per Quest page
#define MLX26_LANES 16         // floats per 512-bit memory beat
#define MLX26_MAX_BEATS (MLX26_MAX_DIM / MLX26_LANES)
#define MLX26_TOPK_CELLS 512   // cells of the systolic top-k chain (one pass selects up to this many)

// Kernel return codes (s_axilite return value, read by the hosts as run.return_code()).
#define MLX26_OK 0
#define MLX26_BAD_ARGS -1      // a shape the kernel cannot hold (dim % 16, dim or k out of range)
#define MLX26_BAD_INDEX -2     // gather_rows: an index outside [0, n_src)

typedef mlx26::wide<float, MLX26_LANES> beat_t;  // one 512-bit beat: 64 bytes, 16 floats
static_assert(sizeof(beat_t) == 64, "a beat must be exactly one 512-bit bus word");

// A beat of +0.0f: padding that leaves a running float sum unchanged (such a sum is never -0.0).
static inline beat_t zero_beat() {
  beat_t z;
  for (int l = 0; l < MLX26_LANES; ++l) {
    HLS_PRAGMA(HLS UNROLL)
    z[l] = 0.0f;
  }
  return z;
}

// dim values per row as whole beats: the wide ports move 16 floats at a time and the hosts refuse
// other dims before any transfer, so a kernel never sees a partial beat.
static inline bool dim_fits(int dim) { return dim > 0 && dim <= MLX26_MAX_DIM && dim % MLX26_LANES == 0; }

// A stride between row groups (heads), in beats: at least the group's own beats, so the groups a kernel
// reads never overlap and a dense array is the case stride == extent.
static inline bool stride_fits(long stride, long extent) { return stride >= 0 && stride >= extent; }

#endif  // MLX26_HLS_SHIM_H
