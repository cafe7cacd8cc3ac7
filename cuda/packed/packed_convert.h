// Packed frames to planes and back (cudafilters/packed_pixels.h), on the
// CPU and on a stream. Private to the engine library and its tests.
#pragma once

#include <cudafilters/frame_planes.h>
#include <cudafilters/packed_pixels.h>
#include <cudafilters/plane.h>

#include <cuda_runtime.h>

namespace cudafilters {

// The planes of `pixels`' frames of `height` rows: luma of width x height
// and, for RGB, Cr and Cb of the same size (in u and v); for YUV 4:2:2, U
// and V of (width + 1) / 2 x height.
int packed_chroma_width(const PackedPixels &pixels);

// Throws std::invalid_argument unless `packed` (a plane of bytes) holds
// rows of `pixels` and `planes` (luma, and chroma where given) are the
// planes of such a frame; `what` names the frame in the message.
void check_packed(ConstPlane packed, const PackedPixels &pixels, const char *what);
void check_planes(const FramePlanes &planes, const PackedPixels &pixels, int height);

// Writes planes.luma and, where planes has chroma, its chroma, from the
// packed frame `src`.
void unpack_cpu(ConstPlane src, const PackedPixels &pixels, const FramePlanesOut &planes);
// Writes the packed frame dst from planes.luma and, where planes has
// chroma, its chroma; without, from the chroma of the packed frame `src`
// (RGB: the Cr and Cb of its pixels; 4:2:2: its U and V bytes). Every other
// byte of a row's packed_row_bytes comes from src. src and dst may be the
// same plane.
void repack_cpu(ConstPlane src, const PackedPixels &pixels, const FramePlanes &planes, Plane dst);

// The same on device planes, queued on `stream`.
void enqueue_unpack(ConstPlane src, const PackedPixels &pixels, const FramePlanesOut &planes,
                    cudaStream_t stream);
void enqueue_repack(ConstPlane src, const PackedPixels &pixels, const FramePlanes &planes,
                    Plane dst, cudaStream_t stream);

}  // namespace cudafilters
