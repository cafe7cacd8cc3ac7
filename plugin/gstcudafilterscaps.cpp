#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafilterscaps.h"

/* Index arithmetic in the kernels is 32-bit; 2^30 pixels (32768 x 32768)
 * leaves it headroom. */
#define MAX_DIMENSION 32768
#define MAX_PIXELS (G_GINT64_CONSTANT (1) << 30)

/* The caps feature of GStreamer's CUDA memory. */
static const char *const kCudaMemoryFeature = "memory:CUDAMemory";

/* Caps fields shared by every structure of the templates. */
static gchar *
template_caps_fields (const gchar * formats)
{
  return g_strdup_printf ("format = (string) { %s }, "
      "width = (int) [ 1, %d ], height = (int) [ 1, %d ], "
      "framerate = (fraction) [ 0, max ]", formats, MAX_DIMENSION,
      MAX_DIMENSION);
}

void
gst_cuda_filters_base_class_add_pad_templates (GstElementClass * klass)
{
  /* Memory kind is kept: CUDA memory in, CUDA memory out; system memory in,
   * system memory out. Without GStreamer's CUDA library there is no CUDA
   * memory to take. */
  gchar *sysmem = template_caps_fields (GST_CUDA_FILTERS_FORMATS ", "
      GST_CUDA_FILTERS_PACKED_FORMATS ", " GST_CUDA_FILTERS_DEEP_FORMATS);
#ifdef HAVE_GST_CUDA
  gchar *cuda = template_caps_fields (GST_CUDA_FILTERS_CUDA_FORMATS ", "
      GST_CUDA_FILTERS_PACKED_CUDA_FORMATS ", "
      GST_CUDA_FILTERS_DEEP_CUDA_FORMATS);
  gchar *str = g_strdup_printf ("video/x-raw(%s), %s; video/x-raw, %s",
      kCudaMemoryFeature, cuda, sysmem);
  g_free (cuda);
#else
  gchar *str = g_strdup_printf ("video/x-raw, %s", sysmem);
#endif
  GstCaps *caps = gst_caps_from_string (str);
  g_free (str);
  g_free (sysmem);

  gst_element_class_add_pad_template (klass,
      gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (klass,
      gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);
}

GstCaps *
gst_cuda_filters_transform_caps (GstCaps * caps, GstCaps * filter,
    bool prefer_cuda)
{
  if (gst_caps_is_any (caps))
    return filter ? gst_caps_ref (filter) : gst_caps_ref (caps);

  GstCaps *cuda = gst_caps_new_empty ();
  GstCaps *other = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); ++i) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    const bool is_cuda = f && !gst_caps_features_is_any (f) &&
        gst_caps_features_contains (f, kCudaMemoryFeature);
    gst_caps_append_structure_full (is_cuda ? cuda : other,
        gst_structure_copy (gst_caps_get_structure (caps, i)),
        f ? gst_caps_features_copy (f) : nullptr);
  }
  GstCaps *result = prefer_cuda ? gst_caps_merge (cuda, other) :
      gst_caps_merge (other, cuda);
  if (filter) {
    GstCaps *narrowed = gst_caps_intersect_full (result, filter,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (result);
    result = narrowed;
  }
  return result;
}

/* GStreamer's CUDA allocator, from 1.24 on, rounds an odd height up to even
 * for NV12 and the other 4:2:0 formats but not for NV21, so an odd-height
 * NV21 frame in CUDA memory is one chroma row short
 * (gst_cuda_allocator_calculate_alloc_height): upstream's frames would be
 * read, and our own output written, past the end of their memory. */
static bool
cuda_allocator_lacks_a_row (const GstVideoInfo & info)
{
  guint major, minor, micro, nano;
  gst_version (&major, &minor, &micro, &nano);
  return GST_VIDEO_INFO_FORMAT (&info) == GST_VIDEO_FORMAT_NV21 &&
      GST_VIDEO_INFO_HEIGHT (&info) % 2 == 1 && (major > 1 || minor >= 24);
}

static bool
caps_in_cuda_memory (GstCaps * caps)
{
  GstCapsFeatures *features = gst_caps_get_features (caps, 0);
  return features && gst_caps_features_contains (features, kCudaMemoryFeature);
}

bool
gst_cuda_filters_check_caps (GstElement * element, GstCaps * incaps,
    GstCaps * outcaps, GstVideoInfo * info, bool *cuda_caps)
{
  if (!gst_video_info_from_caps (info, incaps)) {
    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION, (nullptr),
        ("invalid input caps %" GST_PTR_FORMAT, incaps));
    return false;
  }
  if (!gst_caps_is_equal (incaps, outcaps)) {
    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION, (nullptr),
        ("output caps %" GST_PTR_FORMAT " differ from input caps", outcaps));
    return false;
  }
  const gint64 pixels = (gint64) GST_VIDEO_INFO_WIDTH (info) *
      GST_VIDEO_INFO_HEIGHT (info);
  if (pixels > MAX_PIXELS) {
    GST_ELEMENT_ERROR (element, STREAM, FORMAT,
        ("Frames of %dx%d are too large (at most %" G_GINT64_FORMAT
            " pixels).", GST_VIDEO_INFO_WIDTH (info),
            GST_VIDEO_INFO_HEIGHT (info), MAX_PIXELS), (nullptr));
    return false;
  }
  *cuda_caps = caps_in_cuda_memory (incaps);
  if (*cuda_caps && cuda_allocator_lacks_a_row (*info)) {
    GST_ELEMENT_ERROR (element, STREAM, FORMAT,
        ("NV21 frames of odd height (%dx%d) cannot be held in CUDA memory "
            "with this GStreamer: its CUDA allocator leaves out the last "
            "chroma row. Use NV12, an even height, or system memory.",
            GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info)),
        ("gst_cuda_allocator_calculate_alloc_height does not round NV21's "
            "height up (GStreamer %s)", gst_version_string ()));
    return false;
  }
  return true;
}
