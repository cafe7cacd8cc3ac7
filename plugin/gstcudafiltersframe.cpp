#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersframe.h"

cudafilters::SampleLayout
gst_cuda_filters_sample_layout (const GstVideoInfo * info)
{
  cudafilters::SampleLayout l;
  l.bytes = GST_VIDEO_INFO_COMP_PSTRIDE (info, 0) > 1
      && GST_VIDEO_INFO_COMP_DEPTH (info, 0) > 8 ? 2 : 1;
  l.bits = GST_VIDEO_INFO_COMP_DEPTH (info, 0);
  l.shift = GST_VIDEO_FORMAT_INFO_SHIFT (info->finfo, 0);
  return l;
}

bool
gst_cuda_filters_packed_pixels (const GstVideoInfo * info,
    cudafilters::PackedPixels * pixels)
{
  const GstVideoFormatInfo *f = info->finfo;
  if (GST_VIDEO_INFO_N_PLANES (info) != 1 ||
      GST_VIDEO_INFO_N_COMPONENTS (info) < 3 ||
      GST_VIDEO_INFO_COMP_DEPTH (info, 0) != 8)
    return false;
  cudafilters::PackedPixels p;
  p.width = GST_VIDEO_INFO_WIDTH (info);
  if (GST_VIDEO_FORMAT_INFO_IS_RGB (f)) {
    p.kind = cudafilters::PackedPixels::Kind::kRgb;
    p.unit_bytes = GST_VIDEO_FORMAT_INFO_PSTRIDE (f, 0);
    p.r = GST_VIDEO_FORMAT_INFO_POFFSET (f, GST_VIDEO_COMP_R);
    p.g = GST_VIDEO_FORMAT_INFO_POFFSET (f, GST_VIDEO_COMP_G);
    p.b = GST_VIDEO_FORMAT_INFO_POFFSET (f, GST_VIDEO_COMP_B);
  } else if (GST_VIDEO_FORMAT_INFO_IS_YUV (f) &&
      GST_VIDEO_FORMAT_INFO_W_SUB (f, 1) == 1 &&
      GST_VIDEO_FORMAT_INFO_H_SUB (f, 1) == 0 &&
      GST_VIDEO_FORMAT_INFO_PSTRIDE (f, 0) == 2) {
    /* Two pixels in 4 bytes: the second luma one word after the first. */
    p.kind = cudafilters::PackedPixels::Kind::kYuv422;
    p.unit_bytes = 4;
    p.y0 = GST_VIDEO_FORMAT_INFO_POFFSET (f, GST_VIDEO_COMP_Y);
    p.y1 = p.y0 + 2;
    p.u = GST_VIDEO_FORMAT_INFO_POFFSET (f, GST_VIDEO_COMP_U);
    p.v = GST_VIDEO_FORMAT_INFO_POFFSET (f, GST_VIDEO_COMP_V);
  } else {
    return false;
  }
  if (!p.valid ())
    return false;
  *pixels = p;
  return true;
}

namespace {

/* Why a video meta cannot describe frames of @info (checked before mapping,
 * which would only assert on it); empty when it can. */
std::string
video_meta_mismatch (const GstVideoMeta * meta, const GstVideoInfo * info)
{
  if (meta->format != GST_VIDEO_INFO_FORMAT (info) ||
      meta->n_planes != GST_VIDEO_INFO_N_PLANES (info))
    return std::string ("its video meta describes ") +
        gst_video_format_to_string (meta->format) + " frames of " +
        std::to_string (meta->n_planes) + " planes";
  if (meta->width < (guint) GST_VIDEO_INFO_WIDTH (info) ||
      meta->height < (guint) GST_VIDEO_INFO_HEIGHT (info))
    return "its video meta describes frames of " + std::to_string (meta->width)
        + "x" + std::to_string (meta->height);
  return std::string ();
}

/* Why gst_video_frame_map refused @buf: for a video meta, the first plane
 * that starts past the end of the buffer (a plane that starts inside it
 * and runs past is planes_overflow's); without one, the buffer's size
 * against the caps'. */
std::string
map_refusal (const GstVideoMeta * meta, GstBuffer * buf,
    const GstVideoInfo * info)
{
  const gsize size = gst_buffer_get_size (buf);
  if (!meta)
    return "buffer of " + std::to_string (size) + " bytes, caps need " +
        std::to_string (GST_VIDEO_INFO_SIZE (info));
  for (guint p = 0; p < meta->n_planes; ++p)
    if (meta->offset[p] >= size)
      return "plane " + std::to_string (p) + " of its video meta starts at "
          "byte " + std::to_string (meta->offset[p]) + ", so the buffer needs "
          "at least " + std::to_string (meta->offset[p] + 1) + " bytes but "
          "holds " + std::to_string (size) + " (" +
          std::to_string (meta->offset[p] + 1 - size) + " short)";
  return "the memory of its video meta's planes could not be mapped";
}

cudafilters::SampleLayout
component_layout (const GstVideoInfo * info, guint comp)
{
  cudafilters::SampleLayout l;
  l.bits = GST_VIDEO_INFO_COMP_DEPTH (info, comp);
  l.bytes = l.bits > 8 ? 2 : 1;
  l.shift = GST_VIDEO_FORMAT_INFO_SHIFT (info->finfo, comp);
  return l;
}

}  // namespace

GstCudaFiltersFrame::~GstCudaFiltersFrame ()
{
  if (mapped_)
    gst_video_frame_unmap (&frame_);
}

bool
GstCudaFiltersFrame::map (const GstVideoInfo & info, GstBuffer * buf,
    GstMapFlags flags, std::string & why)
{
  const GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  why = meta ? video_meta_mismatch (meta, &info) : std::string ();
  if (!why.empty ())
    return false;
  if (!gst_video_frame_map (&frame_, &info, buf, flags)) {
    why = map_refusal (meta, buf, &info);
    return false;
  }
  mapped_ = true;
  frame_.info.width = GST_VIDEO_INFO_WIDTH (&info);
  frame_.info.height = GST_VIDEO_INFO_HEIGHT (&info);
  packed_ = gst_cuda_filters_packed_pixels (&frame_.info, &pixels_);
  why = planes_overflow ();
  if (why.empty ())
    return true;
  gst_video_frame_unmap (&frame_);
  mapped_ = false;
  return false;
}

/* Why a plane, as the element reads or writes it (rows of the negotiated
 * width, COMP_HEIGHT rows, the frame's strides), does not lie inside the
 * memory mapped for it; empty when every plane does. A video meta may say
 * anything: gst_video_frame_map checks only the buffer's size, and only for
 * buffers without one. */
std::string
GstCudaFiltersFrame::planes_overflow () const
{
  for (guint p = 0; p < n_planes (); ++p) {
    /* Without a meta, every plane lies in the one mapping of the buffer. */
    const GstMapInfo & map = frame_.meta ? frame_.map[p] : frame_.map[0];
    const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame_, p);
    /* A 4:2:2 row of odd width ends with a whole group of two pixels. */
    const guint64 row_bytes = packed_ ? cudafilters::packed_row_bytes (pixels_) :
        (guint64) GST_VIDEO_FRAME_COMP_WIDTH (&frame_, p) *
        GST_VIDEO_FRAME_COMP_PSTRIDE (&frame_, p);
    const guint64 rows = GST_VIDEO_FRAME_COMP_HEIGHT (&frame_, p);
    const guint8 *start = static_cast < const guint8 *>(
        GST_VIDEO_FRAME_PLANE_DATA (&frame_, p));
    const std::string plane = "plane " + std::to_string (p);
    if (stride < 0 || (guint64) stride < row_bytes)
      return plane + ": stride " + std::to_string (stride) +
          " is shorter than a row of " + std::to_string (row_bytes) + " bytes";
    if (start < map.data || start > map.data + map.size)
      return plane + " starts outside the memory mapped for it";
    const guint64 needed = (guint64) stride * (rows - 1) + row_bytes;
    const guint64 available = (guint64) (map.data + map.size - start);
    if (needed > available)
      return plane + " needs " + std::to_string (needed) + " bytes (" +
          std::to_string (rows) + " rows of stride " + std::to_string (stride) +
          ") from offset " + std::to_string (start - map.data) + ", but its "
          "memory holds " + std::to_string (map.size) + " bytes";
  }
  return std::string ();
}

cudafilters::ConstPlane
GstCudaFiltersFrame::plane (guint p) const
{
  return cudafilters::ConstPlane (static_cast < const uint8_t *>(
          GST_VIDEO_FRAME_PLANE_DATA (&frame_, p)),
      GST_VIDEO_FRAME_PLANE_STRIDE (&frame_, p),
      GST_VIDEO_FRAME_COMP_WIDTH (&frame_, p),
      GST_VIDEO_FRAME_COMP_HEIGHT (&frame_, p),
      gst_cuda_filters_sample_layout (&frame_.info));
}

cudafilters::ConstPlane
GstCudaFiltersFrame::luma () const
{
  if (!packed_)
    return plane (0);
  return cudafilters::ConstPlane (static_cast < const uint8_t *>(
          GST_VIDEO_FRAME_PLANE_DATA (&frame_, 0)),
      GST_VIDEO_FRAME_PLANE_STRIDE (&frame_, 0),
      (int) cudafilters::packed_row_bytes (pixels_),
      GST_VIDEO_FRAME_HEIGHT (&frame_));
}

void
GstCudaFiltersFrame::carried_from (const GstCudaFiltersFrame & in,
    cudafilters::CarriedPlanes & carried)
{
  carried.clear ();
  for (guint p = 1; p < in.n_planes (); ++p) {
    cudafilters::ConstPlane src = in.plane (p);
    cudafilters::Plane dst = cudafilters::writable (plane (p));
    /* Rows in bytes: interleaved chroma (NV12) has 2 bytes per sample. */
    const gint bytes = GST_VIDEO_FRAME_COMP_WIDTH (&in.frame_, p) *
        GST_VIDEO_FRAME_COMP_PSTRIDE (&in.frame_, p);
    src.width = dst.width = bytes;
    src.samples = dst.samples = cudafilters::SampleLayout {
    };
    carried.push_back ({src, dst});
  }
}

void
GstCudaFiltersFrame::copy_plane_from (const GstCudaFiltersFrame & in, guint p)
{
  gst_video_frame_copy_plane (&frame_, &in.frame_, p);
}

/* Where component @comp starts. Where U and V interleave in one plane,
 * the second of them starts one sample after the first: GStreamer 1.22's
 * format table puts P010_10LE's and P016_LE's V one byte after U instead of
 * two (its poffset), so only the order of the offsets is taken from it. */
cudafilters::ConstPlane
GstCudaFiltersFrame::component (guint comp) const
{
  const GstVideoInfo *info = &frame_.info;
  const guint plane = GST_VIDEO_INFO_COMP_PLANE (info, comp);
  const uint8_t *base = static_cast < const uint8_t *>(
      GST_VIDEO_FRAME_PLANE_DATA (&frame_, plane));
  const uint8_t *data;
  if (comp == 0 || GST_VIDEO_INFO_COMP_PLANE (info, 1) !=
      GST_VIDEO_INFO_COMP_PLANE (info, 2)) {
    data = base + GST_VIDEO_INFO_COMP_POFFSET (info, comp);
  } else {
    const guint other = comp == 1 ? 2 : 1;
    const bool second = GST_VIDEO_INFO_COMP_POFFSET (info, comp) >
        GST_VIDEO_INFO_COMP_POFFSET (info, other);
    data = base + (second ? component_layout (info, comp).bytes : 0);
  }
  return cudafilters::ConstPlane (data,
      GST_VIDEO_FRAME_COMP_STRIDE (&frame_, comp),
      GST_VIDEO_FRAME_COMP_WIDTH (&frame_, comp),
      GST_VIDEO_FRAME_COMP_HEIGHT (&frame_, comp),
      component_layout (info, comp));
}

cudafilters::FramePlanes
GstCudaFiltersFrame::components () const
{
  cudafilters::FramePlanes f;
  if (packed_) {
    f.luma = luma ();
    return f;
  }
  f.luma = component (0);
  if (GST_VIDEO_FRAME_N_COMPONENTS (&frame_) >= 3) {
    f.u = component (1);
    f.v = component (2);
    f.chroma_step = GST_VIDEO_FRAME_COMP_PSTRIDE (&frame_, 1) / f.u.samples.bytes;
  }
  return f;
}

bool
gst_cuda_filters_map_frame (GstElement * element, GstCudaFiltersFrame & frame,
    const GstVideoInfo & info, GstBuffer * buf, GstMapFlags flags)
{
  std::string why;
  if (frame.map (info, buf, flags, why))
    return true;
  /* Written only: an output. Read (and written, in place): an input. */
  if ((flags & GST_MAP_WRITE) && !(flags & GST_MAP_READ)) {
    GST_ELEMENT_ERROR (element, CORE, FAILED,
        ("Output buffer does not hold a %dx%d %s frame.",
            GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info),
            GST_VIDEO_INFO_NAME (&info)), ("%s", why.c_str ()));
  } else {
    GST_ELEMENT_ERROR (element, STREAM, FORMAT,
        ("Input buffer does not hold a %dx%d %s frame.",
            GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info),
            GST_VIDEO_INFO_NAME (&info)), ("%s", why.c_str ()));
  }
  return false;
}
