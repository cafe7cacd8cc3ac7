// Views of one image plane: a base pointer, a row stride in bytes, a size in
// samples and how each sample is stored. They do not own memory and say
// nothing of where it lives; each user documents whether it expects host or
// device pointers.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define CUDAFILTERS_PLANE_HD __host__ __device__
#else
#define CUDAFILTERS_PLANE_HD
#endif

namespace cudafilters {

// The levels of 8-bit samples: the bins of an 8-bit plane's histogram, and
// of every histogram of plane levels (plane_levels.h).
constexpr int kHistBins = 256;

// How a plane stores its samples: one byte each (8-bit formats), or one
// little-endian 16-bit word each, of which `bits` bits from bit `shift` up
// hold the level. GRAY16_LE and P016_LE: 16 bits at shift 0; I420_10LE: 10
// bits at 0; P010_10LE: 10 bits at 6, the low bits zero. A filter reads the
// level as (word >> shift), clamped to 2^bits - 1, and writes
// (level << shift).
struct SampleLayout {
  int bytes = 1;  // 1 or 2
  int bits = 8;   // 1..8 for one byte, 1..16 for two
  int shift = 0;  // bits + shift <= 8 * bytes

  CUDAFILTERS_PLANE_HD bool deep() const { return bytes == 2; }
  CUDAFILTERS_PLANE_HD uint32_t levels() const { return 1u << bits; }
  CUDAFILTERS_PLANE_HD uint32_t max_level() const { return levels() - 1; }
  bool valid() const {
    return (bytes == 1 || bytes == 2) && bits >= 1 && shift >= 0 && bits + shift <= 8 * bytes;
  }
  bool operator==(const SampleLayout &o) const {
    return bytes == o.bytes && bits == o.bits && shift == o.shift;
  }
  bool operator!=(const SampleLayout &o) const { return !(*this == o); }
};

// A layout's shift and largest level as plain values, for loops over many
// samples: level = min(word >> shift, max_level).
struct SampleLevels {
  int shift = 0;
  uint32_t max_level = 255;

  CUDAFILTERS_PLANE_HD uint32_t of(uint32_t word) const {
    const uint32_t v = word >> shift;
    return v < max_level ? v : max_level;
  }
};

inline SampleLevels sample_levels(SampleLayout l) { return SampleLevels{l.shift, l.max_level()}; }

// The layout of a plane whose samples hold only `significant_bits` bits of
// their format's (0: all of them), for data that uses fewer bits than its
// container (14-bit thermal data in GRAY16_LE). The number must not exceed
// the format's bits, and 8-bit formats take only 0 or 8; otherwise the
// result is not valid().
inline SampleLayout with_significant_bits(SampleLayout format, int significant_bits) {
  if (significant_bits == 0) return format;
  SampleLayout l = format;
  l.bits = significant_bits > format.bits || (!format.deep() && significant_bits != 8)
               ? 0
               : significant_bits;
  return l;
}

struct Plane {
  uint8_t *data = nullptr;
  size_t stride = 0;
  int width = 0;  // samples
  int height = 0;
  SampleLayout samples;

  Plane() = default;
  Plane(uint8_t *d, size_t s, int w, int h, SampleLayout l = SampleLayout{})
      : data(d), stride(s), width(w), height(h), samples(l) {}

  size_t row_bytes() const { return static_cast<size_t>(width) * samples.bytes; }
};

struct ConstPlane {
  const uint8_t *data = nullptr;
  size_t stride = 0;
  int width = 0;  // samples
  int height = 0;
  SampleLayout samples;

  ConstPlane() = default;
  ConstPlane(const uint8_t *d, size_t s, int w, int h, SampleLayout l = SampleLayout{})
      : data(d), stride(s), width(w), height(h), samples(l) {}
  ConstPlane(const Plane &p)
      : data(p.data), stride(p.stride), width(p.width), height(p.height), samples(p.samples) {}

  size_t row_bytes() const { return static_cast<size_t>(width) * samples.bytes; }
};

// The same plane, writable: for memory the caller may write, seen through a
// read-only view (a frame mapped for writing, an output's bytes).
inline Plane writable(ConstPlane p) {
  return Plane(const_cast<uint8_t *>(p.data), p.stride, p.width, p.height, p.samples);
}

// A row of a deep plane as 16-bit words.
inline const uint16_t *row16(ConstPlane p, int y) {
  return reinterpret_cast<const uint16_t *>(p.data + static_cast<size_t>(y) * p.stride);
}
inline uint16_t *row16(Plane p, int y) {
  return reinterpret_cast<uint16_t *>(p.data + static_cast<size_t>(y) * p.stride);
}

}  // namespace cudafilters
