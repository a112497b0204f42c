// CUB's side of benchmarks/warp_reduce_batched.py: cub::WarpReduceBatched (CUB >= 3.4,
// newer than CUDA 13.0's headers: build with pip's CCCL headers, -I.../nvidia/cu13/include/cccl)
// on the workloads coop's side runs, the same data (splitmix64, replayed there) and checks.
//
//   cub_warp_reduce_batched LOG2N REPS
//
// For each (type, op, batches): one warp per tile of 32*B items, lane l holding items
// l, l+32, ... of the tile (batch b: the tile's items 32b .. 32b+31, one per lane); REPS
// rounds of SumToStriped / ReduceToStriped of the items plus the round's number (so that
// no round can be left out or hoisted), each lane adding up its results over the rounds;
// lane l writes its sums of the results of batches l, l+32, ... Prints one JSON line per
// configuration: seconds per launch and a checksum of the output.
#include <cub/warp/warp_reduce_batched.cuh>
#include <cuda/functional>

#include <cstdint>
#include <type_traits>
#include <cstdio>
#include <cstring>

#include "cub_timing.cuh"

constexpr int WARPS = 8;  // 256 threads a block

// coop.ops.max is ``b if a < b else a``. CCCL 3.5's cuda::maximum is that for integers (and
// lets WarpReduceBatched use redux.sync there) but fmax for floating point (NaNs ignored:
// another operator, one FMNMX); for floats, the comparison CCCL 3.0's cuda::maximum made.
struct LessThanMax {
  template <typename T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return (a < b) ? b : a; }
};
template <typename T>
using MaxOf = std::conditional_t<std::is_floating_point_v<T>, LessThanMax, cuda::maximum<>>;

template <typename T, int B, bool Sum, int Reps>
__global__ void __launch_bounds__(WARPS * 32) batched(const T* x, T* out) {
  using Reduce = cub::WarpReduceBatched<T, B, 32>;
  constexpr int PerLane = (B + 31) / 32;
  __shared__ typename Reduce::TempStorage temp[WARPS];
  const int warp_in_block = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const long long tile = (long long)blockIdx.x * WARPS + warp_in_block;
  T items[B];
  T round_items[B];
  T results[PerLane];
  T totals[PerLane] = {};
#pragma unroll
  for (int b = 0; b < B; ++b) items[b] = x[tile * B * 32 + b * 32 + lane];
#pragma unroll 1
  for (int r = 0; r < Reps; ++r) {
#pragma unroll
    for (int b = 0; b < B; ++b) round_items[b] = items[b] + T(r);
    if constexpr (Sum) {
      Reduce(temp[warp_in_block]).SumToStriped(round_items, results);
    } else {
      Reduce(temp[warp_in_block]).ReduceToStriped(round_items, results, MaxOf<T>{});
    }
#pragma unroll
    for (int k = 0; k < PerLane; ++k) totals[k] += results[k];
  }
#pragma unroll
  for (int k = 0; k < PerLane; ++k) {
    const int b = lane + k * 32;
    if (b < B) out[tile * B + b] = totals[k];
  }
}

template <typename T> static void fill(std::vector<T>& x) {
  Rng rng{42};
  for (auto& v : x) v = T((long long)(rng() % 9) - 4);  // integer-valued: every sum exact
}

template <typename T, int B, bool Sum, int Reps>
static void run(const char* type, int log2n, const T* d_x, T* d_out) {
  const long long n = 1ll << log2n;
  const long long tiles = n / (32ll * B);
  const int blocks = (int)(tiles / WARPS);
  auto launch = [&] { batched<T, B, Sum, Reps><<<blocks, WARPS * 32>>>(d_x, d_out); };
  const double seconds = time_it(launch);
  CHECK(cudaGetLastError());
  std::vector<T> out((size_t)blocks * WARPS * B);
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  double checksum = 0;
  for (T v : out) checksum += (double)v;
  std::printf("{\"impl\": \"cub\", \"type\": \"%s\", \"op\": \"%s\", \"batches\": %d, \"reps\": %d, "
              "\"log2n\": %d, \"seconds\": %.9g, \"checksum\": %.17g}\n",
              type, Sum ? "sum" : "max", B, Reps, log2n, seconds, checksum);
}

template <typename T, int Reps> static void all_batches(const char* type, int log2n) {
  const size_t n = size_t(1) << log2n;
  std::vector<T> x(n);
  fill(x);
  T *d_x, *d_out;
  CHECK(cudaMalloc(&d_x, n * sizeof(T)));
  CHECK(cudaMalloc(&d_out, n * sizeof(T)));
  CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  run<T, 4, true, Reps>(type, log2n, d_x, d_out);
  run<T, 8, true, Reps>(type, log2n, d_x, d_out);
  run<T, 16, true, Reps>(type, log2n, d_x, d_out);
  run<T, 32, true, Reps>(type, log2n, d_x, d_out);
  run<T, 64, true, Reps>(type, log2n, d_x, d_out);
  run<T, 8, false, Reps>(type, log2n, d_x, d_out);
  run<T, 32, false, Reps>(type, log2n, d_x, d_out);
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_out));
}

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 26;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 1;
  if (reps == 1) {
    all_batches<float, 1>("float32", log2n);
    all_batches<int, 1>("int32", log2n);
  } else {
    all_batches<float, 64>("float32", log2n);
    all_batches<int, 64>("int32", log2n);
  }
  return 0;
}
