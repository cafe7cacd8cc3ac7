// CPU cost of the CUDA API calls one frame makes, with T threads on one
// context, each on its own stream: small copies (API cost alone) or frame-
// sized ones (copy engines busy). Host memory registered, as the plugin's.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>
#include <atomic>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1);} } while (0)
using clk = std::chrono::steady_clock;
__global__ void touch(unsigned char *p, size_t n) { size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; if (i < n) p[i] += 1; }
double thread_cpu() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
struct Acc { double attr = 0, h2d = 0, launch = 0, d2h = 0, record = 0, wait = 0, cpu = 0; long frames = 0; };
int main(int argc, char **argv) {
  const size_t W = 1920, H = 1080;
  CK(cudaFree(0));
  std::vector<unsigned char *> host(4);
  for (auto &h : host) { h = (unsigned char *)aligned_alloc(4096, W * H * 3 / 2); std::memset(h, 1, W * H * 3 / 2); CK(cudaHostRegister(h, W * H * 3 / 2, 0)); }
  std::vector<unsigned char *> outs(16);
  for (auto &h : outs) { h = (unsigned char *)aligned_alloc(4096, W * H * 3 / 2); std::memset(h, 1, W * H * 3 / 2); CK(cudaHostRegister(h, W * H * 3 / 2, 0)); }
  for (int big = 0; big <= 1; ++big)
  for (int T : {1, 2, 4, 8}) {
    std::vector<Acc> acc(T);
    std::atomic<bool> go{false};
    std::vector<std::thread> th;
    for (int t = 0; t < T; ++t) th.emplace_back([&, t] {
      cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      cudaEvent_t ev; CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
      unsigned char *d; CK(cudaMalloc(&d, W * H));
      const size_t h = big ? H : 16;
      while (!go) {}
      Acc &a = acc[t];
      const double c0 = thread_cpu();
      const auto end = clk::now() + std::chrono::milliseconds(700);
      for (long f = 0; clk::now() < end; ++f) {
        unsigned char *src = host[f % 4], *dst = outs[t];
        auto t0 = clk::now();
        cudaPointerAttributes pa;
        for (int k = 0; k < 4; ++k) CK(cudaPointerGetAttributes(&pa, src + (k & 1) * (W * H - 1)));
        auto t1 = clk::now();
        CK(cudaMemcpy2DAsync(d, W, src, W, W, h, cudaMemcpyHostToDevice, s));
        auto t2 = clk::now();
        touch<<<(W * h + 255) / 256, 256, 0, s>>>(d, W * h); CK(cudaGetLastError());
        auto t3 = clk::now();
        CK(cudaMemcpy2DAsync(dst, W, d, W, W, h, cudaMemcpyDeviceToHost, s));
        auto t4 = clk::now();
        CK(cudaEventRecord(ev, s));
        auto t5 = clk::now();
        while (cudaEventQuery(ev) == cudaErrorNotReady) {}
        (void)cudaGetLastError();
        auto t6 = clk::now();
        auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
        a.attr += us(t0, t1); a.h2d += us(t1, t2); a.launch += us(t2, t3); a.d2h += us(t3, t4); a.record += us(t4, t5); a.wait += us(t5, t6);
        ++a.frames;
      }
      a.cpu = (thread_cpu() - c0) * 1e6;
      CK(cudaFree(d)); CK(cudaEventDestroy(ev)); CK(cudaStreamDestroy(s));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto w0 = clk::now(); go = true;
    for (auto &x : th) x.join();
    double wall = std::chrono::duration<double>(clk::now() - w0).count();
    Acc s; for (auto &a : acc) { s.attr += a.attr; s.h2d += a.h2d; s.launch += a.launch; s.d2h += a.d2h; s.record += a.record; s.wait += a.wait; s.cpu += a.cpu; s.frames += a.frames; }
    double n = s.frames;
    std::printf("%s T=%d: %.0f frames/s; per frame us: 4x attr %.2f, H2D %.2f, launch %.2f, D2H %.2f, record %.2f, wait(spin) %.1f; thread CPU %.1f\n",
      big ? "1080p luma" : "16 rows   ", T, n / wall, s.attr / n, s.h2d / n, s.launch / n, s.d2h / n, s.record / n, s.wait / n, s.cpu / n);
  }
  return 0;
}
