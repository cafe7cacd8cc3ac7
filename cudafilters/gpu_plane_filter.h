// The interface between the frame plumbing (GpuFrameRunner) and an algorithm:
// a filter enqueues its kernels for one device plane on a stream the caller
// owns, and never synchronises; the caller waits once per frame.
#pragma once

#include "cuda_check.h"
#include "plane.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

namespace cudafilters {

// A plane of a multi-plane frame that passes through unchanged (the chroma of
// a YUV frame); both sides in device memory, width in bytes.
struct CarriedPlane {
  ConstPlane src;
  Plane dst;
};
using CarriedPlanes = std::vector<CarriedPlane>;

class GpuPlaneFilter {
 public:
  virtual ~GpuPlaneFilter() = default;

  // src and dst are device planes of equal size; they do not overlap.
  virtual void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) = 0;

  // The same, and copies each carried plane. The default queues one 2-D copy
  // per plane after the filter. A filter whose kernels are short (launch and
  // latency bound) folds the copies into them, where they cost bandwidth only.
  virtual void enqueue_carrying(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                                cudaStream_t stream) {
    enqueue(src, dst, stream);
    copy_planes(carried, 0, stream);
  }

  // Filters that carry state from frame to frame (temporal smoothing) start
  // afresh with the next frame: after a seek, a gap or new caps.
  virtual void reset_history() {}

  // The planes a frame's statistics describe, asked once the frame is
  // filtered (or queued): src and dst themselves, unless the filter filters
  // planes derived from them (the luma of packed pixels), which it then
  // gives instead, valid until its next frame.
  virtual void statistics_planes(ConstPlane & /*src*/, ConstPlane & /*dst*/) const {}

  // Whether the filter can run on page-locked host memory directly
  // (enqueue_streaming). Worth it for a filter that reads its source once and
  // writes each output byte once: its kernels then overlap the bus transfers
  // with their own work, where separate copies could only run before and
  // after them.
  virtual bool streams_host_memory() const { return false; }

  // src and dst are device addresses of page-locked host memory, of equal
  // size. stash is a device plane at least as large, in which the filter may
  // keep the source for a second read. Only called when streams_host_memory().
  virtual void enqueue_streaming(ConstPlane /*src*/, Plane /*dst*/, Plane /*stash*/,
                                 cudaStream_t /*stream*/) {
    throw std::logic_error("this filter does not stream host memory");
  }

 protected:
  // Queues a device-to-device copy of each carried plane from index `first` on.
  static void copy_planes(const CarriedPlanes &carried, size_t first, cudaStream_t stream) {
    for (size_t i = first; i < carried.size(); ++i) {
      const CarriedPlane &p = carried[i];
      CUDAFILTERS_CHECK(cudaMemcpy2DAsync(p.dst.data, p.dst.stride, p.src.data, p.src.stride,
                                          static_cast<size_t>(p.src.width), p.src.height,
                                          cudaMemcpyDeviceToDevice, stream));
    }
  }
};

// A filter whose kernels read each source pixel once and write each output
// pixel once, which therefore streams host memory: its kernels read a
// page-locked source over the bus, keep it in the stash for any second read,
// and write the page-locked output over the bus. Every entry point comes
// down to one enqueue_frame.
class StreamingPlaneFilter : public GpuPlaneFilter {
 public:
  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override {
    enqueue_frame(src, nullptr, dst, {}, stream);
  }
  void enqueue_carrying(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                        cudaStream_t stream) override {
    enqueue_frame(src, nullptr, dst, carried, stream);
  }
  bool streams_host_memory() const override { return true; }
  void enqueue_streaming(ConstPlane src, Plane dst, Plane stash, cudaStream_t stream) override {
    if (stash.width < src.width || stash.height < src.height)
      throw std::invalid_argument("stash smaller than the source plane");
    enqueue_frame(src, &stash, dst, {}, stream);
  }

 protected:
  // stash: null when src is device memory; otherwise src and dst are host
  // memory and stash a device plane at least src's size. The filter copies
  // every carried plane.
  virtual void enqueue_frame(ConstPlane src, const Plane *stash, Plane dst,
                             const CarriedPlanes &carried, cudaStream_t stream) = 0;
};

}  // namespace cudafilters
