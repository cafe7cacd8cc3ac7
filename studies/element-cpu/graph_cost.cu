// CPU time per frame of one frame's CUDA work issued three ways, for 1 and
// 8 threads in one context: the calls one by one (as the elements do
// today), a graph captured every frame and applied to one executable
// graph with cudaGraphExecUpdate, and one executable graph whose kernel
// nodes get the frame's pointers (cudaGraphExecKernelNodeSetParams); and
// the launch of an unchanged graph, the floor of any graph. The frame's
// work has the shape of cudanlm's: a fork to a second stream by an event,
// three kernels on the first stream, one on the second, the join, and
// with "copies" the temporal window's two device-to-device copies.
// Build: nvcc -O2 -arch=sm_90 -o graph_cost graph_cost.cu
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

__global__ void k_plane(unsigned char *p, int pitch, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) p[y * pitch + x] ^= 1;
}

static double thread_cpu_us() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

enum Mode { kDirect, kCapture, kSetParams, kLaunchOnly, kModes };
static const char *kNames[kModes] = {"calls one by one", "captured, ExecUpdate, launch",
                                     "node params set, launch", "unchanged graph, launch"};

struct Frame {
  unsigned char *y, *uv, *wy, *wuv;
};

struct Ctx {
  cudaStream_t s, s2;
  cudaEvent_t fork, join, done;
  size_t pitch;
  int w = 1920, h = 1080;
  bool copies;
};

// The frame's work on s (and s2), as the element would issue it.
static void issue(Ctx &c, const Frame &f) {
  dim3 block(256), gy((c.w + 255) / 256, c.h), guv((c.w + 255) / 256, c.h / 2);
  CHECK(cudaEventRecord(c.fork, c.s));
  CHECK(cudaStreamWaitEvent(c.s2, c.fork, 0));
  if (c.copies) {
    CHECK(cudaMemcpy2DAsync(f.wy, c.pitch, f.y, c.pitch, c.w, c.h, cudaMemcpyDeviceToDevice, c.s));
    CHECK(cudaMemcpy2DAsync(f.wuv, c.pitch, f.uv, c.pitch, c.w, c.h / 2, cudaMemcpyDeviceToDevice, c.s));
  }
  k_plane<<<dim3(1, 1), block, 0, c.s>>>(f.y, (int)c.pitch, c.w, 1);       // noise table
  k_plane<<<dim3(1, 1), block, 0, c.s>>>(f.y, (int)c.pitch, c.w, 1);       // strength
  k_plane<<<gy, block, 0, c.s>>>(f.y, (int)c.pitch, c.w, c.h);             // luma
  k_plane<<<guv, block, 0, c.s2>>>(f.uv, (int)c.pitch, c.w, c.h / 2);      // chroma
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(c.join, c.s2));
  CHECK(cudaStreamWaitEvent(c.s, c.join, 0));
}

static cudaGraph_t capture(Ctx &c, const Frame &f) {
  cudaGraph_t g;
  CHECK(cudaStreamBeginCapture(c.s, cudaStreamCaptureModeThreadLocal));
  issue(c, f);
  CHECK(cudaStreamEndCapture(c.s, &g));
  return g;
}

struct Result { double us[kModes] = {}; long n[kModes] = {}; };

static void run_thread(bool copies, int frames, Result *out, std::atomic<int> *go) {
  Ctx c;
  c.copies = copies;
  CHECK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&c.s2, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&c.fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&c.join, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming));
  const int kBuffers = 4;  // frames rotate through a decoder's pool
  std::vector<Frame> fr(kBuffers);
  for (auto &f : fr) {
    CHECK(cudaMallocPitch(&f.y, &c.pitch, c.w, c.h));
    CHECK(cudaMallocPitch(&f.uv, &c.pitch, c.w, c.h));  // full height: any kernel node may get it
    CHECK(cudaMallocPitch(&f.wy, &c.pitch, c.w, c.h));
    CHECK(cudaMallocPitch(&f.wuv, &c.pitch, c.w, c.h / 2));
  }
  cudaGraphExec_t exec = nullptr, fixed = nullptr;
  {
    cudaGraph_t g = capture(c, fr[0]);
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphInstantiate(&fixed, g, 0));
    CHECK(cudaGraphDestroy(g));
  }
  // The kernel nodes of `exec`, in capture order, for kSetParams.
  std::vector<cudaGraphNode_t> kernels;
  std::vector<cudaKernelNodeParams> params;
  {
    cudaGraph_t g = capture(c, fr[0]);
    size_t n = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &n));
    std::vector<cudaGraphNode_t> nodes(n);
    CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (auto node : nodes) {
      cudaGraphNodeType t;
      CHECK(cudaGraphNodeGetType(node, &t));
      if (t == cudaGraphNodeTypeKernel) {
        cudaKernelNodeParams p;
        CHECK(cudaGraphKernelNodeGetParams(node, &p));
        kernels.push_back(node);
        params.push_back(p);
      }
    }
    // keep g alive: exec node handles refer to its nodes
  }
  while (!go->load()) {}
  Result r;
  for (int i = 0; i < frames * kModes; ++i) {
    const int mode = i % kModes;
    const Frame &f = fr[(i / kModes) % kBuffers];
    double t0 = thread_cpu_us();
    switch (mode) {
      case kDirect:
        issue(c, f);
        break;
      case kCapture: {
        cudaGraph_t g = capture(c, f);
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(exec, g, &info) != cudaSuccess) {
          std::printf("update failed %d\n", (int)info.result);
          std::exit(1);
        }
        CHECK(cudaGraphDestroy(g));
        CHECK(cudaGraphLaunch(exec, c.s));
        break;
      }
      case kSetParams: {
        for (size_t k = 0; k < kernels.size(); ++k) {
          unsigned char *p = (k == kernels.size() - 1) ? f.uv : f.y;
          cudaKernelNodeParams q = params[k];
          int pitch = (int)c.pitch, w = c.w, h = k == 2 ? c.h : (k == 3 ? c.h / 2 : 1);
          void *args[] = {&p, &pitch, &w, &h};
          q.kernelParams = args;
          q.extra = nullptr;
          CHECK(cudaGraphExecKernelNodeSetParams(exec, kernels[k], &q));
        }
        if (c.copies) {
          // the two copies' pointers would be set the same way
          // (cudaGraphExecMemcpyNodeSetParams); counted as kernel nodes' cost
        }
        CHECK(cudaGraphLaunch(exec, c.s));
        break;
      }
      case kLaunchOnly:
        CHECK(cudaGraphLaunch(fixed, c.s));
        break;
    }
    CHECK(cudaEventRecord(c.done, c.s));
    double t1 = thread_cpu_us();
    CHECK(cudaEventSynchronize(c.done));
    if (i >= 10 * kModes) { r.us[mode] += t1 - t0; r.n[mode]++; }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  *out = r;
}

int main(int argc, char **argv) {
  const bool blocking = argc > 1 && std::string(argv[1]) == "blocking";
  if (blocking) CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  CHECK(cudaFree(nullptr));
  for (bool copies : {false, true}) {
    for (int threads : {1, 8}) {
      std::vector<Result> res(threads);
      std::vector<std::thread> pool;
      std::atomic<int> go{0};
      for (int i = 0; i < threads; ++i) pool.emplace_back(run_thread, copies, 200, &res[i], &go);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      go = 1;
      for (auto &t : pool) t.join();
      std::printf("%s, %d thread(s), %s: CPU us per frame, issue + event record\n",
                  blocking ? "blocking" : "auto", threads,
                  copies ? "fork, 4 kernels, 2 copies, join" : "fork, 4 kernels, join");
      for (int m = 0; m < kModes; ++m) {
        double us = 0; long n = 0;
        for (auto &x : res) { us += x.us[m]; n += x.n[m]; }
        std::printf("  %-30s %7.2f\n", kNames[m], us / n);
      }
    }
  }
}
