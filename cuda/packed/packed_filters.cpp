#include <cudafilters/packed_filters.h>

#include <cudafilters/cuda_memory.h>

#include "frame_window.h"
#include "packed_convert.h"

#include <cstdint>
#include <stdexcept>
#include <vector>

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

struct CpuPackedPlaneFilter::Impl {
  explicit Impl(CpuPlaneFilter &f) : luma_filter_(f) {}
  CpuPlaneFilter &luma_filter_;
  PackedPixels pixels_;
  std::vector<uint8_t> luma_in_, luma_out_;
};

struct GpuPackedPlaneFilter::Impl {
  explicit Impl(GpuPlaneFilter &f) : luma_filter_(f) {}
  GpuPlaneFilter &luma_filter_;
  PackedPixels pixels_;
  DevicePlane luma_in_, luma_out_;
  int height_ = 0;
};

struct CpuPackedWindowFilter::Impl {
  explicit Impl(CpuWindowFilter &f) : frame_filter_(f) {}
  CpuWindowFilter &frame_filter_;
  PackedPixels pixels_;
  // The planes of each frame of the window, then of the output.
  std::vector<std::vector<uint8_t>> storage_;
  FramePlanes center_;
  FramePlanesOut out_;
};

struct GpuPackedWindowFilter::Impl {
  explicit Impl(GpuWindowFilter &f) : frame_filter_(f) {}
  GpuWindowFilter &frame_filter_;
  PackedPixels pixels_;
  std::vector<DevicePlane> storage_;
  FramePlanes center_;
  FramePlanesOut out_;
};

CpuPackedPlaneFilter::CpuPackedPlaneFilter(CpuPlaneFilter &luma_filter)
    : impl_(std::make_unique<Impl>(luma_filter)) {}
CpuPackedPlaneFilter::~CpuPackedPlaneFilter() = default;
CpuPackedPlaneFilter::CpuPackedPlaneFilter(CpuPackedPlaneFilter &&) noexcept = default;
CpuPackedPlaneFilter &CpuPackedPlaneFilter::operator=(CpuPackedPlaneFilter &&) noexcept = default;
void CpuPackedPlaneFilter::set_pixels(const PackedPixels &pixels) { impl_->pixels_ = pixels; }
void CpuPackedPlaneFilter::reset_history() { impl_->luma_filter_.reset_history(); }

GpuPackedPlaneFilter::GpuPackedPlaneFilter(GpuPlaneFilter &luma_filter)
    : impl_(std::make_unique<Impl>(luma_filter)) {}
GpuPackedPlaneFilter::~GpuPackedPlaneFilter() = default;
GpuPackedPlaneFilter::GpuPackedPlaneFilter(GpuPackedPlaneFilter &&) noexcept = default;
GpuPackedPlaneFilter &GpuPackedPlaneFilter::operator=(GpuPackedPlaneFilter &&) noexcept = default;
void GpuPackedPlaneFilter::set_pixels(const PackedPixels &pixels) { impl_->pixels_ = pixels; }
void GpuPackedPlaneFilter::reset_history() { impl_->luma_filter_.reset_history(); }

CpuPackedWindowFilter::CpuPackedWindowFilter(CpuWindowFilter &frame_filter)
    : impl_(std::make_unique<Impl>(frame_filter)) {}
CpuPackedWindowFilter::~CpuPackedWindowFilter() = default;
CpuPackedWindowFilter::CpuPackedWindowFilter(CpuPackedWindowFilter &&) noexcept = default;
CpuPackedWindowFilter &CpuPackedWindowFilter::operator=(CpuPackedWindowFilter &&) noexcept =
    default;
void CpuPackedWindowFilter::set_pixels(const PackedPixels &pixels) { impl_->pixels_ = pixels; }

GpuPackedWindowFilter::GpuPackedWindowFilter(GpuWindowFilter &frame_filter)
    : impl_(std::make_unique<Impl>(frame_filter)) {}
GpuPackedWindowFilter::~GpuPackedWindowFilter() = default;
GpuPackedWindowFilter::GpuPackedWindowFilter(GpuPackedWindowFilter &&) noexcept = default;
GpuPackedWindowFilter &GpuPackedWindowFilter::operator=(GpuPackedWindowFilter &&) noexcept =
    default;
void GpuPackedWindowFilter::set_pixels(const PackedPixels &pixels) { impl_->pixels_ = pixels; }

void CpuPackedPlaneFilter::process(ConstPlane src, Plane dst) {
  Impl &m = *impl_;
  check_pair(src, dst, m.pixels_);
  const PlaneSizes s = sizes_of(m.pixels_, src.height);
  std::vector<uint8_t> *in_storage = &m.luma_in_, *out_storage = &m.luma_out_;
  const FramePlanesOut in = host_planes(in_storage, s, false);
  const FramePlanesOut out = host_planes(out_storage, s, false);
  unpack_cpu(src, m.pixels_, in);
  m.luma_filter_.process(in.luma, out.luma);
  repack_cpu(src, m.pixels_, out.as_const(), dst);
}

void CpuPackedPlaneFilter::statistics_planes(ConstPlane &src, ConstPlane &dst) const {
  const Impl &m = *impl_;
  src = ConstPlane(m.luma_in_.data(), m.pixels_.width, m.pixels_.width, src.height);
  dst = ConstPlane(m.luma_out_.data(), m.pixels_.width, m.pixels_.width, dst.height);
}

void GpuPackedPlaneFilter::enqueue(ConstPlane src, Plane dst, cudaStream_t stream) {
  Impl &m = *impl_;
  check_pair(src, dst, m.pixels_);
  const PlaneSizes s = sizes_of(m.pixels_, src.height);
  const FramePlanesOut in = device_planes(&m.luma_in_, s, false);
  const FramePlanesOut out = device_planes(&m.luma_out_, s, false);
  m.height_ = src.height;
  enqueue_unpack(src, m.pixels_, in, stream);
  m.luma_filter_.enqueue(in.luma, out.luma, stream);
  enqueue_repack(src, m.pixels_, out.as_const(), dst, stream);
}

void GpuPackedPlaneFilter::statistics_planes(ConstPlane &src, ConstPlane &dst) const {
  const Impl &m = *impl_;
  src = ConstPlane(m.luma_in_.data(), m.luma_in_.pitch(), m.pixels_.width, m.height_);
  dst = ConstPlane(m.luma_out_.data(), m.luma_out_.pitch(), m.pixels_.width, m.height_);
}

void CpuPackedWindowFilter::process_window(const FramePlanes *window, int count, int center,
                                           const FramePlanesOut &dst) {
  Impl &m = *impl_;
  check_window(window, count, center, dst, m.pixels_);
  const PlaneSizes s = sizes_of(m.pixels_, dst.luma.height);
  m.storage_.resize(3 * static_cast<size_t>(count + 1));
  FramePlanes planes[2 * FrameWindow::kMaxRadius + 1];
  if (count > static_cast<int>(sizeof planes / sizeof planes[0]))
    throw std::invalid_argument("window too long");
  for (int i = 0; i < count; ++i) {
    const FramePlanesOut p = host_planes(&m.storage_[3 * i], s, true);
    unpack_cpu(window[i].luma, m.pixels_, p);
    planes[i] = p.as_const();
  }
  m.out_ = host_planes(&m.storage_[3 * count], s, true);
  m.center_ = planes[center];
  m.frame_filter_.process_window(planes, count, center, m.out_);
  repack_cpu(window[center].luma, m.pixels_, m.out_.as_const(), dst.luma);
}

void CpuPackedWindowFilter::statistics_frame(FramePlanes &center, ConstPlane &dst) const {
  center = impl_->center_;
  dst = impl_->out_.luma;
}

void GpuPackedWindowFilter::enqueue_window(const FramePlanes *window, int count, int center,
                                           const FramePlanesOut &dst, cudaStream_t stream) {
  Impl &m = *impl_;
  check_window(window, count, center, dst, m.pixels_);
  const PlaneSizes s = sizes_of(m.pixels_, dst.luma.height);
  if (m.storage_.size() < 3 * static_cast<size_t>(count + 1)) m.storage_.resize(3 * (count + 1));
  FramePlanes planes[2 * FrameWindow::kMaxRadius + 1];
  if (count > static_cast<int>(sizeof planes / sizeof planes[0]))
    throw std::invalid_argument("window too long");
  for (int i = 0; i < count; ++i) {
    const FramePlanesOut p = device_planes(&m.storage_[3 * i], s, true);
    enqueue_unpack(window[i].luma, m.pixels_, p, stream);
    planes[i] = p.as_const();
  }
  m.out_ = device_planes(&m.storage_[3 * count], s, true);
  m.center_ = planes[center];
  m.frame_filter_.enqueue_window(planes, count, center, m.out_, stream);
  enqueue_repack(window[center].luma, m.pixels_, m.out_.as_const(), dst.luma, stream);
}

void GpuPackedWindowFilter::statistics_frame(FramePlanes &center, ConstPlane &dst) const {
  center = impl_->center_;
  dst = impl_->out_.luma;
}

}  // namespace cudafilters
