// In-process A/B for the coop-vs-CUB misses (run on an H100, 2026-12-06: BENCHMARKS.md, "The float64 \"direct\" misses are the index prologue").
//
// On the same buffers, in one process, interleaved in rounds: CUB's kernels (the templates of
// benchmarks/cub_tiles.cu), CUB's copy/transform with coop's index prologue
// (3-D block rank, the slice clamp of d_in[base:]) and coop's own cubins (numba-cuda and
// numba-cuda-mlir PTX, assembled by ptxas 13.0: cubin/*.cubin) launched through the driver with
// Numba's / MLIR's array ABI. If coop's cubins match CUB here, the gap of run.py is not the code
// (process, allocation, harness); if they don't, and CUB+prologue falls to coop's speed, it is
// the prologue.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CCCL ab.cu -o ab
//   ./ab manifest.txt [log2n=28] [rounds=3] [out_offset_bytes=0]
//   (out_offset_bytes: the output placed that far past its allocation's start, e.g. 2097152,
//   to see whether the in/out placement moves the direct float64 copies)
// manifest.txt lines: LABEL KIND DTYPE THREADS ITEMS OP CUBIN ENTRY
//   KIND cub | cubidx | cubrank | cubclamp | cubrank1d | nc | mlir (cubrank, cubclamp: CUB's with the
//   rank or the clamp of coop's prologue only; cubrank1d: the rank from tid.x where the launch
//   is 1-D); DTYPE float64 | int32 | float32; OP copy | transform | exsum;
//   CUBIN/ENTRY "-" for cub / cubidx.
// CUB's kernels, timing (median(), time_it()) and checks: benchmarks/cub_tiles.cu, less its
// command line
#define main cub_tiles_main
#include "../cub_tiles.cu"
#undef main

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <type_traits>

// CUB's direct copy / transform with coop's index work, or a part of it (PARTS: RANK_3D, the
// rank from (tid.z, tid.y, tid.x) and the blockDim, else tid.x; SLICE_CLAMP, the start of
// d_in[base:] clamped to [0, n] as Python slices are, else base).
// RANK_1D_FIRST: the 3-D rank, but tid.x alone where the launch is 1-D (blockDim.y and .z 1,
// a uniform branch), so a 1-D block reads no tid.y / tid.z (measured: no faster than RANK_3D,
// the blockDim reads being what costs).
enum { RANK_3D = 1, SLICE_CLAMP = 2, RANK_1D_FIRST = 4 };
template <typename T, int THREADS, int ITEMS, int MOVE, int PARTS = RANK_3D | SLICE_CLAMP>
__global__ void tile_move_coopidx(const T* in, long long n_in, T* out, long long n_out) {
  unsigned rank = threadIdx.x;
  if (PARTS & RANK_3D) rank = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  if (PARTS & RANK_1D_FIRST) {
    if ((blockDim.y | blockDim.z) != 1) rank = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  }
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * ITEMS);
  long long s_in = base, s_out = base;
  if (PARTS & SLICE_CLAMP) {
    s_in = base < 0 ? base + n_in : base;
    s_in = s_in < 0 ? 0 : (s_in > n_in ? n_in : s_in);
    s_out = base < 0 ? base + n_out : base;
    s_out = s_out < 0 ? 0 : (s_out > n_out ? n_out : s_out);
  }
  const T* p = in + s_in + static_cast<unsigned long long>(rank) * ITEMS;
  T items[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) items[k] = p[k];
  if constexpr (MOVE == TRANSFORM) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) items[k] = items[k] * T(3) + T(1);
  }
  T* q = out + s_out + static_cast<unsigned long long>(rank) * ITEMS;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) q[k] = items[k];
}

template <typename T> __global__ void fill_move(T* x, long long n) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x)
    x[i] = static_cast<T>(i & 0x0FFFFFFFLL);
}
template <typename T> __global__ void fill_scan(T* x, long long n) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x)
    x[i] = static_cast<T>(i % 13) * (std::is_same<T, float>::value ? T(0.25f) : T(1));
}
template <typename T> __global__ void count_bad(const T* in, const T* out, long long n, int transform,
                                                unsigned long long* bad) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) {
    T want = transform ? in[i] * T(3) + T(1) : in[i];
    if (out[i] != want) atomicAdd(bad, 1ULL);
  }
}

// (kind, dtype, threads, items, op) -> the runtime kernel (cub / cubidx)
using Key = std::tuple<std::string, std::string, int, int, std::string>;
static std::map<Key, const void*> builtins() {
  std::map<Key, const void*> m;
#define MOVE(T, DT, TH, IT)                                                                          \
  m[{"cub", DT, TH, IT, "copy"}] = (const void*)tile_move<T, TH, IT, direct, COPY>;                   \
  m[{"cub", DT, TH, IT, "transform"}] = (const void*)tile_move<T, TH, IT, direct, TRANSFORM>;         \
  m[{"cubidx", DT, TH, IT, "copy"}] = (const void*)tile_move_coopidx<T, TH, IT, COPY>;                \
  m[{"cubidx", DT, TH, IT, "transform"}] = (const void*)tile_move_coopidx<T, TH, IT, TRANSFORM>;      \
  m[{"cubrank", DT, TH, IT, "copy"}] = (const void*)tile_move_coopidx<T, TH, IT, COPY, RANK_3D>;      \
  m[{"cubclamp", DT, TH, IT, "copy"}] = (const void*)tile_move_coopidx<T, TH, IT, COPY, SLICE_CLAMP>;      \
  m[{"cubrank1d", DT, TH, IT, "copy"}] = (const void*)tile_move_coopidx<T, TH, IT, COPY, RANK_1D_FIRST>;
  MOVE(double, "float64", 128, 4)
  MOVE(double, "float64", 128, 16)
  MOVE(double, "float64", 256, 8)
  MOVE(int, "int32", 128, 4)
#undef MOVE
  m[{"cub", "float64", 128, 4, "striped"}] = (const void*)tile_move<double, 128, 4, striped, COPY>;
#define EXSUM(TH, IT)                                                                                \
  m[{"cub", "int32", TH, IT, "exsum"}] = (const void*)tile_exclusive_sum<int, TH, IT>;                 \
  m[{"cub", "float32", TH, IT, "exsum"}] = (const void*)tile_exclusive_sum<float, TH, IT>;
  EXSUM(128, 4)
  EXSUM(256, 4)
  EXSUM(256, 8)
  EXSUM(512, 8)
#undef EXSUM
  return m;
}

struct Case {
  std::string label, kind, dtype, op;
  int threads, items;
  const void* f;  // a kernel, or a cudaKernel_t of a loaded cubin
};

static size_t size_of(const std::string& d) { return d == "float64" ? 8 : 4; }

static double time_case(const Case& c, unsigned long long in, unsigned long long out, long long n) {
  const unsigned long long isz = size_of(c.dtype), un = n, z = 0, one = 1;
  std::vector<unsigned long long> words;
  long long nn = n;
  std::vector<void*> args;
  if (c.kind == "cub") {
    words = {in, out};
  } else if (c.kind.rfind("cub", 0) == 0) {  // cubidx, cubrank, cubclamp
    words = {in, (unsigned long long)nn, out, (unsigned long long)nn};
  } else if (c.kind == "nc") {  // meminfo, parent, nitems, itemsize, data, shape[0], strides[0] (bytes)
    words = {z, z, un, isz, in, un, isz, z, z, un, isz, out, un, isz};
  } else {  // mlir memref: allocated, aligned, offset, size, stride (elements)
    words = {in, in, z, un, one, out, out, z, un, one};
  }
  for (auto& w : words) args.push_back(&w);
  const unsigned tiles = static_cast<unsigned>(n / (c.threads * c.items));
  auto launch = [&] { CHECK(cudaLaunchKernel(c.f, dim3(tiles), dim3(c.threads), args.data(), 0, 0)); };
  return time_it(launch);
}

int main(int argc, char** argv) {
  if (argc < 2) { std::fprintf(stderr, "usage: ab manifest [log2n] [rounds]\n"); return 2; }
  const int log2n = argc > 2 ? std::atoi(argv[2]) : 28;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  const long long out_offset = argc > 4 ? std::atoll(argv[4]) : 0;
  const long long n = 1LL << log2n;
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("{\"impl\": \"info\", \"device\": \"%s\", \"log2n\": %d, \"rounds\": %d, \"out_offset\": %lld}\n", prop.name, log2n, rounds, out_offset);
  auto table = builtins();
  std::vector<Case> cases;
  std::map<std::string, cudaLibrary_t> modules;
  std::ifstream manifest(argv[1]);
  std::string line;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    Case c;
    std::string cubin, entry;
    ss >> c.label >> c.kind >> c.dtype >> c.threads >> c.items >> c.op >> cubin >> entry;
    if (c.kind.rfind("cub", 0) == 0) {
      auto it = table.find(Key{c.kind, c.dtype, c.threads, c.items, c.op});
      if (it == table.end()) { std::fprintf(stderr, "no built-in kernel for: %s\n", line.c_str()); return 1; }
      c.f = it->second;
    } else {
      if (cubin[0] != '/') {  // relative to the manifest's directory
        std::string m = argv[1];
        size_t slash = m.rfind('/');
        cubin = (slash == std::string::npos ? std::string(".") : m.substr(0, slash)) + "/" + cubin;
      }
      if (!modules.count(cubin))
        CHECK(cudaLibraryLoadFromFile(&modules[cubin], cubin.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      cudaKernel_t k;
      CHECK(cudaLibraryGetKernel(&k, modules[cubin], entry.c_str()));
      c.f = reinterpret_cast<const void*>(k);
    }
    cases.push_back(c);
  }
  void *in = nullptr, *out = nullptr;
  unsigned long long* bad = nullptr;
  CHECK(cudaMalloc(&in, n * 8));
  CHECK(cudaMalloc(&out, n * 8 + out_offset));
  out = static_cast<char*>(out) + out_offset;
  CHECK(cudaMalloc(&bad, sizeof(unsigned long long)));
  // One group per (dtype, op family): the input filled once per group.
  std::string filled;
  std::map<std::string, std::vector<double>> secs;
  for (int r = 0; r < rounds; ++r) {
    for (size_t i0 = 0; i0 < cases.size(); ++i0) {
      const Case& c = cases[i0];
      const bool scan = c.op == "exsum";
      std::string fill = c.dtype + (scan ? "/scan" : "/move");
      if (fill != filled) {
        if (c.dtype == "float64") fill_move<double><<<4096, 256>>>((double*)in, n);
        else if (c.dtype == "int32") { if (scan) fill_scan<int><<<4096, 256>>>((int*)in, n); else fill_move<int><<<4096, 256>>>((int*)in, n); }
        else fill_scan<float><<<4096, 256>>>((float*)in, n);
        CHECK(cudaDeviceSynchronize());
        filled = fill;
      }
      CHECK(cudaMemset(out, 0xFF, n * size_of(c.dtype)));
      double s = time_case(c, (unsigned long long)in, (unsigned long long)out, n);
      char check[64] = "ok";
      if (!scan) {
        CHECK(cudaMemset(bad, 0, sizeof(unsigned long long)));
        int tr = c.op == "transform";
        if (c.dtype == "float64") count_bad<double><<<4096, 256>>>((double*)in, (double*)out, n, tr, bad);
        else count_bad<int><<<4096, 256>>>((int*)in, (int*)out, n, tr, bad);
        unsigned long long nbad = 0;
        CHECK(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
        if (nbad) std::snprintf(check, sizeof check, "FAILED: %llu wrong", nbad);
      } else {  // first tile checked on the host
        const int tile = c.threads * c.items;
        std::vector<char> a(tile * 4), b(tile * 4);
        CHECK(cudaMemcpy(a.data(), in, tile * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(b.data(), out, tile * 4, cudaMemcpyDeviceToHost));
        double acc = 0;
        for (int i = 0; i < tile; ++i) {
          double x = c.dtype == "int32" ? ((int*)a.data())[i] : ((float*)a.data())[i];
          double y = c.dtype == "int32" ? ((int*)b.data())[i] : ((float*)b.data())[i];
          if (y != acc) { std::snprintf(check, sizeof check, "FAILED at %d", i); break; }
          acc += x;
        }
      }
      const double bytes = 2.0 * n * size_of(c.dtype);
      secs[c.label].push_back(s);
      std::printf("{\"round\": %d, \"label\": \"%s\", \"kind\": \"%s\", \"dtype\": \"%s\", \"threads\": %d, "
                  "\"items\": %d, \"op\": \"%s\", \"seconds\": %.9g, \"gbps\": %.6g, \"check\": \"%s\"}\n",
                  r, c.label.c_str(), c.kind.c_str(), c.dtype.c_str(), c.threads, c.items, c.op.c_str(), s,
                  bytes / s * 1e-9, check);
      std::fflush(stdout);
    }
  }
  std::printf("# median over rounds, GB/s\n");
  for (auto& c : cases) {
    auto v = secs[c.label];
    std::sort(v.begin(), v.end());
    if (v.empty() || secs[c.label].size() == 0) continue;
    std::printf("%-48s %8.1f\n", c.label.c_str(), 2.0 * n * size_of(c.dtype) / v[v.size() / 2] * 1e-9);
    secs[c.label].clear();
  }
  return 0;
}
