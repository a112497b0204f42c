// CUB's side of benchmarks/tile_analytics.py: one tile per block, the tile loaded (and stored)
// with BLOCK_LOAD/STORE_WARP_TRANSPOSE, one TempStorage union per kernel, for
//   histogram      BlockHistogram (BLOCK_HISTO_ATOMIC, BLOCK_HISTO_SORT) of uint8 samples into
//                  256 __shared__ unsigned counters, then atomically added to a global histogram;
//                  uniform samples, and skewed ones (90% in bin 7, the rest uniform)
//   flag_heads     BlockDiscontinuity::FlagHeads of int32 items with a != b, int32 flags stored
//   subtract_left  BlockAdjacentDifference::SubtractLeft of int32 items with a - b
//   rl_decode      BlockRunLengthDecode of the block's THREADS*RUNS runs (int32 values, int32
//                  lengths in [1, 2]), decoded window after window (THREADS*RUNS items a window)
//                  to the block's place in the output (per-block offsets from the host)
//   copy           the load and the store alone (the reference of coop's run_length_encode)
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CCCL_INCLUDE benchmarks/cub_tile_analytics.cu -o cub_tile_analytics
//   ./cub_tile_analytics [LOG2N_HISTOGRAM [LOG2N_ITEMS]]     (defaults 28 and 26)
//
// Prints one JSON line per kernel: seconds per launch (cub_timing.cuh: median of 20 after 3
// warm-ups, events between back-to-back launches), Gitems/s (samples, items, or decoded items
// for rl_decode), registers, shared memory, and whether the whole output matched the host's.
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_run_length_decode.cuh>
#include <cub/block/block_store.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cub_timing.cuh"

constexpr int BINS = 256;
constexpr int SKEWED_BIN = 7;

struct NotEqual {
  __device__ bool operator()(int a, int b) const { return a != b; }
};

struct Minus {
  __device__ int operator()(int a, int b) const { return a - b; }
};

// -- kernels ------------------------------------------------------------------------------------

template <int THREADS, int ITEMS, cub::BlockHistogramAlgorithm ALGORITHM>
__global__ void __launch_bounds__(THREADS) histogram_tiles(const unsigned char* samples, unsigned* histogram) {
  using Load = cub::BlockLoad<unsigned char, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Histogram = cub::BlockHistogram<unsigned char, THREADS, ITEMS, BINS, ALGORITHM>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Histogram::TempStorage histogram;
  } temp;
  __shared__ unsigned counts[BINS];
  const long long base = (long long)blockIdx.x * THREADS * ITEMS;
  unsigned char items[ITEMS];
  Load(temp.load).Load(samples + base, items);
  __syncthreads();
  Histogram(temp.histogram).Histogram(items, counts);
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += THREADS) atomicAdd(histogram + b, counts[b]);
}

template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS) flag_heads_tiles(const int* in, int* out) {
  using Load = cub::BlockLoad<int, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<int, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Discontinuity = cub::BlockDiscontinuity<int, THREADS>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Discontinuity::TempStorage discontinuity;
  } temp;
  const long long base = (long long)blockIdx.x * THREADS * ITEMS;
  int items[ITEMS];
  int flags[ITEMS];
  Load(temp.load).Load(in + base, items);
  __syncthreads();
  Discontinuity(temp.discontinuity).FlagHeads(flags, items, NotEqual());
  __syncthreads();
  Store(temp.store).Store(out + base, flags);
}

template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS) subtract_left_tiles(const int* in, int* out) {
  using Load = cub::BlockLoad<int, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<int, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Difference = cub::BlockAdjacentDifference<int, THREADS>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Difference::TempStorage difference;
  } temp;
  const long long base = (long long)blockIdx.x * THREADS * ITEMS;
  int items[ITEMS];
  int differences[ITEMS];
  Load(temp.load).Load(in + base, items);
  __syncthreads();
  Difference(temp.difference).SubtractLeft(items, differences, Minus());
  __syncthreads();
  Store(temp.store).Store(out + base, differences);
}

template <int THREADS, int RUNS, int DECODED>
__global__ void __launch_bounds__(THREADS) rl_decode_tiles(const int* values_in, const int* lengths_in,
                                                           const long long* block_offsets, int* out) {
  using Load = cub::BlockLoad<int, THREADS, RUNS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Decode = cub::BlockRunLengthDecode<int, THREADS, RUNS, DECODED>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Decode::TempStorage decode;
  } temp;
  const long long base = (long long)blockIdx.x * THREADS * RUNS;
  int values[RUNS];
  int lengths[RUNS];
  Load(temp.load).Load(values_in + base, values);
  __syncthreads();
  Load(temp.load).Load(lengths_in + base, lengths);
  __syncthreads();
  unsigned total = 0;
  Decode decode(temp.decode, values, lengths, total);
  int* block_out = out + block_offsets[blockIdx.x];
  for (unsigned window = 0; window < total; window += THREADS * DECODED) {
    int items[DECODED];
    decode.RunLengthDecode(items, window);
    for (int i = 0; i < DECODED; ++i) {
      const unsigned position = window + threadIdx.x * DECODED + i;
      if (position < total) block_out[position] = items[i];
    }
  }
}

template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS) copy_tiles(const int* in, int* out) {
  using Load = cub::BlockLoad<int, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<int, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
  } temp;
  const long long base = (long long)blockIdx.x * THREADS * ITEMS;
  int items[ITEMS];
  Load(temp.load).Load(in + base, items);
  __syncthreads();
  Store(temp.store).Store(out + base, items);
}

// -- drivers ------------------------------------------------------------------------------------

template <typename Kernel>
static void report(const char* kernel_name, int threads, int items, const char* algorithm, const char* data,
                   double s, double count, Kernel kernel, bool ok) {
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  std::printf("{\"kernel\": \"%s\", \"threads\": %d, \"items\": %d, \"algorithm\": \"%s\", \"data\": \"%s\", "
              "\"seconds\": %.9g, \"gitems\": %.6g, \"regs\": %d, \"smem\": %zu, \"check\": \"%s\"}\n",
              kernel_name, threads, items, algorithm, data, s, count / s * 1e-9, attr.numRegs,
              attr.sharedSizeBytes, ok ? "ok" : "MISMATCH");
  std::fflush(stdout);
}

struct Histograms {
  long long n;
  std::vector<unsigned char> samples[2];  // uniform, skewed
  std::vector<unsigned> expected[2];
  unsigned char* d_samples[2];
  unsigned* d_histogram;
};

template <int THREADS, int ITEMS, cub::BlockHistogramAlgorithm ALGORITHM> static void run_histogram(Histograms& h) {
  const long long tiles = h.n / (THREADS * ITEMS);
  auto kernel = histogram_tiles<THREADS, ITEMS, ALGORITHM>;
  for (int data = 0; data < 2; ++data) {
    double s = time_it([&] { kernel<<<tiles, THREADS>>>(h.d_samples[data], h.d_histogram); });
    CHECK(cudaGetLastError());
    // one more launch into a zeroed histogram, checked
    CHECK(cudaMemset(h.d_histogram, 0, BINS * 4));
    kernel<<<tiles, THREADS>>>(h.d_samples[data], h.d_histogram);
    CHECK(cudaGetLastError());
    std::vector<unsigned> got(BINS);
    CHECK(cudaMemcpy(got.data(), h.d_histogram, BINS * 4, cudaMemcpyDeviceToHost));
    report("histogram", THREADS, ITEMS, ALGORITHM == cub::BLOCK_HISTO_SORT ? "sort" : "atomic",
           data ? "skewed" : "uniform", s, double(h.n), kernel, got == h.expected[data]);
  }
}

struct Items {
  long long n;
  std::vector<int> runs;  // int32 items in runs of 1 to 5 equal values
  int *d_in, *d_out;
};

template <int THREADS, int ITEMS> static void run_flag_heads(Items& d) {
  const int tile = THREADS * ITEMS;
  const long long tiles = d.n / tile;
  auto kernel = flag_heads_tiles<THREADS, ITEMS>;
  double s = time_it([&] { kernel<<<tiles, THREADS>>>(d.d_in, d.d_out); });
  CHECK(cudaGetLastError());
  std::vector<int> got(d.n);
  CHECK(cudaMemcpy(got.data(), d.d_out, d.n * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (long long i = 0; i < d.n; ++i) ok &= got[i] == (i % tile == 0 || d.runs[i] != d.runs[i - 1] ? 1 : 0);
  report("flag_heads", THREADS, ITEMS, "", "", s, double(d.n), kernel, ok);
}

template <int THREADS, int ITEMS> static void run_subtract_left(Items& d) {
  const int tile = THREADS * ITEMS;
  const long long tiles = d.n / tile;
  auto kernel = subtract_left_tiles<THREADS, ITEMS>;
  double s = time_it([&] { kernel<<<tiles, THREADS>>>(d.d_in, d.d_out); });
  CHECK(cudaGetLastError());
  std::vector<int> got(d.n);
  CHECK(cudaMemcpy(got.data(), d.d_out, d.n * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (long long i = 0; i < d.n; ++i) ok &= got[i] == (i % tile == 0 ? d.runs[i] : d.runs[i] - d.runs[i - 1]);
  report("subtract_left", THREADS, ITEMS, "", "", s, double(d.n), kernel, ok);
}

template <int THREADS, int ITEMS> static void run_copy(Items& d) {
  const long long tiles = d.n / (THREADS * ITEMS);
  auto kernel = copy_tiles<THREADS, ITEMS>;
  double s = time_it([&] { kernel<<<tiles, THREADS>>>(d.d_in, d.d_out); });
  CHECK(cudaGetLastError());
  std::vector<int> got(d.n);
  CHECK(cudaMemcpy(got.data(), d.d_out, d.n * 4, cudaMemcpyDeviceToHost));
  report("copy", THREADS, ITEMS, "", "", s, double(d.n), kernel, got == d.runs);
}

struct Runs {
  long long n;  // runs
  std::vector<int> values, lengths;
  int *d_values, *d_lengths, *d_out;
  long long* d_offsets;
};

template <int THREADS, int RUNS> static void run_rl_decode(Runs& r) {
  const int block_runs = THREADS * RUNS;
  const long long blocks = r.n / block_runs;
  std::vector<long long> offsets(blocks + 1, 0);
  for (long long b = 0; b < blocks; ++b) {
    long long total = 0;
    for (int j = 0; j < block_runs; ++j) total += r.lengths[b * block_runs + j];
    offsets[b + 1] = offsets[b] + total;
  }
  const long long decoded = offsets[blocks];
  CHECK(cudaMemcpy(r.d_offsets, offsets.data(), blocks * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(r.d_out, 0, decoded * 4));
  auto kernel = rl_decode_tiles<THREADS, RUNS, RUNS>;
  double s = time_it([&] { kernel<<<blocks, THREADS>>>(r.d_values, r.d_lengths, r.d_offsets, r.d_out); });
  CHECK(cudaGetLastError());
  std::vector<int> got(decoded);
  CHECK(cudaMemcpy(got.data(), r.d_out, decoded * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  long long k = 0;
  for (long long j = 0; j < r.n; ++j)
    for (int c = 0; c < r.lengths[j]; ++c) ok &= got[k++] == r.values[j];
  report("rl_decode", THREADS, RUNS, "", "", s, double(decoded), kernel, ok);
}

int main(int argc, char** argv) {
  const int log2n_histogram = argc > 1 ? std::atoi(argv[1]) : 28;
  const int log2n_items = argc > 2 ? std::atoi(argv[2]) : 26;
  Rng rng{7};

  {  // histograms
    Histograms h;
    h.n = 1LL << log2n_histogram;
    for (int data = 0; data < 2; ++data) {
      h.samples[data].resize(h.n);
      h.expected[data].assign(BINS, 0);
      for (long long i = 0; i < h.n; ++i) {
        const unsigned long long x = rng();
        const unsigned char sample = data && (x >> 8) % 10 != 0 ? SKEWED_BIN : (unsigned char)(x & 255);
        h.samples[data][i] = sample;
        ++h.expected[data][sample];
      }
      CHECK(cudaMalloc(&h.d_samples[data], h.n));
      CHECK(cudaMemcpy(h.d_samples[data], h.samples[data].data(), h.n, cudaMemcpyHostToDevice));
    }
    CHECK(cudaMalloc(&h.d_histogram, BINS * 4));
    CHECK(cudaMemset(h.d_histogram, 0, BINS * 4));
    run_histogram<128, 4, cub::BLOCK_HISTO_ATOMIC>(h);
    run_histogram<128, 4, cub::BLOCK_HISTO_SORT>(h);
    run_histogram<256, 8, cub::BLOCK_HISTO_ATOMIC>(h);
    run_histogram<256, 8, cub::BLOCK_HISTO_SORT>(h);
    run_histogram<512, 8, cub::BLOCK_HISTO_ATOMIC>(h);
    run_histogram<512, 8, cub::BLOCK_HISTO_SORT>(h);
    for (auto p : h.d_samples) CHECK(cudaFree(p));
    CHECK(cudaFree(h.d_histogram));
  }

  {  // items in runs: flag_heads, subtract_left, copy
    Items d;
    d.n = 1LL << log2n_items;
    d.runs.resize(d.n);
    for (long long i = 0; i < d.n;) {
      const unsigned long long x = rng();
      const int value = int(x & 0x1FFFFF) - (1 << 20);  // in [-2^20, 2^20)
      const int length = 1 + int((x >> 32) % 5);
      for (int c = 0; c < length && i < d.n; ++c) d.runs[i++] = value;
    }
    CHECK(cudaMalloc(&d.d_in, d.n * 4));
    CHECK(cudaMalloc(&d.d_out, d.n * 4));
    CHECK(cudaMemcpy(d.d_in, d.runs.data(), d.n * 4, cudaMemcpyHostToDevice));
    run_flag_heads<128, 4>(d);
    run_flag_heads<256, 8>(d);
    run_subtract_left<128, 4>(d);
    run_subtract_left<256, 8>(d);
    run_copy<128, 4>(d);
    run_copy<256, 8>(d);
    CHECK(cudaFree(d.d_in));
    CHECK(cudaFree(d.d_out));
  }

  {  // runs: rl_decode
    Runs r;
    r.n = 1LL << log2n_items;
    r.values.resize(r.n);
    r.lengths.resize(r.n);
    for (long long j = 0; j < r.n; ++j) {
      const unsigned long long x = rng();
      r.values[j] = int(unsigned(x));
      r.lengths[j] = 1 + int((x >> 32) & 1);  // 1 or 2
    }
    CHECK(cudaMalloc(&r.d_values, r.n * 4));
    CHECK(cudaMalloc(&r.d_lengths, r.n * 4));
    CHECK(cudaMalloc(&r.d_out, r.n * 2 * 4));
    CHECK(cudaMalloc(&r.d_offsets, r.n * 8));
    CHECK(cudaMemcpy(r.d_values, r.values.data(), r.n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(r.d_lengths, r.lengths.data(), r.n * 4, cudaMemcpyHostToDevice));
    run_rl_decode<128, 4>(r);
    run_rl_decode<256, 8>(r);
  }
  return 0;
}
