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
#include "cuda_memory.h"
#include "gpu_plane_filter.h"
#include "gpu_window_filter.h"
#include "packed_pixels.h"

#include <cstdint>
#include <vector>

namespace cudafilters {

class CpuPackedPlaneFilter final : public CpuPlaneFilter {
 public:
  explicit CpuPackedPlaneFilter(CpuPlaneFilter &luma_filter) : luma_filter_(luma_filter) {}
  // The layout and width of the frames from the next one on.
  void set_pixels(const PackedPixels &pixels) { pixels_ = pixels; }
  void process(ConstPlane src, Plane dst) override;
  void reset_history() override { luma_filter_.reset_history(); }
  void statistics_planes(ConstPlane &src, ConstPlane &dst) const override;

 private:
  CpuPlaneFilter &luma_filter_;
  PackedPixels pixels_;
  std::vector<uint8_t> luma_in_, luma_out_;
};

class GpuPackedPlaneFilter final : public GpuPlaneFilter {
 public:
  explicit GpuPackedPlaneFilter(GpuPlaneFilter &luma_filter) : luma_filter_(luma_filter) {}
  void set_pixels(const PackedPixels &pixels) { pixels_ = pixels; }
  // src and dst: device planes of packed frames.
  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override;
  void reset_history() override { luma_filter_.reset_history(); }
  void statistics_planes(ConstPlane &src, ConstPlane &dst) const override;

 private:
  GpuPlaneFilter &luma_filter_;
  PackedPixels pixels_;
  DevicePlane luma_in_, luma_out_;
  int height_ = 0;
};

class CpuPackedWindowFilter final : public CpuWindowFilter {
 public:
  explicit CpuPackedWindowFilter(CpuWindowFilter &frame_filter) : frame_filter_(frame_filter) {}
  void set_pixels(const PackedPixels &pixels) { pixels_ = pixels; }
  // Each frame's luma is the packed frame; it has no chroma planes.
  void process_window(const FramePlanes *window, int count, int center,
                      const FramePlanesOut &dst) override;
  void statistics_frame(FramePlanes &center, ConstPlane &dst) const override;

 private:
  CpuWindowFilter &frame_filter_;
  PackedPixels pixels_;
  // The planes of each frame of the window, then of the output.
  std::vector<std::vector<uint8_t>> storage_;
  FramePlanes center_;
  FramePlanesOut out_;
};

class GpuPackedWindowFilter final : public GpuWindowFilter {
 public:
  explicit GpuPackedWindowFilter(GpuWindowFilter &frame_filter) : frame_filter_(frame_filter) {}
  void set_pixels(const PackedPixels &pixels) { pixels_ = pixels; }
  void enqueue_window(const FramePlanes *window, int count, int center, const FramePlanesOut &dst,
                      cudaStream_t stream) override;
  void statistics_frame(FramePlanes &center, ConstPlane &dst) const override;

 private:
  GpuWindowFilter &frame_filter_;
  PackedPixels pixels_;
  std::vector<DevicePlane> storage_;
  FramePlanes center_;
  FramePlanesOut out_;
};

}  // namespace cudafilters
