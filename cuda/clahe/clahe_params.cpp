#include <cudafilters/clahe_params.h>

#include "clahe_geometry.h"
#include "equalize_math.h"

#include <algorithm>
#include <cmath>

namespace cudafilters {

std::string clahe_params_error(const ClaheParams &p) {
  if (!std::isfinite(p.clip_limit) || p.clip_limit < 0 || p.clip_limit > kClaheMaxClipLimit)
    return "clip-limit must be a number from 0 to " + std::to_string(int(kClaheMaxClipLimit));
  if (p.tiles_x < 1 || p.tiles_x > kClaheMaxTiles || p.tiles_y < 1 || p.tiles_y > kClaheMaxTiles)
    return "tiles-x and tiles-y must be from 1 to " + std::to_string(kClaheMaxTiles);
  if (!(p.temporal_smoothing >= 0 && p.temporal_smoothing <= 1))
    return "temporal-smoothing must be a number from 0 to 1";
  return {};
}

ClaheGeometry clahe_geometry(int width, int height, const ClaheParams &p, uint32_t levels) {
  ClaheGeometry g;
  g.width = width;
  g.height = height;
  g.tiles_x = p.tiles_x;
  g.tiles_y = p.tiles_y;
  const bool divides = width % p.tiles_x == 0 && height % p.tiles_y == 0;
  g.padded_width = divides ? width : width + p.tiles_x - width % p.tiles_x;
  g.padded_height = divides ? height : height + p.tiles_y - height % p.tiles_y;
  g.tile_width = g.padded_width / p.tiles_x;
  g.tile_height = g.padded_height / p.tiles_y;
  g.tile_area = g.tile_width * g.tile_height;
  g.levels = levels;
  // OpenCV: int(clipLimit * tileArea / histSize) in double, at least 1. With
  // fewer than 256 levels (a deep layout of under 8 bits) that can pass the
  // tile's area, and int: a 4096 x 4096 tile of 2 levels at clip 256 makes
  // 2^31, one 32768 x 32768 tile 2^37. No bin holds more than the tile, so a
  // limit of the tile's area clips exactly as such a limit does (not at all).
  if (p.clip_limit > 0)
    g.clip = std::max(
        static_cast<int>(std::min(p.clip_limit * g.tile_area / levels, double(g.tile_area))), 1);
  g.lut_scale = static_cast<float>(levels - 1) / static_cast<float>(g.tile_area);
  g.inv_tile_width = 1.0f / static_cast<float>(g.tile_width);
  g.inv_tile_height = 1.0f / static_cast<float>(g.tile_height);
  return g;
}

}  // namespace cudafilters
