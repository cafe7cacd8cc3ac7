// The interface between CpuWindowRunner and a filter of whole host frames
// that may read a window of frames around the one it filters (temporal
// denoising), the counterpart of GpuWindowFilter.
#pragma once

#include "frame_planes.h"

namespace cudafilters {

class CpuWindowFilter {
 public:
  virtual ~CpuWindowFilter() = default;

  // window[0, count): host frames of one size and layout, in time order;
  // window[center] is filtered into dst (host planes that overlap none of
  // the window's). Returns once dst is written.
  virtual void process_window(const FramePlanes *window, int count, int center,
                              const FramePlanesOut &dst) = 0;

  // The frame and output plane a frame's statistics describe, asked once
  // the frame is filtered (or queued): the window's center and dst's luma,
  // unless the filter filters frames derived from them (packed pixels),
  // whose planes it then gives instead, valid until its next frame.
  virtual void statistics_frame(FramePlanes & /*center*/, ConstPlane & /*dst*/) const {}
};

}  // namespace cudafilters
