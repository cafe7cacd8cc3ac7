#include "packed_convert.h"

#include "input_checks.h"
#include "packed_math.h"
#include "thread_pool.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace cudafilters {

bool PackedPixels::valid() const {
  const auto in_unit = [this](int o) { return o >= 0 && o < unit_bytes; };
  if (width < 1) return false;
  if (rgb())
    return (unit_bytes == 3 || unit_bytes == 4) && in_unit(r) && in_unit(g) && in_unit(b) &&
           r != g && g != b && r != b;
  if (unit_bytes != 4 || !in_unit(y0) || !in_unit(y1) || !in_unit(u) || !in_unit(v)) return false;
  return ((1 << y0) | (1 << y1) | (1 << u) | (1 << v)) == 0xF;
}

int packed_chroma_width(const PackedPixels &pixels) {
  return pixels.rgb() ? pixels.width : (pixels.width + 1) / 2;
}

void check_packed(ConstPlane packed, const PackedPixels &pixels, const char *what) {
  if (!pixels.valid()) throw std::invalid_argument("invalid packed pixel layout");
  check_plane(packed, what);
  if (packed.samples.bytes != 1 || packed.height < 1 ||
      static_cast<size_t>(packed.width) < packed_row_bytes(pixels) ||
      packed.stride < static_cast<size_t>(packed.width))
    throw std::invalid_argument(std::string(what) + ": rows of " + std::to_string(packed.width) +
                                " bytes cannot hold " + std::to_string(pixels.width) +
                                " packed pixels");
}

void check_planes(const FramePlanes &planes, const PackedPixels &pixels, int height) {
  const auto fits = [height](ConstPlane p, int width) {
    return p.data != nullptr && p.width == width && p.height == height && p.samples.bytes == 1 &&
           p.stride >= static_cast<size_t>(width);
  };
  if (!fits(planes.luma, pixels.width))
    throw std::invalid_argument("luma plane does not match the packed frame");
  const int cw = packed_chroma_width(pixels);
  if (planes.has_chroma() &&
      (planes.chroma_step != 1 || !fits(planes.u, cw) || !fits(planes.v, cw)))
    throw std::invalid_argument("chroma planes do not match the packed frame");
}

namespace {

// Rows are independent: bands of rows over the shared pool.
template <typename Row>
void for_rows(int height, const Row &row) {
  constexpr int kBand = 16;
  parallel_for((height + kBand - 1) / kBand, [&](int band) {
    const int end = std::min(height, (band + 1) * kBand);
    for (int y = band * kBand; y < end; ++y) row(y);
  });
}

const uint8_t *row_of(ConstPlane p, int y) { return p.data + static_cast<size_t>(y) * p.stride; }
uint8_t *row_of(Plane p, int y) { return p.data + static_cast<size_t>(y) * p.stride; }

}  // namespace

void unpack_cpu(ConstPlane src, const PackedPixels &px, const FramePlanesOut &planes) {
  check_packed(src, px, "packed frame");
  check_planes(planes.as_const(), px, src.height);
  const bool chroma = planes.has_chroma();
  for_rows(src.height, [&](int y) {
    const uint8_t *s = row_of(src, y);
    uint8_t *lu = row_of(planes.luma, y);
    uint8_t *cu = chroma ? row_of(planes.u, y) : nullptr;
    uint8_t *cv = chroma ? row_of(planes.v, y) : nullptr;
    if (px.rgb()) {
      for (int x = 0; x < px.width; ++x, s += px.unit_bytes) {
        const int r = s[px.r], g = s[px.g], b = s[px.b];
        const int l = ycrcb::luma(r, g, b);
        lu[x] = static_cast<uint8_t>(l);
        if (chroma) {
          cu[x] = ycrcb::cr(r, l);
          cv[x] = ycrcb::cb(b, l);
        }
      }
      return;
    }
    for (int i = 0; 2 * i < px.width; ++i, s += 4) {
      lu[2 * i] = s[px.y0];
      if (2 * i + 1 < px.width) lu[2 * i + 1] = s[px.y1];
      if (chroma) {
        cu[i] = s[px.u];
        cv[i] = s[px.v];
      }
    }
  });
}

void repack_cpu(ConstPlane src, const PackedPixels &px, const FramePlanes &planes, Plane dst) {
  check_packed(src, px, "packed frame");
  check_packed(dst, px, "packed output");
  if (dst.height != src.height) throw std::invalid_argument("packed frames differ in height");
  check_planes(planes, px, src.height);
  const bool chroma = planes.has_chroma();
  const size_t row_bytes = packed_row_bytes(px);
  for_rows(src.height, [&](int y) {
    const uint8_t *s = row_of(src, y);
    uint8_t *d = row_of(dst, y);
    const uint8_t *lu = row_of(planes.luma, y);
    const uint8_t *cu = chroma ? row_of(planes.u, y) : nullptr;
    const uint8_t *cv = chroma ? row_of(planes.v, y) : nullptr;
    if (px.rgb()) {
      for (int x = 0; x < px.width; ++x) {
        const uint8_t *p = s + static_cast<size_t>(x) * px.unit_bytes;
        uint8_t *q = d + static_cast<size_t>(x) * px.unit_bytes;
        int ccr, ccb;
        if (chroma) {
          ccr = cu[x];
          ccb = cv[x];
        } else {
          const int r = p[px.r], b = p[px.b];
          const int l = ycrcb::luma(r, p[px.g], b);
          ccr = ycrcb::cr(r, l);
          ccb = ycrcb::cb(b, l);
        }
        // Alpha and padding come along; src may be dst.
        if (q != p) std::memcpy(q, p, px.unit_bytes);
        const ycrcb::Rgb c = ycrcb::to_rgb(lu[x], ccr, ccb);
        q[px.r] = c.r;
        q[px.g] = c.g;
        q[px.b] = c.b;
      }
      return;
    }
    if (d != s) std::memcpy(d, s, row_bytes);
    for (int i = 0; 2 * i < px.width; ++i, d += 4) {
      d[px.y0] = lu[2 * i];
      if (2 * i + 1 < px.width) d[px.y1] = lu[2 * i + 1];
      if (chroma) {
        d[px.u] = cu[i];
        d[px.v] = cv[i];
      }
    }
  });
}

}  // namespace cudafilters
