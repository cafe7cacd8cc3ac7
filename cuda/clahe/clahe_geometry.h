// The tile geometry CLAHE's parameters give a frame, as the CPU path and
// the kernels cut it. Private to the engine library and its tests.
#pragma once

#include <cudafilters/clahe_params.h>

#include <cstdint>

namespace cudafilters {

// How a width x height frame is cut into tiles. When the grid does not
// divide the frame, OpenCV extends it at the right and bottom by reflection
// (BORDER_REFLECT_101) to a multiple of the grid, and then extends both
// sides: by tiles - (size % tiles), which is a whole extra row (or column)
// of tiles along a side the grid did divide. Tile histograms count the
// extended frame; the output keeps the frame's size.
struct ClaheGeometry {
  int width = 0, height = 0;            // the frame
  int tiles_x = 0, tiles_y = 0;
  int padded_width = 0, padded_height = 0;
  int tile_width = 0, tile_height = 0;  // padded size / tiles
  int tile_area = 0;
  uint32_t levels = 256;                // bins of a tile's histogram
  int clip = 0;                         // per-tile bin limit in pixels; 0: none
  float lut_scale = 0.f;                // (levels - 1.f) / tile_area
  float inv_tile_width = 0.f;           // 1.f / tile_width
  float inv_tile_height = 0.f;

  int tiles() const { return tiles_x * tiles_y; }
};

// p must be valid; width and height at least 1; levels a power of two
// from 2 to 65536.
ClaheGeometry clahe_geometry(int width, int height, const ClaheParams &p, uint32_t levels = 256);

}  // namespace cudafilters
