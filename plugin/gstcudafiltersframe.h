/* A buffer mapped as a video frame of the negotiated caps, and the views of
 * its planes that the engines take.
 *
 * Mapping checks what a buffer claims before anything reads or writes it:
 * a video meta must describe frames of the caps, and every plane, as the
 * element reads or writes it (rows of the negotiated width, the frame's
 * strides), must lie inside the memory mapped for it. A video meta larger
 * than the caps (a decoder's padding rows) is cropped to the caps. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>

#include <cudafilters/frame_planes.h>
#include <cudafilters/gpu_plane_filter.h>
#include <cudafilters/packed_pixels.h>
#include <cudafilters/plane.h>

/* How the first plane of frames of @info stores its samples. */
cudafilters::SampleLayout gst_cuda_filters_sample_layout (const GstVideoInfo * info);

/* Whether frames of @info pack their pixels in one plane (RGB, YUV 4:2:2),
 * and how: fills @pixels where they do. */
bool gst_cuda_filters_packed_pixels (const GstVideoInfo * info,
    cudafilters::PackedPixels * pixels);

class GstCudaFiltersFrame
{
public:
  GstCudaFiltersFrame () = default;
  ~GstCudaFiltersFrame ();
  GstCudaFiltersFrame (const GstCudaFiltersFrame &) = delete;
  GstCudaFiltersFrame & operator= (const GstCudaFiltersFrame &) = delete;

  /* Maps @buf as a frame of @info with @flags (GST_MAP_READ, GST_MAP_WRITE
   * or both, with the CUDA map flag for device pointers). Where it
   * cannot, or the buffer does not hold such a frame, says why and leaves
   * nothing mapped. */
  bool map (const GstVideoInfo & info, GstBuffer * buf, GstMapFlags flags,
      std::string & why);

  guint n_planes () const { return GST_VIDEO_FRAME_N_PLANES (&frame_); }

  /* The first (luma or gray) plane, in samples; for packed pixels, the
   * whole frame as a plane of bytes (cudafilters/packed_pixels.h). */
  cudafilters::ConstPlane luma () const;
  cudafilters::Plane luma_mut () { return cudafilters::writable (luma ()); }

  /* Fills @carried with the planes after the first, in bytes, from @in's
   * to this (output) frame's: what one-plane filters carry over unchanged.
   * The caller keeps @carried, whose storage is reused from frame to
   * frame. */
  void carried_from (const GstCudaFiltersFrame & in,
      cudafilters::CarriedPlanes & carried);

  /* Copies plane @p of @in (host frames). */
  void copy_plane_from (const GstCudaFiltersFrame & in, guint p);

  /* Luma and, for YUV formats, U and V, each component where it lies:
   * what whole-frame filters take. For packed pixels, luma () alone. */
  cudafilters::FramePlanes components () const;
  cudafilters::FramePlanesOut components_mut () {
    return cudafilters::writable (components ());
  }

private:
  cudafilters::ConstPlane plane (guint p) const;
  cudafilters::ConstPlane component (guint comp) const;
  std::string planes_overflow () const;

  GstVideoFrame frame_ = {};
  bool mapped_ = false;
  bool packed_ = false;
  cudafilters::PackedPixels pixels_;
};

/* Maps @buf into @frame, as GstCudaFiltersFrame::map; where it cannot,
 * posts an error on @element: a stream error for an input, which does not
 * hold what its caps say, an element error for an output. */
bool gst_cuda_filters_map_frame (GstElement * element,
    GstCudaFiltersFrame & frame, const GstVideoInfo & info, GstBuffer * buf,
    GstMapFlags flags);
