// Parameters of CLAHE and the tile geometry they give a frame, shared by the
// CPU and GPU implementations so both compute the same function: that of
// OpenCV's cv::createCLAHE(clip_limit, {tiles_x, tiles_y})->apply(), with
// 256 bins on 8-bit planes and 65536 on 16-bit ones as OpenCV has them, and
// 2^b bins on planes of b-bit levels.
#pragma once

#include <cstdint>
#include <string>

namespace cudafilters {

constexpr int kClaheMaxTiles = 64;
// A clip limit of 256 lets a bin of an 8-bit tile hold the whole tile: no
// clipping at all. Deeper tiles clip at most at tile area * 256 / levels.
constexpr double kClaheMaxClipLimit = 256.0;

struct ClaheParams {
  // In OpenCV's unit: multiples of a tile's mean bin count. 0 does not clip.
  double clip_limit = 2.0;
  int tiles_x = 8;  // 1..kClaheMaxTiles
  int tiles_y = 8;  // 1..kClaheMaxTiles
  // The weight on the past, 0 (off: every frame on its own) to 1: each
  // tile's LUT then comes from its histogram blended with those of earlier
  // frames. A new grid starts a new history.
  double temporal_smoothing = 0.0;
};

// Empty when the parameters are valid, otherwise what is wrong with them.
std::string clahe_params_error(const ClaheParams &p);

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
