#include "frame_store.h"

#include "input_checks.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace cudafilters {

namespace {

ConstPlane as_bytes(ConstPlane p, int samples_per_row) {
  return ConstPlane(p.data, p.stride, samples_per_row * p.samples.bytes, p.height);
}

}  // namespace

FrameBytes::FrameBytes(const FramePlanes &f) {
  planes[count++] = as_bytes(f.luma, f.luma.width);
  if (!f.has_chroma()) return;
  if (f.chroma_step == 2) {
    // U and V interleave in one plane, which starts at the first of them.
    ConstPlane uv = f.u.data < f.v.data ? f.u : f.v;
    planes[count++] = as_bytes(uv, 2 * f.u.width);
  } else if (f.chroma_step == 1) {
    planes[count++] = as_bytes(f.u, f.u.width);
    planes[count++] = as_bytes(f.v, f.v.width);
  } else {
    throw std::invalid_argument("chroma samples must be 1 or 2 apart");
  }
}

namespace {

// The planes of a frame as a filter reads or writes them: each valid, U and
// V alike, and 1 (planar) or 2 (interleaved, one sample apart) samples
// apart.
void check_frame(const FramePlanes &f, const char *what) {
  check_plane(f.luma, what);
  if (!f.has_chroma()) return;
  check_plane(f.u, what);
  check_plane(f.v, what);
  if (f.u.width != f.v.width || f.u.height != f.v.height || f.u.samples != f.v.samples)
    throw std::invalid_argument(std::string(what) + ": U and V planes differ");
  const ptrdiff_t apart = f.v.data - f.u.data;
  if (f.chroma_step == 2 ? (apart != f.u.samples.bytes && -apart != f.u.samples.bytes) ||
                               f.u.stride != f.v.stride || f.u.stride < 2 * f.u.row_bytes()
                         : f.chroma_step != 1)
    throw std::invalid_argument(std::string(what) +
                                ": chroma samples must be 1 or 2 apart (U and V interleaved)");
}

bool frames_overlap(const FramePlanes &a, const FramePlanes &b) {
  const ConstPlane pa[3] = {a.luma, a.u, a.v}, pb[3] = {b.luma, b.u, b.v};
  for (const ConstPlane &x : pa)
    for (const ConstPlane &y : pb)
      if (x.data != nullptr && y.data != nullptr && planes_overlap(x, y)) return true;
  return false;
}

}  // namespace

void check_window(const FramePlanes *window, int count, int center, const FramePlanesOut &dst,
                  int max_count, const char *who) {
  if (count < 1 || count > max_count || center < 0 || center >= count)
    throw std::invalid_argument(std::string(who) + ": a window of 1 to " +
                                std::to_string(max_count) + " frames holding the frame denoised");
  // The messages name `who` only when there is one to give: nothing is
  // allocated for a window that passes.
  try {
    check_frame(dst.as_const(), "output");
    for (int f = 0; f < count; ++f) {
      const FramePlanes &w = window[f];
      check_frame(w, "source");
      if (w.luma.width != dst.luma.width || w.luma.height != dst.luma.height ||
          w.luma.samples != dst.luma.samples || w.has_chroma() != dst.has_chroma() ||
          (dst.has_chroma() && (w.u.width != dst.u.width || w.u.height != dst.u.height ||
                                w.u.samples != dst.u.samples || w.chroma_step != dst.chroma_step)))
        throw std::invalid_argument("frames of the window differ in size or layout");
      if (frames_overlap(w, dst.as_const()))
        throw std::invalid_argument("the output overlaps a frame of the window");
    }
  } catch (const std::invalid_argument &e) {
    throw std::invalid_argument(std::string(who) + ": " + e.what());
  }
}

namespace {

template <typename Frame, typename P>
Frame relocated(const FramePlanes &like, const Plane (&bytes)[3]) {
  using Ptr = decltype(P::data);
  auto at = [](const Plane &b, const ConstPlane &geometry, size_t offset) {
    return P(Ptr(b.data + offset), b.stride, geometry.width, geometry.height, geometry.samples);
  };
  Frame f;
  f.luma = at(bytes[0], like.luma, 0);
  if (!like.has_chroma()) return f;
  f.chroma_step = like.chroma_step;
  if (like.chroma_step == 2) {
    const size_t v_after_u = like.v.data > like.u.data ? size_t(like.u.samples.bytes) : 0;
    const size_t u_after_v = like.u.data > like.v.data ? size_t(like.u.samples.bytes) : 0;
    f.u = at(bytes[1], like.u, u_after_v);
    f.v = at(bytes[1], like.v, v_after_u);
  } else {
    f.u = at(bytes[1], like.u, 0);
    f.v = at(bytes[2], like.v, 0);
  }
  return f;
}

}  // namespace

FramePlanes relocate(const FramePlanes &like, const Plane (&bytes)[3]) {
  return relocated<FramePlanes, ConstPlane>(like, bytes);
}

FramePlanesOut relocate_out(const FramePlanes &like, const Plane (&bytes)[3]) {
  return relocated<FramePlanesOut, Plane>(like, bytes);
}

void HostFrameStore::store(int slot, const FramePlanes &src) {
  if (slot >= int(slots_.size())) slots_.resize(slot + 1);
  Slot &s = slots_[slot];
  const FrameBytes bytes(src);
  Plane planes[3];
  for (int i = 0; i < bytes.count; ++i) {
    const ConstPlane &p = bytes.planes[i];
    const size_t row = size_t(p.width);
    if (s.bytes[i].size() < row * p.height) s.bytes[i].resize(row * p.height);
    for (int y = 0; y < p.height; ++y)
      std::memcpy(s.bytes[i].data() + y * row, p.data + y * p.stride, row);
    planes[i] = Plane(s.bytes[i].data(), row, p.width, p.height);
  }
  s.view = relocate(src, planes);
}

void DeviceFrameStore::prepare(int slot, const FramePlanes &like, Plane (&planes)[3], int *count) {
  if (slot >= int(slots_.size())) slots_.resize(slot + 1);
  Slot &s = slots_[slot];
  const FrameBytes bytes(like);
  for (int i = 0; i < bytes.count; ++i) {
    const ConstPlane &p = bytes.planes[i];
    s.planes[i].reserve(p.width, p.height);
    planes[i] = Plane(s.planes[i].data(), s.planes[i].pitch(), p.width, p.height);
  }
  *count = bytes.count;
  s.view = relocate(like, planes);
}

}  // namespace cudafilters
