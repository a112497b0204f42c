// Shared by the CUB sides of the sort benchmarks: error checks and the timing loop
// (median of 20 back-to-back launches, CUDA events between them, after 3 warm-ups).
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
