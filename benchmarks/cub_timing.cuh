// Shared by the CUB sides of the benchmarks: error checks, the timing loop (median of 20
// back-to-back launches, CUDA events between them, after 3 warm-ups) and the host's
// random numbers (splitmix64: fast enough for 2^28 items; benchmarks/device.py replays it).
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                 \
  do {                                                                           \
    cudaError_t status_ = (x);                                                   \
    if (status_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

static double median(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

template <typename F> static double time_it(F launch) {
  for (int r = 0; r < 3; ++r) launch();
  CHECK(cudaDeviceSynchronize());
  const int reps = 20;
  std::vector<cudaEvent_t> events(reps + 1);
  for (auto& e : events) CHECK(cudaEventCreate(&e));
  CHECK(cudaEventRecord(events[0]));
  for (int r = 0; r < reps; ++r) {
    launch();
    CHECK(cudaEventRecord(events[r + 1]));
  }
  CHECK(cudaEventSynchronize(events[reps]));
  std::vector<float> ms(reps);
  for (int r = 0; r < reps; ++r) CHECK(cudaEventElapsedTime(&ms[r], events[r], events[r + 1]));
  for (auto& e : events) CHECK(cudaEventDestroy(e));
  return median(ms) * 1e-3;
}

struct Rng {
  unsigned long long state;
  unsigned long long operator()() {
    unsigned long long z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};
