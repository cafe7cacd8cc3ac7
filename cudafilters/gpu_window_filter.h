// The interface between GpuWindowRunner and a filter of whole frames that
// may read a window of frames around the one it filters (temporal
// denoising): the filter enqueues its kernels on a stream the caller owns
// and never synchronises.
#pragma once

#include "frame_planes.h"

#include <cuda_runtime.h>

namespace cudafilters {

class GpuWindowFilter {
 public:
  virtual ~GpuWindowFilter() = default;

  // window[0, count): device frames of one size and layout, in time order;
  // window[center] is filtered into dst (device planes that overlap none of
  // the window's).
  virtual void enqueue_window(const FramePlanes *window, int count, int center,
                              const FramePlanesOut &dst, cudaStream_t stream) = 0;

  // The frame and output plane a frame's statistics describe, asked once
  // the frame is filtered (or queued): the window's center and dst's luma,
  // unless the filter filters frames derived from them (packed pixels),
  // whose planes it then gives instead, valid until its next frame.
  virtual void statistics_frame(FramePlanes & /*center*/, ConstPlane & /*dst*/) const {}
};

}  // namespace cudafilters
