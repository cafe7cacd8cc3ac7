// Moves frames that live in host memory through a GpuPlaneFilter: upload,
// filter, download on one stream, one synchronisation per frame. Owns the
// device planes and page-locked staging, sized by reserve() and grown only
// when a frame is larger than any before.
#pragma once

#include "cuda_memory.h"
#include "gpu_plane_filter.h"
#include "plane.h"
#include "plane_levels.h"

#include <memory>
#include <vector>

namespace cudafilters {

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

  // Allocates device and staging memory for frames up to width x height
  // samples of bytes_per_sample bytes.
  void reserve(int width, int height, int bytes_per_sample = 1);

  // src and dst are host planes of equal size. When both are page-locked and
  // mapped for the device, with 16-byte aligned rows, and the filter streams
  // host memory, its kernels read and write them directly. Otherwise
  // page-locked memory (cudaHostAlloc/cudaHostRegister, any context) is
  // copied directly, and pageable memory goes through the runner's
  // page-locked staging, in chunks, so host copies overlap the DMA of
  // neighbouring chunks.
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
  // before the one synchronisation. With `levels`, as process_host.
  void process_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                      const CarriedPlanes &carried = {}, FrameLevels *levels = nullptr);

 private:
  // src and dst: device addresses of mapped page-locked host planes.
  void stream_frame(GpuPlaneFilter &filter, ConstPlane src, Plane dst);
  void upload(ConstPlane src, bool page_locked);
  // Queues the level counts of src and dst (device planes).
  void count_levels(ConstPlane src, ConstPlane dst);
  void download(Plane dst, bool page_locked);

  Stream stream_;
  DevicePlane dev_in_;
  DevicePlane dev_out_;
  PinnedBuffer stage_in_;
  PinnedBuffer stage_out_;
  // One per staged download chunk, so the host copies a chunk out while the
  // next one is still in flight.
  std::vector<Event> chunk_done_;
  // Created on the first frame that asks for levels.
  std::unique_ptr<LevelCounterGpu> levels_;
  HostPath host_path_;
  bool poison_outputs_ = false;
  bool last_streamed_ = false;
};

// True when the whole plane lies in page-locked host memory known to CUDA.
bool is_page_locked(ConstPlane plane);

}  // namespace cudafilters
