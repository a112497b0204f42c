// CUB's side of benchmarks/device.py: CUB's device-wide algorithms, each called the two-phase way
// (temp storage sized once, allocated once, outside the timed loop; only the algorithm call is timed):
//   reduce_sum            DeviceReduce::Sum, int32 and float32, one output value
//   inclusive_sum         DeviceScan::InclusiveSum, int32 and float32
//   exclusive_sum         DeviceScan::ExclusiveSum, int32
//   select_flagged        DeviceSelect::Flagged, int32 values, char flags on every other item
//   select_if             DeviceSelect::If, int32, predicate x % 2 == 0
//   histogram_even        DeviceHistogram::HistogramEven, float32 samples in [0, 1), 256 bins over
//                         [0, 1), int32 counters
//   segmented_reduce_sum  DeviceSegmentedReduce::Sum, int32, segments of 1024 items
//   segmented_reduce_sum_power  the same in segments of power-law sizes (segmented_sort_keys_power's)
//   radix_sort_keys       DeviceRadixSort::SortKeys, random uint32 keys, all 32 bits, out of place
//   radix_sort_pairs      DeviceRadixSort::SortPairs, uint32 keys and uint32 values
//   merge_sort_keys       DeviceMergeSort::SortKeysCopy, the uint32 keys by `<`, out of place
//   merge_sort_pairs      DeviceMergeSort::SortPairsCopy, uint32 keys and uint32 values (the positions)
//   segmented_sort_keys   DeviceSegmentedSort::StableSortKeys, the uint32 keys in segments of 64 to
//                         4096 keys (segment j: 64 + ((j * 2654435761 mod 2^32) >> 8) mod 4033 keys,
//                         the last cut at n), out of place
//   segmented_sort_keys_power  the same in segments of power-law sizes (segment j: 65536 / (r + 1) keys,
//                         r = ((j + 1) * 2654435761 mod 2^32) >> 16: 1 to 65536 keys, P(size >= s) ~ 1 / s)
//   top_k_keys            DeviceTopK::MaxKeys, the float32 items' 1024 largest, unordered (the only
//                         requirements CUB implements: determinism::not_guaranteed,
//                         output_ordering::unsorted); headers from CCCL 3.3 on (pip's nvidia-cuda-cccl:
//                         CUDA 13.0's CCCL 3.0 has no DeviceTopK, and then these rows are left out)
//   top_k_keys_many       the same with k = n / 256
//   top_k_pairs           DeviceTopK::MaxPairs, the float32 keys with uint32 values (the positions), k = 1024
//   subtract_left         DeviceAdjacentDifference::SubtractLeftCopy, int32 (the items' differences)
//   unique                DeviceSelect::Unique, int32 items i >> 4 (runs of 16), into another array
//   run_length_encode     DeviceRunLengthEncode::Encode, the same items: each run's item and length (int32)
//   unique_by_key         DeviceSelect::UniqueByKey, unique's items as keys, int32 values i
//   three_way_partition   DevicePartition::If (three-way), the int32 items: x < 2 first, x < 6 second
//   non_trivial_runs      DeviceRunLengthEncode::NonTrivialRuns, unique's items: each run's offset and length
//   inclusive_sum_by_key  DeviceScan::InclusiveSumByKey, unique's items as keys, the int32 items as values
//   lower_bound           DeviceFind::LowerBound (CCCL 3.1 on, else left out), the uint32 keys searched in
//                         their sorted copy, int64 positions
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CCCL_INCLUDE benchmarks/cub_device.cu -o cub_device
//   ./cub_device [LOG2N ...]     (sizes n = 2^LOG2N, LOG2N in [10, 30]; default 16 20 24 28)
//
// Prints one JSON line per (algorithm, dtype, n):
//   {"impl": "cub", "algorithm": ..., "dtype": "int32"|"float32"|"uint32", "n": ...,
//    "seconds": ..., "gitems": ..., "gbytes": ..., "check": "ok"|"MISMATCH"}
// seconds: per call (cub_timing.cuh: median of 20 after 3 warm-ups, events between back-to-back
// calls); gitems: n / seconds * 1e-9 (Gkeys/s for the sorts); gbytes: nominal bytes read + written
// (below, per algorithm) / seconds * 1e-9; check: the output of the last timed call against the host;
// host_us_per_call (n <= 2^20): wall-clock per call of 200 back-to-back calls and one synchronize.
#include <chrono>

#include <cub/device/device_adjacent_difference.cuh>
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_partition.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#if __has_include(<cub/device/device_find.cuh>)
#  include <cub/device/device_find.cuh>
#  define HAVE_DEVICE_FIND 1
#endif
#if __has_include(<cub/device/device_topk.cuh>)
#  include <cub/device/device_topk.cuh>
#  define HAVE_DEVICE_TOPK 1
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "cub_timing.cuh"

constexpr int BINS = 256;
constexpr int SEGMENT = 1024;
[[maybe_unused]] constexpr int TOP_K = 1024;  // top_k_keys' and top_k_pairs' k

struct IsEven {
  __host__ __device__ bool operator()(int x) const { return x % 2 == 0; }
};

template <typename T> static const char* dtype_name() {
  if constexpr (std::is_same_v<T, int>) return "int32";
  else if constexpr (std::is_same_v<T, float>) return "float32";
  else {
    static_assert(std::is_same_v<T, unsigned>);
    return "uint32";
  }
}

// Owns a device array, so that each size's buffers are freed before the next size allocates.
template <typename T> struct DeviceArray {
  T* ptr = nullptr;
  size_t size;
  // never a zero-byte allocation: a null temp pointer would turn a CUB call back into a size query
  explicit DeviceArray(size_t n) : size(n) { CHECK(cudaMalloc(&ptr, std::max<size_t>(n, 1) * sizeof(T))); }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
    CHECK(cudaMemcpy(ptr, host.data(), size * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(ptr); }
  std::vector<T> to_host() const {
    std::vector<T> host(size);
    CHECK(cudaMemcpy(host.data(), ptr, size * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  T at(size_t i) const {
    T x;
    CHECK(cudaMemcpy(&x, ptr + i, sizeof(T), cudaMemcpyDeviceToHost));
    return x;
  }
};

// One size's input: generated on the host, copied to the device once, shared by the algorithms.
template <typename T> struct Input {
  std::vector<T> host;
  DeviceArray<T> device;
  explicit Input(std::vector<T> h) : host(std::move(h)), device(host) {}
  int n() const { return int(host.size()); }
};

// Host time per call (benchmarks/device.py's host_us_per_call): set for sizes up to 2^20, where
// the GPU's part of a call is no longer than the host's; -1 where not measured.
static bool g_measure_host = false;
static double g_host_us = -1;

// call(temp, temp_bytes) is one CUB device call; with temp == nullptr it only sizes the temp storage.
template <typename Call> static double time_cub(Call call) {
  size_t temp_bytes = 0;
  CHECK(call(nullptr, temp_bytes));
  DeviceArray<char> temp(temp_bytes);
  const double s = time_it([&] { CHECK(call(temp.ptr, temp_bytes)); });
  g_host_us = -1;
  if (g_measure_host) {  // wall-clock of 200 back-to-back calls and one synchronize
    const int calls = 200;
    CHECK(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) CHECK(call(temp.ptr, temp_bytes));
    CHECK(cudaDeviceSynchronize());
    g_host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls;
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  return s;
}

static void report(const char* algorithm, const char* dtype, long long n, double s, double bytes, bool ok) {
  std::printf("{\"impl\": \"cub\", \"algorithm\": \"%s\", \"dtype\": \"%s\", \"n\": %lld, \"seconds\": %.9g, "
              "\"gitems\": %.6g, \"gbytes\": %.6g, \"check\": \"%s\"",
              algorithm, dtype, n, s, double(n) / s * 1e-9, bytes / s * 1e-9, ok ? "ok" : "MISMATCH");
  if (g_host_us >= 0) std::printf(", \"host_us_per_call\": %.3f", g_host_us);
  std::printf("}\n");
  std::fflush(stdout);
  g_host_us = -1;
}

// Float sums differ from the host's double sum by the order of the additions, not by a bug:
// compare within a relative 1e-3 (absolute near zero, where the first prefixes are).
static bool close(double got, double expected) {
  return std::fabs(got - expected) <= 1e-3 * std::max(std::fabs(expected), 1.0);
}

// -- drivers ------------------------------------------------------------------------------------
// Int32 references are summed in unsigned (wrapping) arithmetic, the two's-complement result the
// GPU gives; with items in [0, 8) nothing wraps up to n = 2^28 anyway.

template <typename T> static void run_reduce(const Input<T>& in) {
  DeviceArray<T> out(1);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceReduce::Sum(temp, bytes, in.device.ptr, out.ptr, in.n());
  });
  bool ok;
  if constexpr (std::is_integral_v<T>) {
    unsigned expected = 0;
    for (T x : in.host) expected += unsigned(x);
    ok = unsigned(out.at(0)) == expected;
  } else {
    double expected = 0;
    for (T x : in.host) expected += x;
    ok = close(out.at(0), expected);
  }
  report("reduce_sum", dtype_name<T>(), in.n(), s, 4.0 * in.n() + 4, ok);
}

template <bool EXCLUSIVE, typename T> static void run_scan(const Input<T>& in) {
  const int n = in.n();
  DeviceArray<T> out(n);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    if constexpr (EXCLUSIVE) return cub::DeviceScan::ExclusiveSum(temp, bytes, in.device.ptr, out.ptr, n);
    else return cub::DeviceScan::InclusiveSum(temp, bytes, in.device.ptr, out.ptr, n);
  });
  bool ok = true;
  if constexpr (std::is_integral_v<T>) {  // every prefix, exactly
    const std::vector<T> got = out.to_host();
    unsigned prefix = 0;
    for (int i = 0; i < n; ++i) {
      if (EXCLUSIVE) ok &= unsigned(got[i]) == prefix;
      prefix += unsigned(in.host[i]);
      if (!EXCLUSIVE) ok &= unsigned(got[i]) == prefix;
    }
  } else {  // float: a few prefixes and the last one, within the tolerance of close()
    static_assert(!EXCLUSIVE, "the float check below is written for inclusive scans");
    const int step = std::max(n / 16, 1);
    double prefix = 0;
    for (int i = 0; i < n; ++i) {
      prefix += in.host[i];
      if (i % step == 0 || i == n - 1) ok &= close(out.at(i), prefix);
    }
  }
  report(EXCLUSIVE ? "exclusive_sum" : "inclusive_sum", dtype_name<T>(), n, s, 8.0 * n, ok);
}

// Both selections are checked the same way: the count, then the whole selected output, exactly.
static bool check_selection(const std::vector<int>& expected, const DeviceArray<int>& out,
                            const DeviceArray<int>& count) {
  if (count.at(0) != int(expected.size())) return false;
  std::vector<int> got = out.to_host();
  got.resize(expected.size());
  return got == expected;
}

static void run_select_flagged(const Input<int>& in) {
  const int n = in.n();
  std::vector<char> flags(n);
  std::vector<int> expected;
  for (int i = 0; i < n; ++i) {
    flags[i] = i % 2 == 0;
    if (flags[i]) expected.push_back(in.host[i]);
  }
  const DeviceArray<char> d_flags(flags);
  DeviceArray<int> out(n), count(1);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceSelect::Flagged(temp, bytes, in.device.ptr, d_flags.ptr, out.ptr, count.ptr, n);
  });
  report("select_flagged", "int32", n, s, 5.0 * n + 4.0 * expected.size(), check_selection(expected, out, count));
}

static void run_select_if(const Input<int>& in) {
  const int n = in.n();
  std::vector<int> expected;
  std::copy_if(in.host.begin(), in.host.end(), std::back_inserter(expected), IsEven());
  DeviceArray<int> out(n), count(1);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceSelect::If(temp, bytes, in.device.ptr, out.ptr, count.ptr, n, IsEven());
  });
  report("select_if", "int32", n, s, 4.0 * n + 4.0 * expected.size(), check_selection(expected, out, count));
}

static void run_histogram(const Input<float>& in) {
  const int n = in.n();
  DeviceArray<int> histogram(BINS);
  // CUB zeroes the histogram itself at each call, so the last timed call's counts are the checked ones
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceHistogram::HistogramEven(temp, bytes, in.device.ptr, histogram.ptr, BINS + 1, 0.0f, 1.0f, n);
  });
  // CUB's float bin is int((x - lower) * (bins / (upper - lower))), in float: here x * 256.0f, exact
  // (a power-of-two scale of samples that are multiples of 2^-24), so the counts compare exactly
  std::vector<int> expected(BINS, 0);
  for (float x : in.host) ++expected[int((x - 0.0f) * (float(BINS) / (1.0f - 0.0f)))];
  report("histogram_even", "float32", n, s, 4.0 * n, histogram.to_host() == expected);
}

static std::vector<int> segment_offsets(int n) {
  std::vector<int> offsets(n / SEGMENT + 1);
  for (size_t j = 0; j < offsets.size(); ++j) offsets[j] = int(j) * SEGMENT;
  return offsets;
}

static std::vector<int> power_law_offsets(int n);

static void run_segmented_reduce(const Input<int>& in, const char* name, std::vector<int> (*offsets_of)(int)) {
  const int n = in.n();
  const std::vector<int> offsets = offsets_of(n);
  const int segments = int(offsets.size()) - 1;
  const DeviceArray<int> d_offsets(offsets);
  DeviceArray<int> out(segments);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceSegmentedReduce::Sum(temp, bytes, in.device.ptr, out.ptr, segments, d_offsets.ptr,
                                           d_offsets.ptr + 1);
  });
  std::vector<int> expected(segments);
  for (int j = 0; j < segments; ++j)
    expected[j] = std::accumulate(in.host.begin() + offsets[j], in.host.begin() + offsets[j + 1], 0);
  report(name, "int32", n, s, 4.0 * n, out.to_host() == expected);
}

// A sort of keys.host (pairs: the positions as values) by `sort(temp, bytes, keys_in, keys_out, values_in,
// values_out, n)`, reported as `name`. sorted: the host's std::sort of keys.host, shared by the sorts of a size.
// The values must be a permutation that carries each key to its place; `stable`: equal keys in position order.
template <bool PAIRS, class Sort>
static void run_sort(const char* name, const Input<unsigned>& keys, const std::vector<unsigned>& sorted, bool stable,
                     Sort sort) {
  const int n = keys.n();
  DeviceArray<unsigned> keys_out(n);
  std::vector<unsigned> positions(PAIRS ? n : 0);
  std::iota(positions.begin(), positions.end(), 0u);
  const DeviceArray<unsigned> values(positions), values_out(positions.size());
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return sort(temp, bytes, keys.device.ptr, keys_out.ptr, values.ptr, values_out.ptr, n);
  });
  const std::vector<unsigned> got = keys_out.to_host();
  bool ok = got == sorted;
  if constexpr (PAIRS) {
    const std::vector<unsigned> got_values = values_out.to_host();
    std::vector<char> seen(n, 0);
    for (int i = 0; i < n && ok; ++i) {
      const unsigned v = got_values[i];
      ok = v < unsigned(n) && !seen[v] && keys.host[v] == got[i] &&
           (!stable || i == 0 || got[i - 1] != got[i] || got_values[i - 1] < v);
      if (ok) seen[v] = 1;
    }
  }
  report(name, "uint32", n, s, (PAIRS ? 16.0 : 8.0) * n, ok);
}

template <bool PAIRS> static void run_radix_sort(const Input<unsigned>& keys, const std::vector<unsigned>& sorted) {
  run_sort<PAIRS>(PAIRS ? "radix_sort_pairs" : "radix_sort_keys", keys, sorted, false,
                  [](void* temp, size_t& bytes, const unsigned* in, unsigned* out, const unsigned* values_in,
                     unsigned* values_out, int n) {
                    if constexpr (PAIRS)
                      return cub::DeviceRadixSort::SortPairs(temp, bytes, in, out, values_in, values_out, n, 0, 32);
                    else return cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, 0, 32);
                  });
}

struct Less {
  __device__ bool operator()(unsigned a, unsigned b) const { return a < b; }
};

template <bool PAIRS> static void run_merge_sort(const Input<unsigned>& keys, const std::vector<unsigned>& sorted) {
  run_sort<PAIRS>(PAIRS ? "merge_sort_pairs" : "merge_sort_keys", keys, sorted, true,
                  [](void* temp, size_t& bytes, const unsigned* in, unsigned* out, const unsigned* values_in,
                     unsigned* values_out, int n) {
                    if constexpr (PAIRS)
                      return cub::DeviceMergeSort::SortPairsCopy(temp, bytes, in, values_in, out, values_out, n,
                                                                 Less{});
                    else return cub::DeviceMergeSort::SortKeysCopy(temp, bytes, in, out, n, Less{});
                  });
}

// segmented_sort_keys' offsets (benchmarks/device.py's sort_offsets makes the same)
static std::vector<int> sort_offsets(int n) {
  std::vector<int> offsets{0};
  for (unsigned j = 0; offsets.back() < n; ++j) {
    const int size = 64 + int(((j * 2654435761u) >> 8) % 4033u);
    offsets.push_back(std::min(n, offsets.back() + size));
  }
  return offsets;
}

// segmented_sort_keys_power's offsets (device.py's power_law_offsets): sizes 65536 / (r + 1)
// for r uniform in [0, 2^16), P(size >= s) about 1 / s: half the segments of one or two keys,
// one in 4,096 longer than 4,096
static std::vector<int> power_law_offsets(int n) {
  std::vector<int> offsets{0};
  for (unsigned j = 0; offsets.back() < n; ++j) {
    const unsigned r = ((j + 1u) * 2654435761u) >> 16;
    offsets.push_back(std::min(n, offsets.back() + int(65536u / (r + 1u))));
  }
  return offsets;
}

static void run_segmented_sort(const Input<unsigned>& keys, const char* name,
                               std::vector<int> (*offsets_of)(int)) {
  const int n = keys.n();
  const std::vector<int> offsets = offsets_of(n);
  const int segments = int(offsets.size()) - 1;
  const DeviceArray<int> d_offsets(offsets);
  DeviceArray<unsigned> keys_out(n);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceSegmentedSort::StableSortKeys(temp, bytes, keys.device.ptr, keys_out.ptr, n, segments,
                                                    d_offsets.ptr, d_offsets.ptr + 1);
  });
  std::vector<unsigned> expected = keys.host;
  for (int j = 0; j < segments; ++j) std::sort(expected.begin() + offsets[j], expected.begin() + offsets[j + 1]);
  report(name, "uint32", n, s, 8.0 * n, keys_out.to_host() == expected);
}

#ifdef HAVE_DEVICE_TOPK
// The k largest of the float32 items (and, PAIRS, their positions as values), checked as a
// multiset against the host's: the keys sorted equal the k largest sorted (ties are equal
// keys, so whichever are taken, the keys are the same); each value a distinct position
// holding its key.
template <bool PAIRS> static void run_top_k(const Input<float>& keys, const char* name, int k) {
  const int n = keys.n();
  DeviceArray<float> keys_out(k);
  std::vector<unsigned> positions(PAIRS ? n : 0);
  std::iota(positions.begin(), positions.end(), 0u);
  const DeviceArray<unsigned> values(positions), values_out(PAIRS ? k : 0);
  const auto env =
    cuda::execution::require(cuda::execution::determinism::not_guaranteed, cuda::execution::output_ordering::unsorted);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    if constexpr (PAIRS)
      return cub::DeviceTopK::MaxPairs(temp, bytes, keys.device.ptr, keys_out.ptr, values.ptr, values_out.ptr, n, k,
                                       env);
    else return cub::DeviceTopK::MaxKeys(temp, bytes, keys.device.ptr, keys_out.ptr, n, k, env);
  });
  std::vector<float> expected = keys.host;
  std::nth_element(expected.begin(), expected.begin() + (n - k), expected.end());
  expected.erase(expected.begin(), expected.begin() + (n - k));
  std::sort(expected.begin(), expected.end());
  const std::vector<float> got_keys = keys_out.to_host();
  std::vector<float> got = got_keys;
  std::sort(got.begin(), got.end());
  bool ok = got == expected;
  if constexpr (PAIRS) {
    const std::vector<unsigned> got_values = values_out.to_host();
    std::vector<unsigned> seen = got_values;
    std::sort(seen.begin(), seen.end());
    ok = ok && std::adjacent_find(seen.begin(), seen.end()) == seen.end();
    for (int i = 0; i < k && ok; ++i) ok = got_values[i] < unsigned(n) && keys.host[got_values[i]] == got_keys[i];
  }
  report(name, "float32", n, s, 4.0 * n + (PAIRS ? 8.0 : 4.0) * k, ok);
}
#endif

static void run_subtract_left(const Input<int>& in) {
  const int n = in.n();
  DeviceArray<int> out(n);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceAdjacentDifference::SubtractLeftCopy(temp, bytes, in.device.ptr, out.ptr, n);
  });
  std::vector<int> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = i == 0 ? in.host[0] : in.host[i] - in.host[i - 1];
  report("subtract_left", "int32", n, s, 8.0 * n, out.to_host() == expected);
}

// unique's and run_length_encode's items: i >> 4, runs of 16 (device.py's runs_input)
static std::vector<int> runs_input(int n) {
  std::vector<int> x(n);
  for (int i = 0; i < n; ++i) x[i] = i >> 4;
  return x;
}

template <bool ENCODE> static void run_unique(int n) {
  const Input<int> in(runs_input(n));
  const int runs = (n + 15) / 16;
  DeviceArray<int> out(n), counts(ENCODE ? n : 0), num(1);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    if constexpr (ENCODE)
      return cub::DeviceRunLengthEncode::Encode(temp, bytes, in.device.ptr, out.ptr, counts.ptr, num.ptr, n);
    else return cub::DeviceSelect::Unique(temp, bytes, in.device.ptr, out.ptr, num.ptr, n);
  });
  bool ok = num.at(0) == runs;
  const std::vector<int> got = out.to_host();
  for (int j = 0; j < runs && ok; ++j) ok = got[j] == j;
  if constexpr (ENCODE) {
    const std::vector<int> lengths = counts.to_host();
    for (int j = 0; j < runs && ok; ++j) ok = lengths[j] == std::min(16, n - 16 * j);
  }
  report(ENCODE ? "run_length_encode" : "unique", "int32", n, s, 4.0 * n + (ENCODE ? 8.0 : 4.0) * runs, ok);
}

static void run_unique_by_key(int n) {
  const Input<int> keys(runs_input(n));
  std::vector<int> positions(n);
  std::iota(positions.begin(), positions.end(), 0);
  const DeviceArray<int> values(positions);
  const int runs = (n + 15) / 16;
  DeviceArray<int> keys_out(n), values_out(n), num(1);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceSelect::UniqueByKey(temp, bytes, keys.device.ptr, values.ptr, keys_out.ptr, values_out.ptr,
                                          num.ptr, n);
  });
  bool ok = num.at(0) == runs;
  const std::vector<int> got_keys = keys_out.to_host(), got_values = values_out.to_host();
  for (int j = 0; j < runs && ok; ++j) ok = got_keys[j] == j && got_values[j] == 16 * j;
  report("unique_by_key", "int32", n, s, 8.0 * n + 8.0 * runs, ok);
}

static void run_non_trivial_runs(int n) {
  const Input<int> in(runs_input(n));
  DeviceArray<int> offsets(n), lengths(n), num(1);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceRunLengthEncode::NonTrivialRuns(temp, bytes, in.device.ptr, offsets.ptr, lengths.ptr, num.ptr,
                                                      n);
  });
  std::vector<int> starts, runs;
  for (int start = 0; start < n; start += 16)
    if (std::min(16, n - start) > 1) {
      starts.push_back(start);
      runs.push_back(std::min(16, n - start));
    }
  const int k = int(starts.size());
  bool ok = num.at(0) == k;
  const std::vector<int> got_offsets = offsets.to_host(), got_lengths = lengths.to_host();
  for (int j = 0; j < k && ok; ++j) ok = got_offsets[j] == starts[j] && got_lengths[j] == runs[j];
  report("non_trivial_runs", "int32", n, s, 4.0 * n + 8.0 * k, ok);
}

static void run_sum_by_key(const Input<int>& values) {
  const int n = values.n();
  const Input<int> keys(runs_input(n));
  DeviceArray<int> out(n);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceScan::InclusiveSumByKey(temp, bytes, keys.device.ptr, values.device.ptr, out.ptr, n);
  });
  std::vector<int> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = (i % 16 == 0 ? 0 : expected[i - 1]) + values.host[i];
  report("inclusive_sum_by_key", "int32", n, s, 12.0 * n, out.to_host() == expected);
}

struct Below {
  int bound;
  __host__ __device__ bool operator()(int v) const { return v < bound; }
};

static void run_three_way_partition(const Input<int>& in) {
  const int n = in.n();
  DeviceArray<int> first(n), second(n), unselected(n), num(2);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DevicePartition::If(temp, bytes, in.device.ptr, first.ptr, second.ptr, unselected.ptr,
                                            num.ptr, n, Below{2}, Below{6});
  });
  std::vector<int> parts[3];
  for (int v : in.host) parts[v < 2 ? 0 : v < 6 ? 1 : 2].push_back(v);
  const std::vector<int> sizes = {num.at(0), num.at(1)};
  bool ok = sizes[0] == int(parts[0].size()) && sizes[1] == int(parts[1].size());
  const std::vector<int> got[3] = {first.to_host(), second.to_host(), unselected.to_host()};
  for (int p = 0; p < 3 && ok; ++p) ok = std::equal(parts[p].begin(), parts[p].end(), got[p].begin());
  report("three_way_partition", "int32", n, s, 8.0 * n, ok);
}

#ifdef HAVE_DEVICE_FIND
static void run_lower_bound(const Input<unsigned>& keys) {
  const int n = keys.n();
  std::vector<unsigned> sorted = keys.host;
  std::sort(sorted.begin(), sorted.end());
  const DeviceArray<unsigned> range(sorted);
  DeviceArray<long long> out(n);
  const double s = time_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceFind::LowerBound(temp, bytes, range.ptr, n, keys.device.ptr, n, out.ptr,
                                       cuda::std::less<unsigned>{});
  });
  const std::vector<long long> got = out.to_host();
  bool ok = true;
  for (int i = 0; i < n && ok; ++i)
    ok = got[i] == std::lower_bound(sorted.begin(), sorted.end(), keys.host[i]) - sorted.begin();
  report("lower_bound", "uint32", n, s, 12.0 * n, ok);
}
#endif

// CUB_DEVICE_ALGORITHMS=reduce_sum,inclusive_sum,... runs only those (radix_sort: both sorts)
static bool wanted(const char* name) {
  const char* list = std::getenv("CUB_DEVICE_ALGORITHMS");
  return list == nullptr || std::strstr(list, name) != nullptr;
}

int main(int argc, char** argv) {
  std::vector<int> log2ns;
  for (int a = 1; a < argc; ++a) log2ns.push_back(std::atoi(argv[a]));
  if (log2ns.empty()) log2ns = {16, 20, 24, 28};
  for (int log2n : log2ns) {
    // n >= SEGMENT for the segmented reduce; n < 2^31 for CUB's int item counts used here
    if (log2n < 10 || log2n > 30) {
      std::fprintf(stderr, "usage: %s [LOG2N ...]   (each LOG2N in [10, 30])\n", argv[0]);
      return 2;
    }
  }
  Rng rng{7};
  for (int log2n : log2ns) {
    const int n = 1 << log2n;
    g_measure_host = log2n <= 20;
    std::vector<int> ints(n);
    std::vector<float> floats(n);
    std::vector<unsigned> keys(n);
    for (int i = 0; i < n; ++i) {
      ints[i] = int(rng() % 8);                      // small: sums of 2^28 stay below 2^31
      floats[i] = float(rng() >> 40) * 0x1p-24f;     // multiples of 2^-24 in [0, 1), exact in float
      keys[i] = unsigned(rng() >> 32);
    }
    const Input<int> in_ints(std::move(ints));
    const Input<float> in_floats(std::move(floats));
    const Input<unsigned> in_keys(std::move(keys));

    if (wanted("reduce_sum")) {
      run_reduce(in_ints);
      run_reduce(in_floats);
    }
    if (wanted("inclusive_sum")) {
      run_scan<false>(in_ints);
      run_scan<false>(in_floats);
    }
    if (wanted("exclusive_sum")) run_scan<true>(in_ints);
    if (wanted("select_flagged")) run_select_flagged(in_ints);
    if (wanted("select_if")) run_select_if(in_ints);
    if (wanted("histogram_even")) run_histogram(in_floats);
    if (wanted("segmented_reduce_sum")) run_segmented_reduce(in_ints, "segmented_reduce_sum", segment_offsets);
    if (wanted("segmented_reduce_sum_power"))
      run_segmented_reduce(in_ints, "segmented_reduce_sum_power", power_law_offsets);
    if (wanted("segmented_sort_keys")) run_segmented_sort(in_keys, "segmented_sort_keys", sort_offsets);
    if (wanted("segmented_sort_keys_power")) run_segmented_sort(in_keys, "segmented_sort_keys_power", power_law_offsets);
    if (wanted("subtract_left")) run_subtract_left(in_ints);
    if (wanted("unique")) run_unique<false>(n);
    if (wanted("run_length_encode")) run_unique<true>(n);
    if (wanted("unique_by_key")) run_unique_by_key(n);
    if (wanted("three_way_partition")) run_three_way_partition(in_ints);
    if (wanted("inclusive_sum_by_key")) run_sum_by_key(in_ints);
    if (wanted("non_trivial_runs")) run_non_trivial_runs(n);
    if (wanted("lower_bound")) {
#ifdef HAVE_DEVICE_FIND
      run_lower_bound(in_keys);
#else
      std::fprintf(stderr, "these CUB headers have no DeviceFind (CCCL 3.1 on): no lower_bound rows\n");
#endif
    }
    if (wanted("top_k")) {
#ifdef HAVE_DEVICE_TOPK
      if (wanted("top_k_keys")) run_top_k<false>(in_floats, "top_k_keys", TOP_K);
      if (wanted("top_k_keys_many")) run_top_k<false>(in_floats, "top_k_keys_many", n / 256);
      if (wanted("top_k_pairs")) run_top_k<true>(in_floats, "top_k_pairs", TOP_K);
#else
      std::fprintf(stderr, "these CUB headers have no DeviceTopK (CCCL 3.3 on): no top_k rows\n");
#endif
    }
    if (wanted("radix_sort") || wanted("merge_sort")) {
      std::vector<unsigned> sorted = in_keys.host;
      std::sort(sorted.begin(), sorted.end());
      if (wanted("radix_sort")) {
        run_radix_sort<false>(in_keys, sorted);
        run_radix_sort<true>(in_keys, sorted);
      }
      if (wanted("merge_sort_keys")) run_merge_sort<false>(in_keys, sorted);
      if (wanted("merge_sort_pairs")) run_merge_sort<true>(in_keys, sorted);
    }
  }
  return 0;
}
