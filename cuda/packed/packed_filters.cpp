#include <cudafilters/packed_filters.h>

#include "frame_window.h"

#include "packed_convert.h"

#include <stdexcept>

namespace cudafilters {

namespace {

// Storage for a frame's planes (packed_convert.h) of `height` rows: the
// sizes of luma, then of the two chroma planes.
struct PlaneSizes {
  int luma_width, chroma_width, height;
};

PlaneSizes sizes_of(const PackedPixels &px, int height) {
  return PlaneSizes{px.width, packed_chroma_width(px), height};
}

FramePlanesOut host_planes(std::vector<uint8_t> *storage, const PlaneSizes &s, bool chroma) {
  FramePlanesOut f;
  storage[0].resize(static_cast<size_t>(s.luma_width) * s.height);
  f.luma = Plane(storage[0].data(), s.luma_width, s.luma_width, s.height);
  if (chroma) {
    for (int c = 1; c < 3; ++c)
      storage[c].resize(static_cast<size_t>(s.chroma_width) * s.height);
    f.u = Plane(storage[1].data(), s.chroma_width, s.chroma_width, s.height);
    f.v = Plane(storage[2].data(), s.chroma_width, s.chroma_width, s.height);
  }
  return f;
}

FramePlanesOut device_planes(DevicePlane *storage, const PlaneSizes &s, bool chroma) {
  FramePlanesOut f;
  storage[0].reserve(s.luma_width, s.height);
  f.luma = Plane(storage[0].data(), storage[0].pitch(), s.luma_width, s.height);
  if (chroma) {
    for (int c = 1; c < 3; ++c) storage[c].reserve(s.chroma_width, s.height);
    f.u = Plane(storage[1].data(), storage[1].pitch(), s.chroma_width, s.height);
    f.v = Plane(storage[2].data(), storage[2].pitch(), s.chroma_width, s.height);
  }
  return f;
}

void check_pair(ConstPlane src, ConstPlane dst, const PackedPixels &px) {
  check_packed(src, px, "packed frame");
  check_packed(dst, px, "packed output");
  if (src.height != dst.height) throw std::invalid_argument("packed frames differ in height");
}

// A window of packed frames as frames of bytes with no chroma.
void check_window(const FramePlanes *window, int count, int center, const FramePlanesOut &dst,
                  const PackedPixels &px) {
  if (count < 1 || center < 0 || center >= count)
    throw std::invalid_argument("invalid window");
  for (int i = 0; i < count; ++i) {
    if (window[i].has_chroma()) throw std::invalid_argument("packed frames have one plane");
    check_pair(window[i].luma, dst.luma, px);
  }
}

}  // namespace

void CpuPackedPlaneFilter::process(ConstPlane src, Plane dst) {
  check_pair(src, dst, pixels_);
  const PlaneSizes s = sizes_of(pixels_, src.height);
  std::vector<uint8_t> *in_storage = &luma_in_, *out_storage = &luma_out_;
  const FramePlanesOut in = host_planes(in_storage, s, false);
  const FramePlanesOut out = host_planes(out_storage, s, false);
  unpack_cpu(src, pixels_, in);
  luma_filter_.process(in.luma, out.luma);
  repack_cpu(src, pixels_, out.as_const(), dst);
}

void CpuPackedPlaneFilter::statistics_planes(ConstPlane &src, ConstPlane &dst) const {
  src = ConstPlane(luma_in_.data(), pixels_.width, pixels_.width, src.height);
  dst = ConstPlane(luma_out_.data(), pixels_.width, pixels_.width, dst.height);
}

void GpuPackedPlaneFilter::enqueue(ConstPlane src, Plane dst, cudaStream_t stream) {
  check_pair(src, dst, pixels_);
  const PlaneSizes s = sizes_of(pixels_, src.height);
  const FramePlanesOut in = device_planes(&luma_in_, s, false);
  const FramePlanesOut out = device_planes(&luma_out_, s, false);
  height_ = src.height;
  enqueue_unpack(src, pixels_, in, stream);
  luma_filter_.enqueue(in.luma, out.luma, stream);
  enqueue_repack(src, pixels_, out.as_const(), dst, stream);
}

void GpuPackedPlaneFilter::statistics_planes(ConstPlane &src, ConstPlane &dst) const {
  src = ConstPlane(luma_in_.data(), luma_in_.pitch(), pixels_.width, height_);
  dst = ConstPlane(luma_out_.data(), luma_out_.pitch(), pixels_.width, height_);
}

void CpuPackedWindowFilter::process_window(const FramePlanes *window, int count, int center,
                                           const FramePlanesOut &dst) {
  check_window(window, count, center, dst, pixels_);
  const PlaneSizes s = sizes_of(pixels_, dst.luma.height);
  storage_.resize(3 * static_cast<size_t>(count + 1));
  FramePlanes planes[2 * FrameWindow::kMaxRadius + 1];
  if (count > static_cast<int>(sizeof planes / sizeof planes[0]))
    throw std::invalid_argument("window too long");
  for (int i = 0; i < count; ++i) {
    const FramePlanesOut p = host_planes(&storage_[3 * i], s, true);
    unpack_cpu(window[i].luma, pixels_, p);
    planes[i] = p.as_const();
  }
  out_ = host_planes(&storage_[3 * count], s, true);
  center_ = planes[center];
  frame_filter_.process_window(planes, count, center, out_);
  repack_cpu(window[center].luma, pixels_, out_.as_const(), dst.luma);
}

void CpuPackedWindowFilter::statistics_frame(FramePlanes &center, ConstPlane &dst) const {
  center = center_;
  dst = out_.luma;
}

void GpuPackedWindowFilter::enqueue_window(const FramePlanes *window, int count, int center,
                                           const FramePlanesOut &dst, cudaStream_t stream) {
  check_window(window, count, center, dst, pixels_);
  const PlaneSizes s = sizes_of(pixels_, dst.luma.height);
  if (storage_.size() < 3 * static_cast<size_t>(count + 1)) storage_.resize(3 * (count + 1));
  FramePlanes planes[2 * FrameWindow::kMaxRadius + 1];
  if (count > static_cast<int>(sizeof planes / sizeof planes[0]))
    throw std::invalid_argument("window too long");
  for (int i = 0; i < count; ++i) {
    const FramePlanesOut p = device_planes(&storage_[3 * i], s, true);
    enqueue_unpack(window[i].luma, pixels_, p, stream);
    planes[i] = p.as_const();
  }
  out_ = device_planes(&storage_[3 * count], s, true);
  center_ = planes[center];
  frame_filter_.enqueue_window(planes, count, center, out_, stream);
  enqueue_repack(window[center].luma, pixels_, out_.as_const(), dst.luma, stream);
}

void GpuPackedWindowFilter::statistics_frame(FramePlanes &center, ConstPlane &dst) const {
  center = center_;
  dst = out_.luma;
}

}  // namespace cudafilters
