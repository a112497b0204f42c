// CUB's side of benchmarks/merge_sort.py: per-tile merge sort of int32 keys with `<`:
// BlockMergeSort between BLOCK_LOAD/STORE_WARP_TRANSPOSE (one TempStorage union), and
// WarpMergeSort (four logical warps of 32 lanes a block) between WARP_LOAD/STORE_TRANSPOSE.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CCCL_INCLUDE benchmarks/cub_merge_sort.cu -o cub_merge_sort
//   ./cub_merge_sort LOG2N
//
// Prints one JSON line per kernel: seconds per launch (cub_timing.cuh: median of 20 after 3 warm-ups,
// events between back-to-back launches), Gkeys/s, registers, shared memory, and whether
// three tiles came out as the host's stable sort.
#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_merge_sort.cuh>
#include <cub/warp/warp_store.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cub_timing.cuh"

struct Less {
  __device__ bool operator()(int a, int b) const { return a < b; }
};

constexpr int WARP_BLOCK_THREADS = 128;

template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS) block_sort(const int* keys_in, int* keys_out) {
  using Load = cub::BlockLoad<int, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<int, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Sort = cub::BlockMergeSort<int, THREADS, ITEMS>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Sort::TempStorage sort;
  } temp;
  const long long base = (long long)blockIdx.x * THREADS * ITEMS;
  int keys[ITEMS];
  Load(temp.load).Load(keys_in + base, keys);
  __syncthreads();
  Sort(temp.sort).Sort(keys, Less());
  __syncthreads();
  Store(temp.store).Store(keys_out + base, keys);
}

template <int LANES, int ITEMS>
__global__ void __launch_bounds__(WARP_BLOCK_THREADS) warp_sort(const int* keys_in, int* keys_out) {
  constexpr int WARPS = WARP_BLOCK_THREADS / LANES;
  using Load = cub::WarpLoad<int, ITEMS, cub::WARP_LOAD_TRANSPOSE, LANES>;
  using Store = cub::WarpStore<int, ITEMS, cub::WARP_STORE_TRANSPOSE, LANES>;
  using Sort = cub::WarpMergeSort<int, ITEMS, LANES>;
  // one union per warp: the warps' phases are not in step
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Sort::TempStorage sort;
  } temp[WARPS];
  const int warp = threadIdx.x / LANES;
  const long long base = (long long)blockIdx.x * WARP_BLOCK_THREADS * ITEMS + (long long)warp * LANES * ITEMS;
  int keys[ITEMS];
  Load(temp[warp].load).Load(keys_in + base, keys);
  __syncwarp();
  Sort(temp[warp].sort).Sort(keys, Less());
  __syncwarp();
  Store(temp[warp].store).Store(keys_out + base, keys);
}

struct Data {
  long long n;
  std::vector<int> keys;
  int *d_keys, *d_out;
};

template <typename Kernel>
static void run(Data& d, const char* level, int lanes, int items, int threads, Kernel kernel) {
  const int block_keys = threads * items;
  const long long blocks = d.n / block_keys;
  double s = time_it([&] { kernel<<<blocks, threads>>>(d.d_keys, d.d_out); });
  CHECK(cudaGetLastError());
  std::vector<int> got(d.n);
  CHECK(cudaMemcpy(got.data(), d.d_out, d.n * 4, cudaMemcpyDeviceToHost));
  const int tile = lanes * items;
  const long long tiles = d.n / tile;
  bool ok = true;
  for (long long t : {0LL, tiles / 2, tiles - 1}) {
    std::vector<int> expected(d.keys.begin() + t * tile, d.keys.begin() + (t + 1) * tile);
    std::stable_sort(expected.begin(), expected.end());
    for (int i = 0; i < tile; ++i) ok &= got[t * tile + i] == expected[i];
  }
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  std::printf("{\"level\": \"%s\", \"lanes\": %d, \"items\": %d, \"seconds\": %.9g, \"gkeys\": %.6g, "
              "\"regs\": %d, \"smem\": %zu, \"check\": \"%s\"}\n",
              level, lanes, items, s, double(d.n) / s * 1e-9, attr.numRegs, attr.sharedSizeBytes, ok ? "ok" : "MISMATCH");
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  Data d;
  d.n = 1LL << (argc > 1 ? std::atoi(argv[1]) : 26);
  d.keys.resize(d.n);
  std::mt19937 rng(7);
  for (long long i = 0; i < d.n; ++i) d.keys[i] = int(rng());
  CHECK(cudaMalloc(&d.d_keys, d.n * 4));
  CHECK(cudaMalloc(&d.d_out, d.n * 4));
  CHECK(cudaMemcpy(d.d_keys, d.keys.data(), d.n * 4, cudaMemcpyHostToDevice));
  run(d, "block", 128, 4, 128, block_sort<128, 4>);
  run(d, "block", 256, 8, 256, block_sort<256, 8>);
  run(d, "block", 512, 8, 512, block_sort<512, 8>);
  run(d, "warp", 32, 4, WARP_BLOCK_THREADS, warp_sort<32, 4>);
  run(d, "warp", 32, 8, WARP_BLOCK_THREADS, warp_sort<32, 8>);
  return 0;
}
