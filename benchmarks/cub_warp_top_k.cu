// CUB's side of benchmarks/warp_top_k.py: CUB has no warp top-k (its WarpBitonicTopK is a
// draft), so its baseline is cub::WarpMergeSort descending then the first k, on the
// workloads coop's side runs: uint32 keys (splitmix64, as cub_timing.cuh's Rng, replayed
// there) with their tile positions as values, blocked over each warp of 32 lanes, ITEMS
// a lane; the k largest of each warp's tile written out.
//
//   cub_warp_top_k LOG2N
//
// Prints one JSON line per (configuration, k): seconds per launch and a checksum (the sum
// of the selected keys modulo 2^64, whatever their order).
#include <cub/warp/warp_merge_sort.cuh>

#include <cstdint>
#include <cstdio>

#include "cub_timing.cuh"

struct Greater {
  __device__ bool operator()(uint32_t a, uint32_t b) const { return a > b; }
};

template <int Threads, int Items>
__global__ void __launch_bounds__(Threads) select_k(const uint32_t* x, int k, uint32_t* out_keys,
                                                    uint32_t* out_values) {
  constexpr int Warps = Threads / 32, Tile = 32 * Items;
  using SortT = cub::WarpMergeSort<uint32_t, Items, 32, uint32_t>;
  __shared__ typename SortT::TempStorage temp[Warps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long tile = (long long)blockIdx.x * Warps + warp;
  uint32_t keys[Items];
  uint32_t values[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    keys[i] = x[tile * Tile + lane * Items + i];
    values[i] = lane * Items + i;
  }
  SortT(temp[warp]).Sort(keys, values, Greater());
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int position = lane * Items + i;
    if (position < k) {
      out_keys[tile * k + position] = keys[i];
      out_values[tile * k + position] = values[i];
    }
  }
}

template <int Threads, int Items>
static void run(int log2n, int k, const uint32_t* d_x, uint32_t* d_keys, uint32_t* d_values) {
  const long long n = 1ll << log2n;
  const int blocks = (int)(n / (Threads * Items));
  auto launch = [&] { select_k<Threads, Items><<<blocks, Threads>>>(d_x, k, d_keys, d_values); };
  const double seconds = time_it(launch);
  CHECK(cudaGetLastError());
  std::vector<uint32_t> keys((size_t)(n / (32 * Items)) * k);
  CHECK(cudaMemcpy(keys.data(), d_keys, keys.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  unsigned long long checksum = 0;  // (exact: the sum modulo 2^64)
  for (uint32_t v : keys) checksum += v;
  std::printf("{\"impl\": \"cub sort\", \"threads\": %d, \"items\": %d, \"k\": %d, \"log2n\": %d, "
              "\"seconds\": %.9g, \"checksum\": %llu}\n", Threads, Items, k, log2n, seconds, checksum);
}

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 24;
  const size_t n = size_t(1) << log2n;
  std::vector<uint32_t> x(n);
  Rng rng{42};
  for (auto& v : x) v = (uint32_t)rng();
  uint32_t *d_x, *d_keys, *d_values;
  CHECK(cudaMalloc(&d_x, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&d_keys, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&d_values, n * sizeof(uint32_t)));
  CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  for (int k : {4, 16}) run<128, 4>(log2n, k, d_x, d_keys, d_values);
  for (int k : {8, 32}) run<128, 8>(log2n, k, d_x, d_keys, d_values);
  for (int k : {16, 64}) run<128, 16>(log2n, k, d_x, d_keys, d_values);
  return 0;
}
