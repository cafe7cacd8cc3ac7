// Any filter on packed frames (packed_pixels.h): each of these wraps a
// filter of planes, which it does not own, and takes and gives packed
// frames as planes of bytes (width packed_row_bytes(pixels), one-byte
// samples), so that the runners move them as any plane:
//
//   cudafilters::HistEqGpu histeq;
//   cudafilters::GpuPackedPlaneFilter rgba(histeq);
//   rgba.set_pixels(pixels);             // RGBA, 1920 pixels wide
//   runner.process_device(rgba, src, dst);  // equalizes Y of YCrCb
//
// A filter of one plane filters the frame's luma; a filter of whole frames
// gets the frame's luma and chroma (RGB: Y, Cr and Cb at full resolution;
// YUV 4:2:2: Y, U and V as Y42B holds them).
#pragma once

#include "cpu_plane_filter.h"
#include "cpu_window_filter.h"
#include "gpu_plane_filter.h"
#include "gpu_window_filter.h"
#include "packed_pixels.h"

#include <cuda_runtime.h>

#include <memory>

namespace cudafilters {

class CpuPackedPlaneFilter final : public CpuPlaneFilter {
 public:
  explicit CpuPackedPlaneFilter(CpuPlaneFilter &luma_filter);
  ~CpuPackedPlaneFilter() override;
  CpuPackedPlaneFilter(CpuPackedPlaneFilter &&) noexcept;
  CpuPackedPlaneFilter &operator=(CpuPackedPlaneFilter &&) noexcept;
  // The layout and width of the frames from the next one on.
  void set_pixels(const PackedPixels &pixels);
  void process(ConstPlane src, Plane dst) override;
  void reset_history() override;
  void statistics_planes(ConstPlane &src, ConstPlane &dst) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class GpuPackedPlaneFilter final : public GpuPlaneFilter {
 public:
  explicit GpuPackedPlaneFilter(GpuPlaneFilter &luma_filter);
  ~GpuPackedPlaneFilter() override;
  GpuPackedPlaneFilter(GpuPackedPlaneFilter &&) noexcept;
  GpuPackedPlaneFilter &operator=(GpuPackedPlaneFilter &&) noexcept;
  void set_pixels(const PackedPixels &pixels);
  // src and dst: device planes of packed frames.
  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override;
  void reset_history() override;
  void statistics_planes(ConstPlane &src, ConstPlane &dst) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CpuPackedWindowFilter final : public CpuWindowFilter {
 public:
  explicit CpuPackedWindowFilter(CpuWindowFilter &frame_filter);
  ~CpuPackedWindowFilter() override;
  CpuPackedWindowFilter(CpuPackedWindowFilter &&) noexcept;
  CpuPackedWindowFilter &operator=(CpuPackedWindowFilter &&) noexcept;
  void set_pixels(const PackedPixels &pixels);
  // Each frame's luma is the packed frame; it has no chroma planes.
  void process_window(const FramePlanes *window, int count, int center,
                      const FramePlanesOut &dst) override;
  void statistics_frame(FramePlanes &center, ConstPlane &dst) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class GpuPackedWindowFilter final : public GpuWindowFilter {
 public:
  explicit GpuPackedWindowFilter(GpuWindowFilter &frame_filter);
  ~GpuPackedWindowFilter() override;
  GpuPackedWindowFilter(GpuPackedWindowFilter &&) noexcept;
  GpuPackedWindowFilter &operator=(GpuPackedWindowFilter &&) noexcept;
  void set_pixels(const PackedPixels &pixels);
  void enqueue_window(const FramePlanes *window, int count, int center, const FramePlanesOut &dst,
                      cudaStream_t stream) override;
  void statistics_frame(FramePlanes &center, ConstPlane &dst) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters
