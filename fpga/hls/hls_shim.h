// Small shim so the same kernel sources build with Vitis HLS and with g++ (software emulation).
//
// * Under Vitis HLS (__SYNTHESIS__ defined) the real <hls_stream.h> is used and HLS_PRAGMA(x)
//   expands to _Pragma("x"), which Vitis HLS accepts in place of `#pragma HLS ...`.
// * Under g++ hls::stream is a FIFO on std::deque and HLS_PRAGMA(x) expands to nothing, so
//   `g++ -Wall -Wextra` sees no unknown pragmas.
#ifndef MLX26_HLS_SHIM_H
#define MLX26_HLS_SHIM_H

#ifdef __SYNTHESIS__
#include <hls_stream.h>
#define HLS_PRAGMA(x) _Pragma(#x)
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

#define HLS_PRAGMA(x)
#endif

// Compile-time capacities of the on-chip buffers (BRAM/URAM on the U55C).
#define MLX26_MAX_DIM 256      // head_dim (or indexer dim) held in registers
#define MLX26_MAX_TOPK 4096    // entries of the top-k insertion array
#define MLX26_MAX_PAGE 64      // tokens per Quest page

#endif  // MLX26_HLS_SHIM_H
