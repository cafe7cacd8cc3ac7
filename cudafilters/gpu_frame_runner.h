// Moves frames that live in host memory through a GpuPlaneFilter: upload,
// filter, download on one stream, one synchronisation per frame. Owns the
// device planes and page-locked staging, sized by reserve() and grown only
// when a frame is larger than any before. Where the test suites ask for it
// (CUDAFILTERS_POISON_OUTPUT), every output it writes, host or device, is
// filled with a poison byte first, so that samples a filter fails to write
// show.
#pragma once

#include "cuda_memory.h"
#include "gpu_plane_filter.h"
#include "plane.h"
#include "plane_levels.h"

#include <memory>
#include <vector>

namespace cudafilters {

class HostTransfer;

class GpuFrameRunner {
 public:
  enum class HostPath {
    // Frames in page-locked host memory that the device can address go
    // straight to a filter that streams host memory (no copies); all other
    // frames are copied in and out.
    kAuto,
    // Always copy in and out (the comparison point for benchmarks and tests).
    kCopies,
  };

  // Creates the stream in the CUDA context current on the calling thread.
  explicit GpuFrameRunner(HostPath host_path = HostPath::kAuto);
  ~GpuFrameRunner();
  GpuFrameRunner(const GpuFrameRunner &) = delete;
  GpuFrameRunner &operator=(const GpuFrameRunner &) = delete;

  // Allocates device and staging memory for frames up to width x height
  // samples of bytes_per_sample bytes.
  void reserve(int width, int height, int bytes_per_sample = 1);

  // src and dst are host planes of equal size. When both are page-locked and
  // mapped for the device, with 16-byte aligned rows, and the filter streams
  // host memory, its kernels read and write them directly. Otherwise
  // page-locked memory (cudaHostAlloc/cudaHostRegister, any context) is
  // copied directly, and pageable memory goes through the runner's
  // page-locked staging band by band, the host copies spread over the
  // shared thread pool and overlapping the DMA of neighbouring bands.
  //
  // With `levels`, the histograms of src and dst are counted on the device
  // too and stored there; such a frame is copied in and out, never
  // streamed, so that both planes are in device memory to count.
  void process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                    FrameLevels *levels = nullptr);

  // Whether the last process_host streamed host memory (for tests and logs).
  bool last_frame_streamed() const { return last_streamed_; }

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
  // src and dst: device addresses of mapped page-locked host planes.
  void stream_frame(GpuPlaneFilter &filter, ConstPlane src, Plane dst);
  void upload(ConstPlane src, bool page_locked);
  // Queues the level counts of the planes the filter's statistics describe
  // (src and dst, device planes, unless it says otherwise).
  void count_levels(const GpuPlaneFilter &filter, ConstPlane src, ConstPlane dst);
  void download(Plane dst, bool page_locked);
  // The filter's device state is ordered by the stream its frames run on:
  // before a frame goes to another stream than the last one, the last one's
  // frames finish.
  void switch_to(cudaStream_t stream);
  // Waits on the host for the work queued on `stream` so far (see wait_for).
  void wait_for_stream(cudaStream_t stream);
  void poison_device(Plane dst, const CarriedPlanes &carried, cudaStream_t stream);

  Stream stream_;
  // The stream the last frame was queued on; null when none is pending.
  cudaStream_t last_stream_ = nullptr;
  DevicePlane dev_in_;
  DevicePlane dev_out_;
  std::unique_ptr<HostTransfer> transfer_;
  // Recorded on a stream to wait for it from the host.
  Event stream_done_{cudaEventDisableTiming};
  // Reused by order_after: a wait binds to the event's state when queued.
  Event link_{cudaEventDisableTiming};
  // Created on the first frame that asks for levels.
  std::unique_ptr<LevelCounterGpu> levels_;
  HostPath host_path_;
  bool poison_outputs_ = false;
  bool last_streamed_ = false;
};

// True when the whole plane lies in page-locked host memory known to CUDA.
bool is_page_locked(ConstPlane plane);

}  // namespace cudafilters
