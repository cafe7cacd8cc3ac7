// Moves frames that live in host memory through a GpuPlaneFilter: upload,
// filter, download on one stream, one synchronisation per frame. Owns the
// device planes and page-locked staging, sized by reserve() and grown only
// when a frame is larger than any before.
#pragma once

#include "gpu_plane_filter.h"
#include "plane.h"
#include "plane_levels.h"
#include "runner_options.h"

#include <cuda_runtime.h>

#include <memory>

namespace cudafilters {

// How process_host may move a frame in host memory besides copying it in
// and out: the caller's choice, since only it knows what else moves host
// memory to and from the GPU at the same time. The defaults suit a frame
// alone on the GPU.
struct HostRoute {
  // The filter's kernels read and write the frame where it lies, where
  // both planes are page-locked, mapped for the device, with 16-byte
  // aligned rows, and the filter streams host memory. Alone the faster
  // (histogram equalization of a 1080p frame on an H200: 94 against 102
  // us); beside other frames in host memory, copies carry more (eight at
  // once: 17,900 against 12,200 frames/s).
  bool stream = true;
  // Carried planes page-locked on both sides go by the copy engines;
  // otherwise they are copied on the calling thread while the GPU works
  // (eight NV12 streams at once: 13,900 frames/s by DMA, 21,500 by host
  // copies).
  bool carried_by_dma = true;
};

class GpuFrameRunner {
 public:
  // Creates the stream in the CUDA context current on the calling thread.
  explicit GpuFrameRunner(const RunnerOptions &options = {});
  ~GpuFrameRunner();
  GpuFrameRunner(const GpuFrameRunner &) = delete;
  GpuFrameRunner &operator=(const GpuFrameRunner &) = delete;

  // Allocates device and staging memory for frames up to width x height
  // samples of bytes_per_sample bytes.
  void reserve(int width, int height, int bytes_per_sample = 1);

  // src and dst are host planes of equal size. Where `route` allows it,
  // both are page-locked and mapped for the device, with 16-byte aligned
  // rows, and the filter streams host memory, its kernels read and write
  // them directly. Otherwise page-locked memory (cudaHostAlloc,
  // cudaHostRegister, any context) is copied directly, and pageable memory
  // through the runner's page-locked staging.
  //
  // With `levels`, the histograms of src and dst are counted on the device
  // too and stored there; such a frame is copied in and out, never
  // streamed, so that both planes are in device memory to count.
  //
  // dst may be src itself (or overlap it): the frame is then filtered in
  // place, copied in and out, never streamed, and dst is not poisoned.
  void process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                    FrameLevels *levels = nullptr, HostRoute route = {});
  // The same with carried planes (host memory too, each src and dst of
  // equal size, dst the same plane as src or apart from it), copied
  // unchanged while the filter runs: by the copy engines where `route`
  // allows it and both sides are page-locked, on the calling thread
  // otherwise.
  void process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                    const CarriedPlanes &carried, FrameLevels *levels = nullptr,
                    HostRoute route = {});

  // src and dst are device planes of equal size (e.g. GstCudaMemory); each
  // carried plane (device memory too) is copied unchanged, on the same stream,
  // before the one synchronisation. With `levels`, as process_host. With
  // `dst_users`, a stream of the current context on which work may still
  // read dst's earlier contents (its consumers'), the writes wait for that
  // work on the GPU.
  void process_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                      const CarriedPlanes &carried = {}, FrameLevels *levels = nullptr,
                      cudaStream_t dst_users = nullptr);

  // As process_device, without levels and without the wait: the frame is
  // queued on `stream`, a stream of the current context that the caller
  // keeps alive until synchronize() (the runner's own stream when null), and
  // is done when the work queued there so far is. For frames whose producer
  // and consumer order their own work on that stream.
  void enqueue_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                      const CarriedPlanes &carried, cudaStream_t stream);

  // Work queued on `then` from now on starts after the work queued on
  // `first` so far: an event recorded on one and waited for by the other,
  // with no host wait.
  void order_after(cudaStream_t first, cudaStream_t then);

  // Waits on the host for every frame queued so far.
  void synchronize();

  // Throws CudaError if work queued earlier has already failed (a kernel
  // fault, which also poisons the context), without waiting for the work
  // still running: a frame queued after a failed one is not passed on.
  void check_queued_work();

 private:
  friend struct GpuFrameRunnerAccess;  // the library's own access to the state
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when the whole plane lies in page-locked host memory known to CUDA.
bool is_page_locked(ConstPlane plane);

}  // namespace cudafilters
