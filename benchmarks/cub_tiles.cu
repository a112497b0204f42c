// CUB side of the coop-vs-CUB tile benchmark (benchmarks/run.py builds and runs it).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CCCL_INCLUDE benchmarks/cub_tiles.cu -o cub_tiles
//   ./cub_tiles [log2_elements [THREADSxITEMS]]   (default 28, every configuration)
//
// For int32 and float32 and each THREADS x ITEMS configuration, two tile kernels, the
// same as benchmarks/coop_tiles.py writes with coop (only the collective differs):
//   tile_sum:           striped loads (item k of thread t = tile[k*THREADS + t]),
//                       cub::BlockReduce::Sum, thread 0 writes out[blockIdx.x];
//   tile_exclusive_sum: blocked loads (thread t holds tile[t*ITEMS .. t*ITEMS+ITEMS-1]),
//                       cub::BlockScan::ExclusiveSum in place, blocked stores to out.
// Default algorithms (BLOCK_REDUCE_WARP_REDUCTIONS, BLOCK_SCAN_RAKING), as coop's.
// Offsets are 64-bit, as Numba's index arithmetic is; plain pointers (no __restrict__), as
// Numba arrays are. Each kernel: 3 warm-up launches, then REPS launches back to back,
// timed by CUDA events recorded between them; the median is reported.
// Output: one JSON line per measurement (plus an "info" line and a memcpy reference).

#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/version.cuh>

#include <algorithm>
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

template <typename T> struct Name;
template <> struct Name<int> { static const char* get() { return "int32"; } };
template <> struct Name<float> { static const char* get() { return "float32"; } };

// Input pattern: value(i) = (i % 13) * scale, scale 1 for int32 and 0.25 for float32.
// Every tile sum and scan prefix is then exact in float32, so checks compare exactly.
template <typename T> struct Scale;
template <> struct Scale<int> { static int get() { return 1; } };
template <> struct Scale<float> { static float get() { return 0.25f; } };
template <typename T> T value_at(long long i) { return static_cast<T>(i % 13) * Scale<T>::get(); }

static double median(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

// Median seconds per launch: WARMUP launches, then REPS launches back to back with an
// event recorded between consecutive ones (the GPU, kept busy by the queue, times the
// kernels, not the host's launch overhead; coop_tiles.py does the same).
template <typename F> static double time_it(F launch) {
  for (int r = 0; r < WARMUP; ++r) launch();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> events(REPS + 1);
  for (auto& e : events) CHECK(cudaEventCreate(&e));
  CHECK(cudaEventRecord(events[0]));
  for (int r = 0; r < REPS; ++r) {
    launch();
    CHECK(cudaEventRecord(events[r + 1]));
  }
  CHECK(cudaEventSynchronize(events[REPS]));
  CHECK(cudaGetLastError());
  std::vector<float> ms(REPS);
  for (int r = 0; r < REPS; ++r) CHECK(cudaEventElapsedTime(&ms[r], events[r], events[r + 1]));
  for (auto& e : events) CHECK(cudaEventDestroy(e));
  return median(ms) * 1e-3;
}

static void emit(const char* kernel, const char* dtype, int threads, int items,
                 double seconds, double bytes, int regs, const char* check) {
  std::printf("{\"impl\": \"cub\", \"kernel\": \"%s\", \"dtype\": \"%s\", \"threads\": %d, "
              "\"items\": %d, \"seconds\": %.9g, \"gbps\": %.6g, \"regs\": %d, "
              "\"check\": \"%s\"}\n",
              kernel, dtype, threads, items, seconds, bytes / seconds * 1e-9, regs, check);
  std::fflush(stdout);
}

template <typename T> struct Buffers {
  long long n;
  std::vector<T> host;  // the input
  T* in = nullptr;
  T* out = nullptr;
};

static const char* only_config = nullptr;  // "THREADSxITEMS": run just that one (profiling)

template <typename T, int THREADS, int ITEMS> static void run_config(Buffers<T>& b) {
  if (only_config && std::to_string(THREADS) + "x" + std::to_string(ITEMS) != only_config) return;
  const int tile = THREADS * ITEMS;
  const long long tiles = b.n / tile;
  const char* dtype = Name<T>::get();
  char check[160];

  // -- block sum: reads n values, writes one per tile
  {
    auto kernel = tile_sum<T, THREADS, ITEMS>;
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, kernel));
    CHECK(cudaMemset(b.out, 0, tiles * sizeof(T)));
    double s = time_it([&] { kernel<<<tiles, THREADS>>>(b.in, b.out); });
    std::vector<T> sums(tiles);
    CHECK(cudaMemcpy(sums.data(), b.out, tiles * sizeof(T), cudaMemcpyDeviceToHost));
    long long bad = 0, first_bad = -1;
    for (long long t = 0; t < tiles; ++t) {
      double expect = 0;
      for (long long i = t * tile; i < (t + 1) * tile; ++i) expect += b.host[i];
      if (static_cast<double>(sums[t]) != expect) {
        if (bad++ == 0) first_bad = t;
      }
    }
    if (bad)
      std::snprintf(check, sizeof check, "FAILED: %lld of %lld tile sums wrong (first: tile %lld)",
                    bad, tiles, first_bad);
    else
      std::snprintf(check, sizeof check, "ok");
    emit("sum", dtype, THREADS, ITEMS, s, double(b.n) * sizeof(T), attr.numRegs, check);
  }

  // -- block exclusive sum: reads and writes n values
  {
    auto kernel = tile_exclusive_sum<T, THREADS, ITEMS>;
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, kernel));
    CHECK(cudaMemset(b.out, 0, b.n * sizeof(T)));
    double s = time_it([&] { kernel<<<tiles, THREADS>>>(b.in, b.out); });
    // spot-check the first, a middle and the last tile
    long long bad = 0;
    std::vector<T> got(tile);
    for (long long t : {0LL, tiles / 2, tiles - 1}) {
      CHECK(cudaMemcpy(got.data(), b.out + t * tile, tile * sizeof(T), cudaMemcpyDeviceToHost));
      double prefix = 0;
      for (int i = 0; i < tile; ++i) {
        if (static_cast<double>(got[i]) != prefix) ++bad;
        prefix += b.host[t * tile + i];
      }
    }
    if (bad)
      std::snprintf(check, sizeof check, "FAILED: %lld wrong prefixes in 3 spot-checked tiles", bad);
    else
      std::snprintf(check, sizeof check, "ok");
    emit("exclusive_sum", dtype, THREADS, ITEMS, s, 2.0 * double(b.n) * sizeof(T), attr.numRegs,
         check);
  }
}

template <typename T> static void run_dtype(long long n) {
  Buffers<T> b;
  b.n = n;
  b.host.resize(n);
  for (long long i = 0; i < n; ++i) b.host[i] = value_at<T>(i);
  CHECK(cudaMalloc(&b.in, n * sizeof(T)));
  CHECK(cudaMalloc(&b.out, n * sizeof(T)));
  CHECK(cudaMemcpy(b.in, b.host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  run_config<T, 128, 1>(b);
  run_config<T, 128, 4>(b);
  run_config<T, 128, 16>(b);
  run_config<T, 256, 4>(b);
  run_config<T, 256, 8>(b);
  run_config<T, 512, 8>(b);
  CHECK(cudaFree(b.in));
  CHECK(cudaFree(b.out));
}

int main(int argc, char** argv) {
  int log2n = argc > 1 ? std::atoi(argv[1]) : 28;
  if (log2n < 13 || log2n > 30) {
    std::fprintf(stderr, "usage: %s [log2_elements, 13..30 [THREADSxITEMS]]\n", argv[0]);
    return 2;
  }
  if (argc > 2) only_config = argv[2];
  const long long n = 1LL << log2n;  // a multiple of every tile (at most 4096 items)

  int dev = 0, driver = 0, runtime = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  std::printf("{\"impl\": \"info\", \"device\": \"%s\", \"cc\": \"%d.%d\", \"driver\": %d, "
              "\"runtime\": %d, \"cub_version\": %d, \"elements\": %lld, \"warmup\": %d, "
              "\"reps\": %d}\n",
              prop.name, prop.major, prop.minor, driver, runtime, CUB_VERSION, n, WARMUP, REPS);

  // Reference: a device-to-device copy of n 4-byte values (counted as read + write).
  {
    void *a, *c;
    const size_t bytes = n * 4;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&c, bytes));
    CHECK(cudaMemset(a, 1, bytes));
    double s = time_it([&] { CHECK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice)); });
    std::printf("{\"impl\": \"cudaMemcpy\", \"kernel\": \"copy\", \"bytes\": %zu, \"seconds\": "
                "%.9g, \"gbps\": %.6g}\n",
                bytes, s, 2.0 * bytes / s * 1e-9);
    CHECK(cudaFree(a));
    CHECK(cudaFree(c));
  }

  run_dtype<int>(n);
  run_dtype<float>(n);
  return 0;
}
