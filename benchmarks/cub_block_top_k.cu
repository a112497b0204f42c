// CUB's side of benchmarks/block_top_k.py: cub::detail::block_topk (CUB >= 3.3, detail;
// newer than CUDA 13.0's headers: build with pip's CCCL headers) and, for the baseline,
// cub::BlockRadixSort::SortDescending, on the workloads coop's side runs: uint32 keys
// (splitmix64, as cub_timing.cuh's Rng, replayed there) with their tile positions as
// values, blocked, THREADS x ITEMS a tile; the k largest of each tile written out.
//
//   cub_block_top_k LOG2N
//
// Prints one JSON line per (implementation, configuration, k): seconds per launch and a
// checksum (the sum of the selected keys modulo 2^64, whatever their order).
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_topk.cuh>

#include <cstdint>
#include <cstdio>

#include "cub_timing.cuh"

template <int Threads, int Items, bool TopK>
__global__ void __launch_bounds__(Threads) select_k(const uint32_t* x, int k, uint32_t* out_keys,
                                                    uint32_t* out_values) {
  using TopKT = cub::detail::block_topk<uint32_t, Threads, Items, uint32_t>;
  using SortT = cub::BlockRadixSort<uint32_t, Threads, Items, uint32_t>;
  __shared__ union {
    typename TopKT::TempStorage topk;
    typename SortT::TempStorage sort;
  } temp;
  constexpr int Tile = Threads * Items;
  const long long base = (long long)blockIdx.x * Tile;
  uint32_t keys[Items];
  uint32_t values[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    keys[i] = x[base + threadIdx.x * Items + i];
    values[i] = threadIdx.x * Items + i;
  }
  if constexpr (TopK) {
    TopKT(temp.topk).template max_pairs<true>(keys, values, k, Tile);
  } else {
    SortT(temp.sort).SortDescending(keys, values);
  }
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int position = threadIdx.x * Items + i;
    if (position < k) {
      out_keys[(long long)blockIdx.x * k + position] = keys[i];
      out_values[(long long)blockIdx.x * k + position] = values[i];
    }
  }
}

template <int Threads, int Items, bool TopK>
static void run(int log2n, int k, const uint32_t* d_x, uint32_t* d_keys, uint32_t* d_values) {
  const long long n = 1ll << log2n;
  const int tiles = (int)(n / (Threads * Items));
  auto launch = [&] { select_k<Threads, Items, TopK><<<tiles, Threads>>>(d_x, k, d_keys, d_values); };
  const double seconds = time_it(launch);
  CHECK(cudaGetLastError());
  std::vector<uint32_t> keys((size_t)tiles * k);
  CHECK(cudaMemcpy(keys.data(), d_keys, keys.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  unsigned long long checksum = 0;  // (exact: the sum modulo 2^64)
  for (uint32_t v : keys) checksum += v;
  std::printf("{\"impl\": \"%s\", \"threads\": %d, \"items\": %d, \"k\": %d, \"log2n\": %d, \"seconds\": %.9g, "
              "\"checksum\": %llu}\n", TopK ? "cub top_k" : "cub sort", Threads, Items, k, log2n, seconds, checksum);
}

template <int Threads, int Items>
static void both(int log2n, int k, const uint32_t* d_x, uint32_t* d_keys, uint32_t* d_values) {
  run<Threads, Items, true>(log2n, k, d_x, d_keys, d_values);
  run<Threads, Items, false>(log2n, k, d_x, d_keys, d_values);
}

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 26;
  const size_t n = size_t(1) << log2n;
  std::vector<uint32_t> x(n);
  Rng rng{42};
  for (auto& v : x) v = (uint32_t)rng();
  uint32_t *d_x, *d_keys, *d_values;
  CHECK(cudaMalloc(&d_x, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&d_keys, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&d_values, n * sizeof(uint32_t)));
  CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  for (int k : {8, 32, 256}) both<256, 8>(log2n, k, d_x, d_keys, d_values);
  for (int k : {16, 256}) both<128, 16>(log2n, k, d_x, d_keys, d_values);
  return 0;
}
