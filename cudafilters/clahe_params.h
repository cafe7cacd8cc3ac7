// Parameters of CLAHE, shared by the CPU and GPU implementations so both
// compute the same function: that of OpenCV's cv::createCLAHE(clip_limit,
// {tiles_x, tiles_y})->apply(), with 256 bins on 8-bit planes and 65536 on
// 16-bit ones as OpenCV has them, and 2^b bins on planes of b-bit levels.
// A grid that does not divide the frame is extended as OpenCV extends it
// (docs/cudaclahe.md).
#pragma once

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

}  // namespace cudafilters
