// CUB's side of benchmarks/radix_sort.py: per-tile radix sort of uint32 keys (and uint32
// values), loaded and stored with BLOCK_LOAD/STORE_WARP_TRANSPOSE, one TempStorage union.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CCCL_INCLUDE benchmarks/cub_radix_sort.cu -o cub_radix_sort
//   ./cub_radix_sort LOG2N
//
// Prints one JSON line per kernel: seconds per launch (cub_timing.cuh: median of 20 after 3 warm-ups,
// events between back-to-back launches), Gkeys/s, registers, and whether every tile came
// out sorted as the host's stable sort would (keys, and values = original positions).
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "cub_timing.cuh"

template <int THREADS, int ITEMS, bool VALUES> struct Tile {
  using Load = cub::BlockLoad<unsigned, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<unsigned, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<unsigned, THREADS, ITEMS, std::conditional_t<VALUES, unsigned, cub::NullType>>;
  union TempStorage {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Sort::TempStorage sort;
  };
  // past 48 KiB (1024x16) the union is a dynamic shared array, its size given at launch
  static constexpr bool dynamic = sizeof(TempStorage) > 48 * 1024;
};

template <int THREADS, int ITEMS, bool VALUES, bool DESCENDING>
__device__ __forceinline__ void sort_tile(typename Tile<THREADS, ITEMS, VALUES>::TempStorage& temp,
                                          const unsigned* keys_in, unsigned* keys_out, const unsigned* values_in,
                                          unsigned* values_out) {
  using T = Tile<THREADS, ITEMS, VALUES>;
  const long long base = (long long)blockIdx.x * THREADS * ITEMS;
  unsigned keys[ITEMS];
  unsigned values[ITEMS];
  typename T::Load(temp.load).Load(keys_in + base, keys);
  if constexpr (VALUES) {
    __syncthreads();
    typename T::Load(temp.load).Load(values_in + base, values);
  }
  __syncthreads();
  if constexpr (VALUES) {
    if constexpr (DESCENDING) typename T::Sort(temp.sort).SortDescending(keys, values);
    else typename T::Sort(temp.sort).Sort(keys, values);
  } else {
    if constexpr (DESCENDING) typename T::Sort(temp.sort).SortDescending(keys);
    else typename T::Sort(temp.sort).Sort(keys);
  }
  __syncthreads();
  typename T::Store(temp.store).Store(keys_out + base, keys);
  if constexpr (VALUES) {
    __syncthreads();
    typename T::Store(temp.store).Store(values_out + base, values);
  }
}

template <int THREADS, int ITEMS, bool VALUES, bool DESCENDING>
__global__ void __launch_bounds__(THREADS) sort_tiles(const unsigned* keys_in, unsigned* keys_out,
                                                      const unsigned* values_in, unsigned* values_out) {
  using TempStorage = typename Tile<THREADS, ITEMS, VALUES>::TempStorage;
  if constexpr (Tile<THREADS, ITEMS, VALUES>::dynamic) {
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    sort_tile<THREADS, ITEMS, VALUES, DESCENDING>(*reinterpret_cast<TempStorage*>(dynamic_shared), keys_in, keys_out,
                                                  values_in, values_out);
  } else {
    __shared__ TempStorage temp;
    sort_tile<THREADS, ITEMS, VALUES, DESCENDING>(temp, keys_in, keys_out, values_in, values_out);
  }
}

struct Data {
  long long n;
  std::vector<unsigned> keys, positions;
  unsigned *d_keys, *d_values, *d_keys_out, *d_values_out;
};

template <int THREADS, int ITEMS, bool VALUES, bool DESCENDING> static void run(Data& d) {
  const int tile = THREADS * ITEMS;
  const long long tiles = d.n / tile;
  auto kernel = sort_tiles<THREADS, ITEMS, VALUES, DESCENDING>;
  using T = Tile<THREADS, ITEMS, VALUES>;
  const int dynamic_bytes = T::dynamic ? (int)sizeof(typename T::TempStorage) : 0;
  if (T::dynamic) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_bytes));
  double s = time_it([&] {
    kernel<<<tiles, THREADS, dynamic_bytes>>>(d.d_keys, d.d_keys_out, d.d_values, d.d_values_out);
  });
  CHECK(cudaGetLastError());
  // check a few tiles against the host's stable sort
  std::vector<unsigned> got(d.n), got_values(d.n);
  CHECK(cudaMemcpy(got.data(), d.d_keys_out, d.n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_values.data(), d.d_values_out, d.n * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (long long t : {0LL, tiles / 2, tiles - 1}) {
    std::vector<int> order(tile);
    std::iota(order.begin(), order.end(), 0);
    const unsigned* k = d.keys.data() + t * tile;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return DESCENDING ? k[a] > k[b] : k[a] < k[b]; });
    for (int i = 0; i < tile; ++i) {
      ok &= got[t * tile + i] == k[order[i]];
      if (VALUES) ok &= got_values[t * tile + i] == d.positions[t * tile + order[i]];
    }
  }
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  std::printf("{\"impl\": \"cub\", \"threads\": %d, \"items\": %d, \"values\": %s, \"descending\": %s, "
              "\"seconds\": %.9g, \"gkeys\": %.6g, \"regs\": %d, \"smem\": %zu, \"check\": \"%s\"}\n",
              THREADS, ITEMS, VALUES ? "true" : "false", DESCENDING ? "true" : "false", s,
              double(tiles * tile) / s * 1e-9, attr.numRegs, attr.sharedSizeBytes + dynamic_bytes, ok ? "ok" : "MISMATCH");
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  Data d;
  d.n = 1LL << (argc > 1 ? std::atoi(argv[1]) : 26);
  d.keys.resize(d.n);
  d.positions.resize(d.n);
  std::mt19937 rng(7);
  for (long long i = 0; i < d.n; ++i) d.keys[i] = rng();
  CHECK(cudaMalloc(&d.d_keys, d.n * 4));
  CHECK(cudaMalloc(&d.d_values, d.n * 4));
  CHECK(cudaMalloc(&d.d_keys_out, d.n * 4));
  CHECK(cudaMalloc(&d.d_values_out, d.n * 4));
  CHECK(cudaMemcpy(d.d_keys, d.keys.data(), d.n * 4, cudaMemcpyHostToDevice));
  // values: each key's position in its tile (set per configuration below)
  auto set_positions = [&](int tile) {
    for (long long i = 0; i < d.n; ++i) d.positions[i] = unsigned(i % tile);
    CHECK(cudaMemcpy(d.d_values, d.positions.data(), d.n * 4, cudaMemcpyHostToDevice));
  };
  set_positions(128 * 1); run<128, 1, false, false>(d);
  set_positions(128 * 4); run<128, 4, false, false>(d);
  set_positions(128 * 16); run<128, 16, false, false>(d);
  set_positions(256 * 4); run<256, 4, false, false>(d);
  set_positions(256 * 8); run<256, 8, false, false>(d);
  set_positions(512 * 8); run<512, 8, false, false>(d);
  set_positions(256 * 8); run<256, 8, true, false>(d);
  set_positions(256 * 8); run<256, 8, false, true>(d);
  set_positions(1024 * 16); run<1024, 16, false, false>(d);
  return 0;
}
