// Packed frames to planes and back on the device, queued on a stream;
// rows of a block side by side, so that a warp reads one row.
#include "packed_convert.h"

#include "packed_math.h"

#include <cudafilters/cuda_check.h>

#include <stdexcept>

namespace cudafilters {

namespace {

struct PackedArgs {
  const uint8_t *src;
  size_t src_stride;
  uint8_t *dst;
  size_t dst_stride;
  uint8_t *luma;
  size_t luma_stride;
  uint8_t *u;  // null: no chroma planes
  uint8_t *v;
  size_t u_stride, v_stride;
  int width, height, units;
  int unit_bytes, r, g, b, y0, y1, cu, cv;
};

constexpr int kBlockX = 128, kBlockY = 2;

__device__ __forceinline__ uint8_t *at(uint8_t *base, size_t stride, int y, int x) {
  return base + static_cast<size_t>(y) * stride + x;
}

// The fast path: each thread takes four units (16 bytes of RGBA or 4:2:2,
// 12 of RGB) as 32-bit words and writes its luma and chroma as words, so
// that every access of a warp is wide and contiguous; per-byte accesses
// of 1- to 4-byte strides made the conversions several times slower than
// the bandwidth they need. Bytes are picked from the words by shifts with
// the layout's offsets, so that the words stay in registers. A row's last
// units, short of a whole chunk, go one by one.
constexpr int kChunk = 4;  // units a thread takes

template <int kWords>
__device__ __forceinline__ uint32_t byte_of(const uint32_t (&w)[kWords], int k) {
  uint32_t word = w[0];
#pragma unroll
  for (int i = 1; i < kWords; ++i)
    if ((k >> 2) == i) word = w[i];
  return (word >> ((k & 3) * 8)) & 0xFFu;
}

template <int kWords>
__device__ __forceinline__ void set_byte(uint32_t (&w)[kWords], int k, uint32_t v) {
  const int shift = (k & 3) * 8;
#pragma unroll
  for (int i = 0; i < kWords; ++i)
    if ((k >> 2) == i) w[i] = (w[i] & ~(0xFFu << shift)) | (v << shift);
}

template <int kWords>
__device__ __forceinline__ void load_words(uint32_t (&w)[kWords], const uint8_t *p) {
  if constexpr (kWords == 4) {
    const uint4 v = *reinterpret_cast<const uint4 *>(p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else {
#pragma unroll
    for (int i = 0; i < kWords; ++i) w[i] = reinterpret_cast<const uint32_t *>(p)[i];
  }
}

template <int kWords>
__device__ __forceinline__ void store_words(uint8_t *p, const uint32_t (&w)[kWords]) {
  if constexpr (kWords == 4) {
    *reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
  } else {
#pragma unroll
    for (int i = 0; i < kWords; ++i) reinterpret_cast<uint32_t *>(p)[i] = w[i];
  }
}

__device__ __forceinline__ void unpack_rgb_unit(const PackedArgs &a, int x, int y) {
  const uint8_t *p = a.src + static_cast<size_t>(y) * a.src_stride + static_cast<size_t>(x) * a.unit_bytes;
  const int r = p[a.r], g = p[a.g], b = p[a.b];
  const int l = ycrcb::luma(r, g, b);
  *at(a.luma, a.luma_stride, y, x) = static_cast<uint8_t>(l);
  if (a.u) {
    *at(a.u, a.u_stride, y, x) = ycrcb::cr(r, l);
    *at(a.v, a.v_stride, y, x) = ycrcb::cb(b, l);
  }
}

__device__ __forceinline__ void repack_rgb_unit(const PackedArgs &a, int x, int y) {
  const size_t off = static_cast<size_t>(x) * a.unit_bytes;
  const uint8_t *p = a.src + static_cast<size_t>(y) * a.src_stride + off;
  uint8_t *q = a.dst + static_cast<size_t>(y) * a.dst_stride + off;
  uint8_t unit[4];
  for (int i = 0; i < a.unit_bytes; ++i) unit[i] = p[i];
  int ccr, ccb;
  if (a.u) {
    ccr = *at(a.u, a.u_stride, y, x);
    ccb = *at(a.v, a.v_stride, y, x);
  } else {
    const int l = ycrcb::luma(unit[a.r], unit[a.g], unit[a.b]);
    ccr = ycrcb::cr(unit[a.r], l);
    ccb = ycrcb::cb(unit[a.b], l);
  }
  const ycrcb::Rgb c = ycrcb::to_rgb(*at(a.luma, a.luma_stride, y, x), ccr, ccb);
  unit[a.r] = c.r;
  unit[a.g] = c.g;
  unit[a.b] = c.b;
  for (int i = 0; i < a.unit_bytes; ++i) q[i] = unit[i];
}

__device__ __forceinline__ void unpack_422_unit(const PackedArgs &a, int i, int y) {
  const uint8_t *g = a.src + static_cast<size_t>(y) * a.src_stride + 4 * static_cast<size_t>(i);
  *at(a.luma, a.luma_stride, y, 2 * i) = g[a.y0];
  if (2 * i + 1 < a.width) *at(a.luma, a.luma_stride, y, 2 * i + 1) = g[a.y1];
  if (a.u) {
    *at(a.u, a.u_stride, y, i) = g[a.cu];
    *at(a.v, a.v_stride, y, i) = g[a.cv];
  }
}

__device__ __forceinline__ void repack_422_unit(const PackedArgs &a, int i, int y) {
  const uint8_t *p = a.src + static_cast<size_t>(y) * a.src_stride + 4 * static_cast<size_t>(i);
  uint8_t *q = a.dst + static_cast<size_t>(y) * a.dst_stride + 4 * static_cast<size_t>(i);
  uint8_t g[4] = {p[0], p[1], p[2], p[3]};
  g[a.y0] = *at(a.luma, a.luma_stride, y, 2 * i);
  if (2 * i + 1 < a.width) g[a.y1] = *at(a.luma, a.luma_stride, y, 2 * i + 1);
  if (a.u) {
    g[a.cu] = *at(a.u, a.u_stride, y, i);
    g[a.cv] = *at(a.v, a.v_stride, y, i);
  }
  for (int k = 0; k < 4; ++k) q[k] = g[k];
}

// kUnit: bytes per RGB pixel (3 or 4); kR, kG, kB: where R, G and B lie
// in it, as constants, so that picking a byte is one shift. (On an H100
// this measured the same as offsets given at run time: 1080p and 4K RGBA
// to planes and back within run-to-run noise.) Four pixels a thread.
template <int kUnit, int kR, int kG, int kB>
__global__ void unpack_rgb_chunks_kernel(PackedArgs a) {
  constexpr int kWords = kUnit;  // 4 pixels of kUnit bytes: kUnit words
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int x0 = c * kChunk;
  if (x0 >= a.units || y >= a.height) return;
  if (x0 + kChunk > a.units) {
    for (int x = x0; x < a.units; ++x) unpack_rgb_unit(a, x, y);
    return;
  }
  uint32_t w[kWords];
  load_words(w, a.src + static_cast<size_t>(y) * a.src_stride + static_cast<size_t>(x0) * kUnit);
  uint32_t lw = 0, crw = 0, cbw = 0;
#pragma unroll
  for (int p = 0; p < kChunk; ++p) {
    const int r = byte_of(w, p * kUnit + kR), g = byte_of(w, p * kUnit + kG),
              b = byte_of(w, p * kUnit + kB);
    const int l = ycrcb::luma(r, g, b);
    lw |= static_cast<uint32_t>(l) << (8 * p);
    crw |= static_cast<uint32_t>(ycrcb::cr(r, l)) << (8 * p);
    cbw |= static_cast<uint32_t>(ycrcb::cb(b, l)) << (8 * p);
  }
  *reinterpret_cast<uint32_t *>(at(a.luma, a.luma_stride, y, x0)) = lw;
  if (a.u) {
    *reinterpret_cast<uint32_t *>(at(a.u, a.u_stride, y, x0)) = crw;
    *reinterpret_cast<uint32_t *>(at(a.v, a.v_stride, y, x0)) = cbw;
  }
}

template <int kUnit, int kR, int kG, int kB>
__global__ void repack_rgb_chunks_kernel(PackedArgs a) {
  constexpr int kWords = kUnit;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int x0 = c * kChunk;
  if (x0 >= a.units || y >= a.height) return;
  if (x0 + kChunk > a.units) {
    for (int x = x0; x < a.units; ++x) repack_rgb_unit(a, x, y);
    return;
  }
  const size_t off = static_cast<size_t>(x0) * kUnit;
  uint32_t w[kWords];
  load_words(w, a.src + static_cast<size_t>(y) * a.src_stride + off);
  const uint32_t lw = *reinterpret_cast<const uint32_t *>(at(a.luma, a.luma_stride, y, x0));
  uint32_t crw = 0, cbw = 0;
  if (a.u) {
    crw = *reinterpret_cast<const uint32_t *>(at(a.u, a.u_stride, y, x0));
    cbw = *reinterpret_cast<const uint32_t *>(at(a.v, a.v_stride, y, x0));
  }
#pragma unroll
  for (int p = 0; p < kChunk; ++p) {
    const int br = p * kUnit + kR, bg = p * kUnit + kG, bb = p * kUnit + kB;
    int ccr, ccb;
    if (a.u) {
      ccr = (crw >> (8 * p)) & 0xFF;
      ccb = (cbw >> (8 * p)) & 0xFF;
    } else {
      const int r = byte_of(w, br), b = byte_of(w, bb);
      const int l = ycrcb::luma(r, byte_of(w, bg), b);
      ccr = ycrcb::cr(r, l);
      ccb = ycrcb::cb(b, l);
    }
    const ycrcb::Rgb rgb = ycrcb::to_rgb((lw >> (8 * p)) & 0xFF, ccr, ccb);
    set_byte(w, br, rgb.r);
    set_byte(w, bg, rgb.g);
    set_byte(w, bb, rgb.b);
  }
  store_words(a.dst + static_cast<size_t>(y) * a.dst_stride + off, w);
}

// Four groups (eight pixels) a thread; kY0, kU, kY1, kV: where the bytes
// lie in a group.
template <int kY0, int kU, int kY1, int kV>
__global__ void unpack_422_chunks_kernel(PackedArgs a) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int i0 = c * kChunk;
  // The last group of an odd width has one pixel: it goes alone.
  const int whole = a.width / 2;
  if (i0 >= a.units || y >= a.height) return;
  if (i0 + kChunk > whole) {
    for (int i = i0; i < a.units; ++i) unpack_422_unit(a, i, y);
    return;
  }
  uint32_t w[4];
  load_words(w, a.src + static_cast<size_t>(y) * a.src_stride + 4 * static_cast<size_t>(i0));
  uint32_t l0 = 0, l1 = 0, uw = 0, vw = 0;
#pragma unroll
  for (int g = 0; g < kChunk; ++g) {
    const uint32_t y0 = (w[g] >> (8 * kY0)) & 0xFF, y1 = (w[g] >> (8 * kY1)) & 0xFF;
    const uint32_t pair = y0 | (y1 << 8);
    if (g < 2) l0 |= pair << (16 * g);
    else l1 |= pair << (16 * (g - 2));
    uw |= ((w[g] >> (8 * kU)) & 0xFF) << (8 * g);
    vw |= ((w[g] >> (8 * kV)) & 0xFF) << (8 * g);
  }
  *reinterpret_cast<uint2 *>(at(a.luma, a.luma_stride, y, 2 * i0)) = make_uint2(l0, l1);
  if (a.u) {
    *reinterpret_cast<uint32_t *>(at(a.u, a.u_stride, y, i0)) = uw;
    *reinterpret_cast<uint32_t *>(at(a.v, a.v_stride, y, i0)) = vw;
  }
}

template <int kY0, int kU, int kY1, int kV>
__global__ void repack_422_chunks_kernel(PackedArgs a) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int i0 = c * kChunk;
  const int whole = a.width / 2;
  if (i0 >= a.units || y >= a.height) return;
  if (i0 + kChunk > whole) {
    for (int i = i0; i < a.units; ++i) repack_422_unit(a, i, y);
    return;
  }
  const size_t off = 4 * static_cast<size_t>(i0);
  uint32_t w[4];
  load_words(w, a.src + static_cast<size_t>(y) * a.src_stride + off);
  const uint2 l = *reinterpret_cast<const uint2 *>(at(a.luma, a.luma_stride, y, 2 * i0));
  uint32_t uw = 0, vw = 0;
  if (a.u) {
    uw = *reinterpret_cast<const uint32_t *>(at(a.u, a.u_stride, y, i0));
    vw = *reinterpret_cast<const uint32_t *>(at(a.v, a.v_stride, y, i0));
  }
#pragma unroll
  for (int g = 0; g < kChunk; ++g) {
    const uint32_t pair = ((g < 2 ? l.x : l.y) >> (16 * (g & 1))) & 0xFFFF;
    uint32_t word = w[g];
    word = (word & ~(0xFFu << (8 * kY0))) | ((pair & 0xFF) << (8 * kY0));
    word = (word & ~(0xFFu << (8 * kY1))) | ((pair >> 8) << (8 * kY1));
    if (a.u) {
      word = (word & ~(0xFFu << (8 * kU))) | (((uw >> (8 * g)) & 0xFF) << (8 * kU));
      word = (word & ~(0xFFu << (8 * kV))) | (((vw >> (8 * g)) & 0xFF) << (8 * kV));
    }
    w[g] = word;
  }
  store_words(a.dst + static_cast<size_t>(y) * a.dst_stride + off, w);
}

// The plain path, for rows not aligned for words: a thread a unit.
__global__ void unpack_units_kernel(PackedArgs a, bool rgb) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= a.units || y >= a.height) return;
  if (rgb) unpack_rgb_unit(a, i, y);
  else unpack_422_unit(a, i, y);
}

__global__ void repack_units_kernel(PackedArgs a, bool rgb) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= a.units || y >= a.height) return;
  if (rgb) repack_rgb_unit(a, i, y);
  else repack_422_unit(a, i, y);
}

bool aligned_to(const void *p, size_t stride, size_t n) {
  return reinterpret_cast<uintptr_t>(p) % n == 0 && stride % n == 0;
}

// Whether the chunked kernels may run: packed rows aligned for their words,
// planes for theirs.
bool chunks_fit(const PackedArgs &a, bool rgb, bool with_dst) {
  const size_t packed = a.unit_bytes == 3 ? 4 : 16;
  const size_t luma = rgb ? 4 : 8;
  bool ok = aligned_to(a.src, a.src_stride, packed) && aligned_to(a.luma, a.luma_stride, luma);
  if (with_dst) ok = ok && aligned_to(a.dst, a.dst_stride, packed);
  if (a.u) ok = ok && aligned_to(a.u, a.u_stride, 4) && aligned_to(a.v, a.v_stride, 4);
  return ok;
}

PackedArgs args_of(ConstPlane src, const PackedPixels &px, const FramePlanes &planes) {
  PackedArgs a{};
  a.src = src.data;
  a.src_stride = src.stride;
  a.luma = const_cast<uint8_t *>(planes.luma.data);
  a.luma_stride = planes.luma.stride;
  if (planes.has_chroma()) {
    a.u = const_cast<uint8_t *>(planes.u.data);
    a.v = const_cast<uint8_t *>(planes.v.data);
    a.u_stride = planes.u.stride;
    a.v_stride = planes.v.stride;
  }
  a.width = px.width;
  a.height = src.height;
  a.units = px.rgb() ? px.width : (px.width + 1) / 2;
  a.unit_bytes = px.unit_bytes;
  a.r = px.r;
  a.g = px.g;
  a.b = px.b;
  a.y0 = px.y0;
  a.y1 = px.y1;
  a.cu = px.u;
  a.cv = px.v;
  return a;
}

dim3 grid_of(const PackedArgs &a, int units_per_thread) {
  const int threads = (a.units + units_per_thread - 1) / units_per_thread;
  return dim3((threads + kBlockX - 1) / kBlockX, (a.height + kBlockY - 1) / kBlockY);
}


// The chunked kernels of the layouts GStreamer's formats have; null for
// any other (which takes the plain kernel).
using PackedKernel = void (*)(PackedArgs);

template <bool kUnpack>
PackedKernel chunk_kernel(const PackedPixels &px) {
#define CUDAFILTERS_RGB(U, R, G, B)                                            \
  if (px.unit_bytes == U && px.r == R && px.g == G && px.b == B)                  \
    return kUnpack ? unpack_rgb_chunks_kernel<U, R, G, B> : repack_rgb_chunks_kernel<U, R, G, B>;
#define CUDAFILTERS_422(Y0, U, Y1, V)                                          \
  if (px.y0 == Y0 && px.u == U && px.y1 == Y1 && px.v == V)                       \
    return kUnpack ? unpack_422_chunks_kernel<Y0, U, Y1, V> : repack_422_chunks_kernel<Y0, U, Y1, V>;
  if (px.rgb()) {
    CUDAFILTERS_RGB(4, 0, 1, 2)  // RGBA, RGBx
    CUDAFILTERS_RGB(4, 2, 1, 0)  // BGRA, BGRx
    CUDAFILTERS_RGB(4, 1, 2, 3)  // ARGB, xRGB
    CUDAFILTERS_RGB(4, 3, 2, 1)  // ABGR, xBGR
    CUDAFILTERS_RGB(3, 0, 1, 2)  // RGB
    CUDAFILTERS_RGB(3, 2, 1, 0)  // BGR
  } else {
    CUDAFILTERS_422(0, 1, 2, 3)  // YUY2
    CUDAFILTERS_422(1, 0, 3, 2)  // UYVY
    CUDAFILTERS_422(0, 3, 2, 1)  // YVYU
  }
#undef CUDAFILTERS_RGB
#undef CUDAFILTERS_422
  return nullptr;
}

void launch(const PackedArgs &a, const PackedPixels &px, bool unpack, bool with_dst,
            cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  const PackedKernel chunks = unpack ? chunk_kernel<true>(px) : chunk_kernel<false>(px);
  if (chunks && chunks_fit(a, px.rgb(), with_dst)) {
    chunks<<<grid_of(a, kChunk), block, 0, stream>>>(a);
    check_launch(unpack ? "unpack chunks kernel" : "repack chunks kernel");
  } else if (unpack) {
    unpack_units_kernel<<<grid_of(a, 1), block, 0, stream>>>(a, px.rgb());
    check_launch("unpack_units_kernel");
  } else {
    repack_units_kernel<<<grid_of(a, 1), block, 0, stream>>>(a, px.rgb());
    check_launch("repack_units_kernel");
  }
}

}  // namespace

void enqueue_unpack(ConstPlane src, const PackedPixels &px, const FramePlanesOut &planes,
                    cudaStream_t stream) {
  check_packed(src, px, "packed frame");
  check_planes(planes.as_const(), px, src.height);
  launch(args_of(src, px, planes.as_const()), px, true, false, stream);
}

void enqueue_repack(ConstPlane src, const PackedPixels &px, const FramePlanes &planes, Plane dst,
                    cudaStream_t stream) {
  check_packed(src, px, "packed frame");
  check_packed(dst, px, "packed output");
  if (dst.height != src.height) throw std::invalid_argument("packed frames differ in height");
  check_planes(planes, px, src.height);
  PackedArgs a = args_of(src, px, planes);
  a.dst = dst.data;
  a.dst_stride = dst.stride;
  launch(a, px, false, true, stream);
}

}  // namespace cudafilters
