// Views of a whole YUV (or gray) frame: luma and, where the format has them,
// the two chroma channels. Like Plane, they own nothing and say nothing of
// where the memory lives; each user documents whether it expects host or
// device pointers.
#pragma once

#include "plane.h"

namespace cudafilters {

// Sample x of row y of a channel lies at data + y * stride + x * step *
// samples.bytes: step is 1 for a plane of its own (I420's U) and 2 where U
// and V interleave in one plane (NV12, P010_10LE), with v.data then one
// sample after u.data. width and height count the channel's own samples.
struct FramePlanes {
  ConstPlane luma;
  ConstPlane u, v;  // data null for gray frames
  int chroma_step = 1;

  bool has_chroma() const { return u.data != nullptr && v.data != nullptr; }
};

struct FramePlanesOut {
  Plane luma;
  Plane u, v;
  int chroma_step = 1;

  bool has_chroma() const { return u.data != nullptr && v.data != nullptr; }
  // The same planes, read-only.
  FramePlanes as_const() const {
    FramePlanes f;
    f.luma = luma;
    f.u = u;
    f.v = v;
    f.chroma_step = chroma_step;
    return f;
  }
};

// Throws std::invalid_argument, naming `who`, unless `window` holds 1 to
// `max_count` frames, `center` among them, all laid out as `dst`: the same
// luma size and samples, and the same chroma planes, if any. The check of
// the window filters (NlmCpu, NlmGpu), for filters of windows of one's own.
void check_window(const FramePlanes *window, int count, int center, const FramePlanesOut &dst,
                  int max_count, const char *who);

// The same planes, writable (see writable(ConstPlane)).
inline FramePlanesOut writable(const FramePlanes &f) {
  FramePlanesOut out;
  out.luma = writable(f.luma);
  out.u = writable(f.u);
  out.v = writable(f.v);
  out.chroma_step = f.chroma_step;
  return out;
}

}  // namespace cudafilters
