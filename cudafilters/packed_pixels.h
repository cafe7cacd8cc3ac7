// Frames whose pixels are packed in one plane: RGB of 3 or 4 bytes per
// pixel (RGBA, BGRx, RGB...) and YUV 4:2:2 of 4 bytes per two pixels (YUY2,
// UYVY, YVYU). Any filter of one plane or of whole frames runs on them
// through the filters of packed_filters.h, which give it planes:
//
// - RGB: the Y, Cr and Cb of OpenCV's YCrCb (cv::COLOR_RGB2YCrCb), 8-bit
//   fixed point, at full resolution. A filter of one plane filters Y; the
//   pixel is rebuilt from the new Y and the Cr and Cb of the input pixel
//   (cv::COLOR_YCrCb2RGB), so the result is the OpenCV round trip with the
//   filter applied to channel 0. Why YCrCb: it is the luma that users of
//   OpenCV already equalize and sharpen, so the output can be checked bit
//   for bit; its forward and inverse transforms are exact integer formulas.
// - YUV 4:2:2: the planes of the same frame as planar 4:2:2 (Y42B).
//
// Bytes that are neither (alpha, padding, the unused luma of a 4:2:2 row of
// odd width) are carried from the input pixel.
//
// A packed frame travels as a plane of bytes (ConstPlane with one-byte
// samples, width in bytes: packed_row_bytes) so that the runners move it as
// any other plane.
#pragma once

#include "frame_planes.h"
#include "plane.h"

#include <cstddef>

namespace cudafilters {

struct PackedPixels {
  enum class Kind { kRgb, kYuv422 };
  Kind kind = Kind::kRgb;
  // RGB: bytes per pixel, 3 or 4. YUV 4:2:2: 4 (bytes per two pixels).
  int unit_bytes = 4;
  // RGB: where R, G and B lie in a pixel. YUV 4:2:2: where the first and
  // second luma and U and V lie in two pixels.
  int r = 0, g = 1, b = 2;
  int y0 = 0, y1 = 2, u = 1, v = 3;
  // The frame's width in pixels.
  int width = 0;

  bool rgb() const { return kind == Kind::kRgb; }
  // Whether the offsets lie inside a unit, apart from each other.
  bool valid() const;
};

// The bytes of a row of `pixels`' frames.
inline size_t packed_row_bytes(const PackedPixels &pixels) {
  return pixels.rgb() ? static_cast<size_t>(pixels.width) * pixels.unit_bytes
                      : static_cast<size_t>((pixels.width + 1) / 2) * 4;
}

}  // namespace cudafilters
