// Packed frames to planes and back on the device: one thread per pixel
// (RGB) or per two pixels (YUV 4:2:2), rows of a block side by side so
// that a warp reads consecutive units of one row.
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

__global__ void unpack_rgb_kernel(PackedArgs a) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= a.width || y >= a.height) return;
  const uint8_t *p = a.src + static_cast<size_t>(y) * a.src_stride + static_cast<size_t>(x) * a.unit_bytes;
  const int r = p[a.r], g = p[a.g], b = p[a.b];
  const int l = ycrcb::luma(r, g, b);
  *at(a.luma, a.luma_stride, y, x) = static_cast<uint8_t>(l);
  if (a.u) {
    *at(a.u, a.u_stride, y, x) = ycrcb::cr(r, l);
    *at(a.v, a.v_stride, y, x) = ycrcb::cb(b, l);
  }
}

__global__ void repack_rgb_kernel(PackedArgs a) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= a.width || y >= a.height) return;
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
    const int r = unit[a.r], b = unit[a.b];
    const int l = ycrcb::luma(r, unit[a.g], b);
    ccr = ycrcb::cr(r, l);
    ccb = ycrcb::cb(b, l);
  }
  const ycrcb::Rgb c = ycrcb::to_rgb(*at(a.luma, a.luma_stride, y, x), ccr, ccb);
  unit[a.r] = c.r;
  unit[a.g] = c.g;
  unit[a.b] = c.b;
  for (int i = 0; i < a.unit_bytes; ++i) q[i] = unit[i];
}

// 4:2:2 groups are 4 bytes: one 32-bit word where the rows are aligned.
__device__ __forceinline__ uchar4 load_group(const uint8_t *p, bool aligned) {
  if (aligned) return *reinterpret_cast<const uchar4 *>(p);
  return make_uchar4(p[0], p[1], p[2], p[3]);
}

__device__ __forceinline__ void store_group(uint8_t *p, uint8_t g[4], bool aligned) {
  if (aligned) {
    *reinterpret_cast<uchar4 *>(p) = make_uchar4(g[0], g[1], g[2], g[3]);
    return;
  }
  for (int i = 0; i < 4; ++i) p[i] = g[i];
}

__global__ void unpack_422_kernel(PackedArgs a, bool aligned) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= a.units || y >= a.height) return;
  const uchar4 w = load_group(a.src + static_cast<size_t>(y) * a.src_stride + 4 * static_cast<size_t>(i), aligned);
  const uint8_t g[4] = {w.x, w.y, w.z, w.w};
  *at(a.luma, a.luma_stride, y, 2 * i) = g[a.y0];
  if (2 * i + 1 < a.width) *at(a.luma, a.luma_stride, y, 2 * i + 1) = g[a.y1];
  if (a.u) {
    *at(a.u, a.u_stride, y, i) = g[a.cu];
    *at(a.v, a.v_stride, y, i) = g[a.cv];
  }
}

__global__ void repack_422_kernel(PackedArgs a, bool aligned) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= a.units || y >= a.height) return;
  const uchar4 w = load_group(a.src + static_cast<size_t>(y) * a.src_stride + 4 * static_cast<size_t>(i), aligned);
  uint8_t g[4] = {w.x, w.y, w.z, w.w};
  g[a.y0] = *at(a.luma, a.luma_stride, y, 2 * i);
  if (2 * i + 1 < a.width) g[a.y1] = *at(a.luma, a.luma_stride, y, 2 * i + 1);
  if (a.u) {
    g[a.cu] = *at(a.u, a.u_stride, y, i);
    g[a.cv] = *at(a.v, a.v_stride, y, i);
  }
  store_group(a.dst + static_cast<size_t>(y) * a.dst_stride + 4 * static_cast<size_t>(i), g, aligned);
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

dim3 grid_of(const PackedArgs &a) {
  return dim3((a.units + kBlockX - 1) / kBlockX, (a.height + kBlockY - 1) / kBlockY);
}

bool words_aligned(const void *p, size_t stride) {
  return reinterpret_cast<uintptr_t>(p) % 4 == 0 && stride % 4 == 0;
}

}  // namespace

void enqueue_unpack(ConstPlane src, const PackedPixels &px, const FramePlanesOut &planes,
                    cudaStream_t stream) {
  check_packed(src, px, "packed frame");
  check_planes(planes.as_const(), px, src.height);
  const PackedArgs a = args_of(src, px, planes.as_const());
  const dim3 block(kBlockX, kBlockY);
  if (px.rgb()) {
    unpack_rgb_kernel<<<grid_of(a), block, 0, stream>>>(a);
    check_launch("unpack_rgb_kernel");
  } else {
    unpack_422_kernel<<<grid_of(a), block, 0, stream>>>(a, words_aligned(src.data, src.stride));
    check_launch("unpack_422_kernel");
  }
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
  const dim3 block(kBlockX, kBlockY);
  if (px.rgb()) {
    repack_rgb_kernel<<<grid_of(a), block, 0, stream>>>(a);
    check_launch("repack_rgb_kernel");
  } else {
    const bool aligned = words_aligned(src.data, src.stride) && words_aligned(dst.data, dst.stride);
    repack_422_kernel<<<grid_of(a), block, 0, stream>>>(a, aligned);
    check_launch("repack_422_kernel");
  }
}

}  // namespace cudafilters
