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

// Exact comparison on the device: result[0] += mismatches, result[1] = min(first index).
template <typename T>
__global__ void count_mismatches(const T* got, const T* want, long long n,
                                 unsigned long long* result) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (got[i] != want[i]) {
      atomicAdd(&result[0], 1ULL);
      atomicMin(&result[1], static_cast<unsigned long long>(i));
    }
  }
}

// -- shared ---------------------------------------------------------------------------------

template <typename T> struct Name;
template <> struct Name<int> { static const char* get() { return "int32"; } };
template <> struct Name<float> { static const char* get() { return "float32"; } };
template <> struct Name<double> { static const char* get() { return "float64"; } };

// Collectives' input pattern: value(i) = (i % 13) * scale, scale 1 for int32 and 0.25 for
// float32. Every tile sum and scan prefix is then exact in float32, so checks compare exactly.
template <typename T> struct Scale;
template <> struct Scale<int> { static int get() { return 1; } };
template <> struct Scale<float> { static float get() { return 0.25f; } };
template <typename T> T value_at(long long i) { return static_cast<T>(i % 13) * Scale<T>::get(); }

// Data movement's input pattern: value(i) = i mod 2^28, distinct within any 2^28 items (so
// a misplaced item is caught) and small enough that i * 3 + 1 is exact in int32 and float64.
template <typename T> T move_value_at(long long i) { return static_cast<T>(i & 0x0FFFFFFFLL); }
template <typename T> T transformed(T x) { return x * T(3) + T(1); }

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

// -- which kernels run ------------------------------------------------------------------------

static const char* only_config = nullptr;  // "THREADSxITEMS": run just that one (profiling)
static bool run_collectives = true, run_data_movement = true;  // --section
static std::vector<std::string> patterns;  // --kernels: globs over kernel specs

// Whether the kernel of this spec (KERNEL:DTYPE:THREADS:ITEMS[:ALGORITHM]) is wanted.
static bool wanted(const std::string& kernel, const char* dtype, int threads, int items,
                   const char* algorithm = nullptr) {
  if (only_config && std::to_string(threads) + "x" + std::to_string(items) != only_config)
    return false;
  if (patterns.empty()) return true;
  std::string spec = kernel + ":" + dtype + ":" + std::to_string(threads) + ":" +
                     std::to_string(items) + (algorithm ? std::string(":") + algorithm : "");
  for (const auto& p : patterns)
    if (fnmatch(p.c_str(), spec.c_str(), 0) == 0) return true;
  return false;
}

// -- collectives ------------------------------------------------------------------------------

template <typename T> struct Buffers {
  long long n;
  std::vector<T> host;  // the input
  T* in = nullptr;
  T* out = nullptr;
};

template <typename T, int THREADS, int ITEMS> static void run_config(Buffers<T>& b) {
  const int tile = THREADS * ITEMS;
  const long long tiles = b.n / tile;
  const char* dtype = Name<T>::get();
  char check[160];

  // -- block sum: reads n values, writes one per tile
  if (wanted("sum", dtype, THREADS, ITEMS)) {
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
  if (wanted("exclusive_sum", dtype, THREADS, ITEMS)) {
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

// -- data movement ----------------------------------------------------------------------------

template <typename T> struct MoveBuffers {
  long long n;
  std::vector<T> host;          // the input
  T* in = nullptr;
  T* out = nullptr;
  T* want[2] = {nullptr, nullptr};  // expected output of COPY (the input) and TRANSFORM
  unsigned long long* mismatches = nullptr;
};

// Exact check of the whole output on the device against the expected array (built on the
// host), plus the first, a middle and the last tile compared on the host.
template <typename T>
static void check_move(MoveBuffers<T>& b, int move, int tile, char* check, size_t size) {
  const unsigned long long init[2] = {0ULL, ULLONG_MAX};
  CHECK(cudaMemcpy(b.mismatches, init, sizeof init, cudaMemcpyHostToDevice));
  count_mismatches<T><<<1024, 256>>>(b.out, b.want[move], b.n, b.mismatches);
  CHECK(cudaGetLastError());
  unsigned long long result[2];
  CHECK(cudaMemcpy(result, b.mismatches, sizeof result, cudaMemcpyDeviceToHost));
  const long long tiles = b.n / tile;
  long long spot_bad = 0;
  std::vector<T> got(tile);
  for (long long t : {0LL, tiles / 2, tiles - 1}) {
    CHECK(cudaMemcpy(got.data(), b.out + t * tile, tile * sizeof(T), cudaMemcpyDeviceToHost));
    for (int i = 0; i < tile; ++i) {
      T x = b.host[t * tile + i];
      if (got[i] != (move == TRANSFORM ? transformed(x) : x)) ++spot_bad;
    }
  }
  if (result[0] || spot_bad)
    std::snprintf(check, size,
                  "FAILED: %llu of %lld items wrong (first: item %lld); %lld wrong in 3 "
                  "spot-checked tiles",
                  result[0], b.n, result[0] ? static_cast<long long>(result[1]) : -1LL, spot_bad);
  else
    std::snprintf(check, size, "ok");
}

template <typename T, int THREADS, int ITEMS, typename Alg, int MOVE>
static void run_move(MoveBuffers<T>& b) {
  const char* kernel_name = MOVE == COPY ? "copy" : "transform";
  const char* dtype = Name<T>::get();
  if (!wanted(kernel_name, dtype, THREADS, ITEMS, Alg::name())) return;
  const int tile = THREADS * ITEMS;
  const long long tiles = b.n / tile;
  auto kernel = tile_move<T, THREADS, ITEMS, Alg, MOVE>;
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  CHECK(cudaMemset(b.out, 0xFF, b.n * sizeof(T)));  // -1 / NaN: nothing left over passes
  double s = time_it([&] { kernel<<<tiles, THREADS>>>(b.in, b.out); });
  char check[200];
  check_move(b, MOVE, tile, check, sizeof check);
  const double bytes = 2.0 * double(b.n) * sizeof(T);
  std::printf("{\"impl\": \"cub\", \"kernel\": \"%s\", \"algorithm\": \"%s\", \"dtype\": \"%s\", "
              "\"threads\": %d, \"items\": %d, \"seconds\": %.9g, \"gbps\": %.6g, \"regs\": %d, "
              "\"smem\": %zu, \"check\": \"%s\"}\n",
              kernel_name, Alg::name(), dtype, THREADS, ITEMS, s, bytes / s * 1e-9, attr.numRegs,
              attr.sharedSizeBytes, check);
  std::fflush(stdout);
}

template <typename T, int THREADS, int ITEMS, typename Alg>
static void run_move_algorithm(MoveBuffers<T>& b) {
  run_move<T, THREADS, ITEMS, Alg, COPY>(b);
  run_move<T, THREADS, ITEMS, Alg, TRANSFORM>(b);
}

template <typename T, int THREADS, int ITEMS> static void run_move_config(MoveBuffers<T>& b) {
  run_move_algorithm<T, THREADS, ITEMS, direct>(b);
  run_move_algorithm<T, THREADS, ITEMS, striped>(b);
  run_move_algorithm<T, THREADS, ITEMS, vectorize>(b);
  run_move_algorithm<T, THREADS, ITEMS, transpose>(b);
  run_move_algorithm<T, THREADS, ITEMS, warp_transpose>(b);
  run_move_algorithm<T, THREADS, ITEMS, warp_transpose_timesliced>(b);
}

template <typename T> static void run_move_dtype(long long n) {
  MoveBuffers<T> b;
  b.n = n;
  b.host.resize(n);
  std::vector<T> want(n);
  for (long long i = 0; i < n; ++i) {
    b.host[i] = move_value_at<T>(i);
    want[i] = transformed(b.host[i]);
  }
  CHECK(cudaMalloc(&b.in, n * sizeof(T)));
  CHECK(cudaMalloc(&b.out, n * sizeof(T)));
  CHECK(cudaMalloc(&b.want[TRANSFORM], n * sizeof(T)));
  CHECK(cudaMalloc(&b.mismatches, 2 * sizeof(unsigned long long)));
  CHECK(cudaMemcpy(b.in, b.host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b.want[TRANSFORM], want.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  b.want[COPY] = b.in;
  run_move_config<T, 128, 4>(b);
  run_move_config<T, 128, 16>(b);
  run_move_config<T, 256, 8>(b);
  run_move_config<T, 512, 8>(b);
  CHECK(cudaFree(b.in));
  CHECK(cudaFree(b.out));
  CHECK(cudaFree(b.want[TRANSFORM]));
  CHECK(cudaFree(b.mismatches));
}

// Whether any kernel of a dtype is wanted (so that its buffers are not built for nothing).
static bool any_wanted(const char* const* kernels, int count, const char* dtype,
                       bool with_algorithm) {
  static const char* algorithms[] = {"direct", "striped", "vectorize", "transpose",
                                     "warp_transpose", "warp_transpose_timesliced"};
  static const int configs[][2] = {{128, 1}, {128, 4}, {128, 16}, {256, 4}, {256, 8}, {512, 8}};
  for (int k = 0; k < count; ++k)
    for (const auto& c : configs)
      for (const char* a : algorithms)
        if (wanted(kernels[k], dtype, c[0], c[1], with_algorithm ? a : nullptr)) return true;
  return false;
}

static int usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [log2_elements, 13..30 [THREADSxITEMS]] "
               "[--section collectives|data-movement|all] [--kernels PATTERN[,PATTERN...]]\n",
               program);
  return 2;
}

int main(int argc, char** argv) {
  int log2n = 28, positional = 0;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--section" && a + 1 < argc) {
      std::string section = argv[++a];
      run_collectives = section == "collectives" || section == "all";
      run_data_movement = section == "data-movement" || section == "all";
      if (!run_collectives && !run_data_movement) return usage(argv[0]);
    } else if (arg == "--kernels" && a + 1 < argc) {
      std::string list = argv[++a];
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        if (comma > start) patterns.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (arg.rfind("--", 0) == 0) {
      return usage(argv[0]);
    } else if (positional == 0) {
      log2n = std::atoi(argv[a]);
      ++positional;
    } else if (positional == 1) {
      only_config = argv[a];
      ++positional;
    } else {
      return usage(argv[0]);
    }
  }
  if (log2n < 13 || log2n > 30) return usage(argv[0]);
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
    std::fflush(stdout);
    CHECK(cudaFree(a));
    CHECK(cudaFree(c));
  }

  static const char* collectives[] = {"sum", "exclusive_sum"};
  static const char* moves[] = {"copy", "transform"};
  if (run_collectives) {
    if (any_wanted(collectives, 2, "int32", false)) run_dtype<int>(n);
    if (any_wanted(collectives, 2, "float32", false)) run_dtype<float>(n);
  }
  if (run_data_movement) {
    if (any_wanted(moves, 2, "int32", true)) run_move_dtype<int>(n);
    if (any_wanted(moves, 2, "float64", true)) run_move_dtype<double>(n);
  }
  return 0;
}
