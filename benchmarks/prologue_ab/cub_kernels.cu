// CUB side of the coop-vs-CUB tile benchmark (benchmarks/run.py builds and runs it).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CCCL_INCLUDE benchmarks/cub_tiles.cu -o cub_tiles
//   ./cub_tiles [log2_elements [THREADSxITEMS]] [--section collectives|data-movement|all]
//               [--kernels PATTERN[,PATTERN...]]
//   (default: 2^28 elements, every configuration, both sections, every kernel; PATTERNs
//   are shell globs over kernel specs such as sum:int32:128:4 or
//   copy:float64:256:8:warp_transpose, as coop_tiles.py names them)
//
// Collectives, for int32 and float32 and each THREADS x ITEMS configuration, two tile
// kernels, the same as benchmarks/coop_tiles.py writes with coop (only the collective
// differs):
//   tile_sum:           striped loads (cub::LoadDirectStriped<THREADS>: item k of thread t
//                       = tile[k*THREADS + t]), cub::BlockReduce::Sum, thread 0 writes
//                       out[blockIdx.x] (coop: coop.block.load, algorithm "striped");
//   tile_exclusive_sum: blocked loads (cub::LoadDirectBlocked: thread t holds
//                       tile[t*ITEMS .. t*ITEMS+ITEMS-1]), cub::BlockScan::ExclusiveSum in
//                       place, blocked stores (cub::StoreDirectBlocked) to out (coop:
//                       coop.block.load / coop.block.store, algorithm "direct").
// Default algorithms (BLOCK_REDUCE_WARP_REDUCTIONS, BLOCK_SCAN_RAKING), as coop's.
//
// Data movement, for int32 and float64, THREADS x ITEMS in 128x4, 128x16, 256x8, 512x8 and
// every BlockLoad / BlockStore algorithm (DIRECT, STRIPED, VECTORIZE, TRANSPOSE,
// WARP_TRANSPOSE, WARP_TRANSPOSE_TIMESLICED, the same for the load and the store):
//   tile_move<..., COPY>:      cub::BlockLoad the block's tile into T items[ITEMS],
//                              cub::BlockStore it to out;
//   tile_move<..., TRANSFORM>: the same with items[k] = items[k] * 3 + 1 in between.
// The load's and the store's TempStorage share one __shared__ union; the algorithms that
// use it (the transposes) have a __syncthreads() between the load and the store, as CUB's
// docs require before reusing TempStorage (the others have no TempStorage, no barrier).
//
// Offsets are 64-bit, as Numba's index arithmetic is; plain pointers (no __restrict__), as
// Numba arrays are. Each kernel: 3 warm-up launches, then REPS launches back to back,
// timed by CUDA events recorded between them; the median is reported.
// Output: one JSON line per measurement (plus an "info" line and a memcpy reference).

#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/version.cuh>

#include <fnmatch.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
                   cudaGetErrorString(err_));                                          \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

static const int WARMUP = 3;
static const int REPS = 20;

template <typename T, int THREADS, int ITEMS>
__global__ void tile_sum(const T* in, T* out) {
  using Reduce = cub::BlockReduce<T, THREADS>;
  __shared__ typename Reduce::TempStorage temp;
  T items[ITEMS];
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * ITEMS);
  cub::LoadDirectStriped<THREADS>(threadIdx.x, in + base, items);
  T total = Reduce(temp).Sum(items);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

template <typename T, int THREADS, int ITEMS>
__global__ void tile_exclusive_sum(const T* in, T* out) {
  using Scan = cub::BlockScan<T, THREADS>;
  __shared__ typename Scan::TempStorage temp;
  T items[ITEMS];
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * ITEMS);
  cub::LoadDirectBlocked(threadIdx.x, in + base, items);
  Scan(temp).ExclusiveSum(items, items);
  cub::StoreDirectBlocked(threadIdx.x, out + base, items);
}

// -- data movement: BlockLoad, (transform,) BlockStore -------------------------------------

// One BlockLoad / BlockStore algorithm pair, named as coop names it; SHARED: it has a
// TempStorage (a block exchange), reused by the store after the load.
#define ALGORITHM(NAME, LOAD, STORE, SHARED)                                         \
  struct NAME {                                                                      \
    static constexpr cub::BlockLoadAlgorithm load = cub::LOAD;                        \
    static constexpr cub::BlockStoreAlgorithm store = cub::STORE;                     \
    static constexpr bool shared = SHARED;                                            \
    static const char* name() { return #NAME; }                                       \
  };
ALGORITHM(direct, BLOCK_LOAD_DIRECT, BLOCK_STORE_DIRECT, false)
ALGORITHM(striped, BLOCK_LOAD_STRIPED, BLOCK_STORE_STRIPED, false)
ALGORITHM(vectorize, BLOCK_LOAD_VECTORIZE, BLOCK_STORE_VECTORIZE, false)
ALGORITHM(transpose, BLOCK_LOAD_TRANSPOSE, BLOCK_STORE_TRANSPOSE, true)
ALGORITHM(warp_transpose, BLOCK_LOAD_WARP_TRANSPOSE, BLOCK_STORE_WARP_TRANSPOSE, true)
ALGORITHM(warp_transpose_timesliced, BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED,
          BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED, true)
#undef ALGORITHM

enum Move { COPY, TRANSFORM };

template <typename T, int THREADS, int ITEMS, typename Alg, int MOVE>
__global__ void tile_move(const T* in, T* out) {
  using Load = cub::BlockLoad<T, THREADS, ITEMS, Alg::load>;
  using Store = cub::BlockStore<T, THREADS, ITEMS, Alg::store>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
  } temp;
  T items[ITEMS];
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * ITEMS);
  Load(temp.load).Load(in + base, items);
  if constexpr (MOVE == TRANSFORM) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) items[k] = items[k] * T(3) + T(1);
  }
  if constexpr (Alg::shared) __syncthreads();  // the store reuses the load's TempStorage
  Store(temp.store).Store(out + base, items);
}

// -- explicit instantiations for SASS inspection (/tmp/s15/sass) --
template __global__ void tile_move<double, 128, 4, direct, COPY>(const double*, double*);
template __global__ void tile_move<double, 128, 4, direct, TRANSFORM>(const double*, double*);
template __global__ void tile_move<double, 128, 16, direct, COPY>(const double*, double*);
template __global__ void tile_move<double, 128, 16, direct, TRANSFORM>(const double*, double*);
template __global__ void tile_move<double, 128, 4, striped, COPY>(const double*, double*);
template __global__ void tile_move<int, 128, 4, direct, COPY>(const int*, int*);
template __global__ void tile_move<int, 128, 4, direct, TRANSFORM>(const int*, int*);
template __global__ void tile_exclusive_sum<int, 256, 4>(const int*, int*);
template __global__ void tile_exclusive_sum<float, 256, 4>(const float*, float*);
template __global__ void tile_exclusive_sum<int, 128, 4>(const int*, int*);
template __global__ void tile_exclusive_sum<int, 256, 8>(const int*, int*);
