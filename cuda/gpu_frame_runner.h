// Moves frames that live in host memory through a GpuPlaneFilter: upload,
// filter, download on one stream, one synchronisation per frame. Owns the
// device planes and page-locked staging, sized by reserve() and grown only
// when a frame is larger than any before.
#pragma once

#include "cuda_memory.h"
#include "gpu_plane_filter.h"
#include "plane.h"

#include <vector>

namespace cudafilters {

class GpuFrameRunner {
 public:
  // Creates the stream in the CUDA context current on the calling thread.
  GpuFrameRunner();

  // Allocates device and staging memory for frames up to width x height.
  void reserve(int width, int height);

  // src and dst are host planes of equal size. Host memory that is already
  // page-locked (cudaHostAlloc/cudaHostRegister, any context) is copied
  // directly; pageable memory goes through the runner's page-locked staging,
  // in chunks, so host copies overlap the DMA of neighbouring chunks.
  void process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst);

  // src and dst are device planes of equal size (e.g. GstCudaMemory); each
  // carried plane (device memory too) is copied unchanged, on the same stream,
  // before the one synchronisation.
  void process_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                      const CarriedPlanes &carried = {});

 private:
  void upload(ConstPlane src);
  void download(Plane dst);

  Stream stream_;
  DevicePlane dev_in_;
  DevicePlane dev_out_;
  PinnedBuffer stage_in_;
  PinnedBuffer stage_out_;
  // One per staged download chunk, so the host copies a chunk out while the
  // next one is still in flight.
  std::vector<Event> chunk_done_;
  bool poison_outputs_ = false;
};

// True when the whole plane lies in page-locked host memory known to CUDA.
bool is_page_locked(ConstPlane plane);

}  // namespace cudafilters
