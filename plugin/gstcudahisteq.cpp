/**
 * SECTION:element-cudahisteq
 * @title: cudahisteq
 *
 * Global histogram equalization of video frames on an NVIDIA GPU. The
 * histogram, its prefix sum and the equalization run as kernels chained on
 * one CUDA stream; the host waits once per frame. On 8-bit frames the output
 * is bit-identical to OpenCV's cv::equalizeHist.
 *
 * Frames of 10 to 16 bits (GRAY16_LE, P010_10LE, I420_10LE, ...) are
 * equalized over all 2^b levels of their format with the same rule, 2^b - 1
 * in place of 255. `significant-bits` says how many bits the data really
 * uses, for example 14 for a thermal camera's GRAY16_LE frames: they are
 * then equalized over 16384 levels.
 *
 * With `temporal-smoothing` above 0 the mapping of each frame comes from its
 * histogram blended with those of earlier frames, so a sudden change of
 * brightness fades in over a few frames instead of flickering.
 *
 * Without a usable GPU, `backend=auto` (the default) runs the same algorithm
 * on the CPU and posts a warning on the bus; `backend=cuda` fails to start.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=in.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 ! cudahisteq ! pngenc ! filesink location=out.png
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=GRAY8 ! cudahisteq temporal-smoothing=0.9 ! videoconvert ! autovideosink
 * gst-launch-1.0 filesrc location=thermal.raw ! rawvideoparse format=gray16-le width=640 height=512 ! cudahisteq significant-bits=14 ! videoconvert ! autovideosink
 * ]|
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudahisteq.h"
#include "gstcudafiltersproperties.h"

#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>

GST_DEBUG_CATEGORY_STATIC (gst_cuda_hist_eq_debug);
#define GST_CAT_DEFAULT gst_cuda_hist_eq_debug

enum
{
  PROP_0,
  PROP_TEMPORAL_SMOOTHING,
  PROP_SIGNIFICANT_BITS,
};

struct _GstCudaHistEq
{
  GstCudaFiltersBase parent;

  /* Under the object lock. */
  cudafilters::HistEqParams params;
};

#define gst_cuda_hist_eq_parent_class parent_class
G_DEFINE_TYPE (GstCudaHistEq, gst_cuda_hist_eq, GST_TYPE_CUDA_FILTERS_BASE);
GST_ELEMENT_REGISTER_DEFINE (cudahisteq, "cudahisteq", GST_RANK_NONE,
    GST_TYPE_CUDA_HIST_EQ);

static gboolean
gst_cuda_hist_eq_check_format (GstCudaFiltersBase * base,
    const GstVideoInfo * info)
{
  GstCudaHistEq *self = GST_CUDA_HIST_EQ (base);
  const int bits = gst_cuda_filters_snapshot_params (self).significant_bits;
  const cudafilters::SampleLayout format = gst_cuda_filters_sample_layout (info);
  if (cudafilters::with_significant_bits (format, bits).valid ())
    return TRUE;
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("significant-bits=%d does not fit %s frames.", bits,
          GST_VIDEO_INFO_NAME (info)),
      ("the format has %d bits per sample; significant-bits must be 0 or at "
          "most that (8-bit formats: 0 or 8)", format.bits));
  return FALSE;
}

static std::unique_ptr<GstCudaFiltersEngine>
gst_cuda_hist_eq_create_engine (GstCudaFiltersBase * base)
{
  GstCudaHistEq *self = GST_CUDA_HIST_EQ (base);
  return gst_cuda_filters_engine_new<cudafilters::HistEqCpu,
      cudafilters::HistEqGpu> (self->params);
}

/* The properties, each a field of the parameters. */
static const GstCudaFiltersField<cudafilters::HistEqParams> kFields[] = {
  gst_cuda_filters_field<&cudafilters::HistEqParams::temporal_smoothing>
      (PROP_TEMPORAL_SMOOTHING),
  gst_cuda_filters_field<&cudafilters::HistEqParams::significant_bits>
      (PROP_SIGNIFICANT_BITS),
};

static void
gst_cuda_hist_eq_class_init (GstCudaHistEqClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaFiltersBaseClass *filter_class = GST_CUDA_FILTERS_BASE_CLASS (klass);

  gobject_class->set_property = gst_cuda_filters_set_field_property<
      GST_CUDA_HIST_EQ, kFields, cudafilters::histeq_params_error>;
  gobject_class->get_property =
      gst_cuda_filters_get_field_property<GST_CUDA_HIST_EQ, kFields>;

  g_object_class_install_property (gobject_class, PROP_TEMPORAL_SMOOTHING,
      gst_cuda_filters_param_spec_temporal_smoothing ());
  g_object_class_install_property (gobject_class, PROP_SIGNIFICANT_BITS,
      g_param_spec_int ("significant-bits", "Significant bits",
          "Bits per sample the data really uses, counted from the least "
          "significant bit of the format's samples: frames are equalized over "
          "2^bits levels (14 for 14-bit thermal data in GRAY16_LE). 0 takes "
          "the format's depth. Levels above the range are treated as its "
          "highest. At most the format's depth; 8-bit formats take 0 or 8",
          0, 16, cudafilters::HistEqParams ().significant_bits, (GParamFlags) (G_PARAM_READWRITE |
              GST_PARAM_MUTABLE_READY | G_PARAM_STATIC_STRINGS)));

  gst_element_class_set_static_metadata (element_class,
      "CUDA histogram equalization", "Filter/Effect/Video/Hardware",
      "Equalizes the histogram of 8- to 16-bit video frames on an NVIDIA GPU "
      "(8-bit: bit-identical to OpenCV's equalizeHist)",
      "cudafilters developers");
  gst_cuda_filters_base_class_add_pad_templates (element_class);

  filter_class->create_engine = gst_cuda_hist_eq_create_engine;
  filter_class->check_format = gst_cuda_hist_eq_check_format;
  /* Each sample is mapped on its own: the fields do not mix. */
  filter_class->takes_interlaced = true;

  GST_DEBUG_CATEGORY_INIT (gst_cuda_hist_eq_debug, "cudahisteq", 0,
      "CUDA histogram equalization");
}

static void
gst_cuda_hist_eq_init (GstCudaHistEq * self)
{
  self->params = cudafilters::HistEqParams ();
}
