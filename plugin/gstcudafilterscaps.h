/* The caps of the elements: the formats they take in each memory kind, the
 * pad templates, how caps map across the element (the memory kind is kept,
 * CUDA memory preferred) and what negotiated caps must satisfy. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

/* 8-bit formats whose first plane is luma (or gray): the elements filter
 * that plane and carry the others over unchanged. */
#define GST_CUDA_FILTERS_FORMATS "GRAY8, I420, YV12, NV12, NV21, Y42B, Y444"
/* The same in CUDA memory, less GRAY8: GStreamer's CUDA allocator has no
 * layout for it (1.22 aborts the process when asked for one), so no CUDA
 * element can produce or pool such frames. */
#define GST_CUDA_FILTERS_CUDA_FORMATS "I420, YV12, NV12, NV21, Y42B, Y444"

/* Packed 8-bit formats, one plane. RGB of 3 or 4 bytes per pixel: the luma
 * of OpenCV's YCrCb is filtered (whole-frame filters also take its Cr and
 * Cb); alpha and padding are carried. YUV 4:2:2: as the same frame in Y42B.
 * See cudafilters/packed_pixels.h. */
#define GST_CUDA_FILTERS_PACKED_FORMATS "RGBA, BGRA, RGBx, BGRx, ARGB, " \
    "ABGR, xRGB, xBGR, RGB, BGR, YUY2, UYVY, YVYU"
/* The same in CUDA memory: those GStreamer's CUDA allocator lays out in
 * every supported version (not xRGB, xBGR or YVYU). */
#define GST_CUDA_FILTERS_PACKED_CUDA_FORMATS "RGBA, BGRA, RGBx, BGRx, ARGB, " \
    "ABGR, RGB, BGR, YUY2, UYVY"

/* Deeper formats, 10 to 16 bits in 16-bit words: luma (or gray) is filtered
 * at full precision, the other planes are carried. */
#define GST_CUDA_FILTERS_DEEP_FORMATS "GRAY16_LE, P010_10LE, P016_LE, " \
    "I420_10LE, I420_12LE, Y444_10LE, Y444_12LE, Y444_16LE"
/* The same in CUDA memory: those GStreamer's CUDA allocator lays out in
 * every supported version (not GRAY16_LE). */
#define GST_CUDA_FILTERS_DEEP_CUDA_FORMATS "P010_10LE, P016_LE, I420_10LE, " \
    "Y444_16LE"

/* Adds the sink and src pad templates: the formats above in CUDA memory,
 * then in system memory. */
void gst_cuda_filters_base_class_add_pad_templates (GstElementClass * klass);

/* The caps on the other pad: the same, CUDA memory first where
 * @prefer_cuda (an upstream that offers both, as cudaupload does, then
 * hands over device frames), narrowed by @filter without reordering. */
GstCaps *gst_cuda_filters_transform_caps (GstCaps * caps, GstCaps * filter,
    bool prefer_cuda);

/* Whether the element can take @incaps in and @outcaps out: the same caps,
 * of at most 2^30 pixels, and, in CUDA memory, frames GStreamer's CUDA
 * allocator lays out whole. Fills @info and @cuda_caps; posts an error on
 * @element saying why not. */
bool gst_cuda_filters_check_caps (GstElement * element, GstCaps * incaps,
    GstCaps * outcaps, GstVideoInfo * info, bool *cuda_caps);
