// CPU time of the CUDA calls an element makes per frame, alone and with
// 8 threads issuing at once (one context, one stream each, as 8 branches
// of a pipeline share GStreamer's context). Each "frame": the calls below,
// then a wait polled with cudaEventQuery, then a 1 ms sleep (the gap until
// the next frame). Build: nvcc -O2 -arch=sm_90 -o launch_cost launch_cost.cu
#include <cuda_runtime.h>
#include <cooperative_groups.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

__global__ void small_kernel(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * 0.5f + 1.0f;
}

__global__ void coop_kernel(float *p, int n) {
  namespace cg = cooperative_groups;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.0f;
  cg::this_grid().sync();
  if (i < n) p[i] *= 0.5f;
}

static double thread_cpu_us() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

enum Op { kFirstLaunch, kNextLaunch, kCoop, kMemcpy2D, kRecord, kWaitEvent, kStreamQuery, kPolledWait, kOps };
static const char *kNames[kOps] = {"first launch of a frame", "next launch (x4)", "cooperative launch",
                                   "cudaMemcpy2DAsync D2D", "cudaEventRecord", "cudaStreamWaitEvent",
                                   "cudaStreamQuery", "polled wait (whole)"};

struct Totals { double us[kOps] = {}; long n[kOps] = {}; };

static void run_thread(int frames, int sms, Totals *out, std::atomic<int> *go) {
  cudaStream_t s, other;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  const int w = 1920, h = 1080, n = w * h;
  float *buf; uint8_t *a, *b; size_t pa, pb;
  CHECK(cudaMalloc(&buf, n * sizeof(float)));
  CHECK(cudaMallocPitch(&a, &pa, w, h));
  CHECK(cudaMallocPitch(&b, &pb, w, h));
  cudaEvent_t done, link;
  CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&link, cudaEventDisableTiming));
  int coop_blocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&coop_blocks, coop_kernel, 256, 0));
  coop_blocks = std::min(coop_blocks * sms, (n + 255) / 256);
  while (!go->load()) {}
  Totals t;
  for (int f = 0; f < frames; ++f) {
    double t0 = thread_cpu_us();
    CHECK(cudaEventRecord(link, other));
    double t1 = thread_cpu_us();
    CHECK(cudaStreamWaitEvent(s, link, 0));
    double t2 = thread_cpu_us();
    small_kernel<<<(n + 255) / 256, 256, 0, s>>>(buf, n);
    double t3 = thread_cpu_us();
    for (int k = 0; k < 4; ++k) small_kernel<<<(n + 255) / 256, 256, 0, s>>>(buf, n);
    double t4 = thread_cpu_us();
    void *args[] = {&buf, (void *)&n};
    CHECK(cudaLaunchCooperativeKernel((void *)coop_kernel, coop_blocks, 256, args, 0, s));
    double t5 = thread_cpu_us();
    CHECK(cudaMemcpy2DAsync(b, pb, a, pa, w, h, cudaMemcpyDeviceToDevice, s));
    double t6 = thread_cpu_us();
    cudaError_t q = cudaStreamQuery(s);
    if (q != cudaErrorNotReady) CHECK(q);
    (void)cudaGetLastError();
    double t7 = thread_cpu_us();
    CHECK(cudaEventRecord(done, s));
    while (cudaEventQuery(done) == cudaErrorNotReady) std::this_thread::sleep_for(std::chrono::microseconds(50));
    (void)cudaGetLastError();
    double t8 = thread_cpu_us();
    if (f >= 10) {
      t.us[kRecord] += t1 - t0; t.n[kRecord]++;
      t.us[kWaitEvent] += t2 - t1; t.n[kWaitEvent]++;
      t.us[kFirstLaunch] += t3 - t2; t.n[kFirstLaunch]++;
      t.us[kNextLaunch] += (t4 - t3) / 4; t.n[kNextLaunch]++;
      t.us[kCoop] += t5 - t4; t.n[kCoop]++;
      t.us[kMemcpy2D] += t6 - t5; t.n[kMemcpy2D]++;
      t.us[kStreamQuery] += t7 - t6; t.n[kStreamQuery]++;
      t.us[kPolledWait] += t8 - t7; t.n[kPolledWait]++;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  *out = t;
}

int main(int argc, char **argv) {
  const bool blocking = argc > 1 && std::string(argv[1]) == "blocking";
  if (blocking) CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  CHECK(cudaFree(nullptr));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int threads : {1, 8}) {
    std::vector<Totals> totals(threads);
    std::vector<std::thread> pool;
    std::atomic<int> go{0};
    for (int i = 0; i < threads; ++i) pool.emplace_back(run_thread, 300, sms, &totals[i], &go);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    go = 1;
    for (auto &th : pool) th.join();
    std::printf("%s scheduling, %d thread(s), CPU us per call:\n", blocking ? "blocking" : "auto", threads);
    for (int o = 0; o < kOps; ++o) {
      double us = 0; long n = 0;
      for (auto &t : totals) { us += t.us[o]; n += t.n[o]; }
      std::printf("  %-26s %7.2f\n", kNames[o], us / n);
    }
  }
}
