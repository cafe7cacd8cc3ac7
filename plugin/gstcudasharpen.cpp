/**
 * SECTION:element-cudasharpen
 * @title: cudasharpen
 *
 * Sharpening of 8- to 16-bit frames on an NVIDIA GPU, bit-identical to
 * OpenCV.
 *
 * With `kernel=unsharp` (the default) this is unsharp masking as GIMP and
 * ImageMagick name it: the frame is blurred with a Gaussian of standard
 * deviation `radius`, and each pixel moves away from the blur by `amount`
 * times their difference, unless that difference is below `threshold`
 * levels (which keeps flat, noisy areas as they were). The blur is OpenCV's
 * `cv::GaussianBlur(src, {0, 0}, radius)` and the result
 * `cv::addWeighted(src, 1 + amount, blur, -amount, 0)`, exactly.
 *
 * With `kernel=laplacian-3x3` the frame is filtered with the classic
 * sharpening kernel [0 -1 0; -1 5 -1; 0 -1 0], as OpenCV's `cv::filter2D`
 * computes it; `amount`, `radius` and `threshold` do not apply.
 *
 * On 10- to 16-bit frames (GRAY16_LE, P010_10LE, ...) the arithmetic is
 * OpenCV's on CV_16U, over the format's levels: its Gaussian spans
 * round(8 radius + 1) pixels there (made odd, as OpenCV's), and results saturate at the format's
 * largest level. `threshold` stays in 8-bit levels at every depth (scaled
 * by 2^(b-8) inside), so the same settings work at every depth.
 *
 * Borders are mirrored (BORDER_REFLECT_101). Luma (or gray) is sharpened;
 * chroma is carried unchanged. Its own properties can change while playing
 * and take effect at the next frame (`backend`, `cuda-device-id` and
 * `cuda-wait` are set before it starts). Without a usable GPU, `backend=auto` runs
 * the same arithmetic on the CPU.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=in.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 ! cudasharpen amount=1.5 radius=2 ! pngenc ! filesink location=sharp.png
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudasharpen kernel=laplacian-3x3 ! videoconvert ! autovideosink
 * gst-launch-1.0 filesrc location=scan.raw ! rawvideoparse format=gray16-le width=2048 height=2048 ! cudasharpen amount=0.8 radius=1.5 threshold=2 ! filesink location=sharp.raw
 * ]|
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudasharpen.h"
#include "gstcudafiltersproperties.h"

#include <new>
#include <string>

#include <cudafilters/sharpen_cpu.h>
#include <cudafilters/sharpen_gpu.h>

GST_DEBUG_CATEGORY_STATIC (gst_cuda_sharpen_debug);
#define GST_CAT_DEFAULT gst_cuda_sharpen_debug

enum
{
  PROP_0,
  PROP_KERNEL,
  PROP_AMOUNT,
  PROP_RADIUS,
  PROP_THRESHOLD,
};

struct _GstCudaSharpen
{
  GstCudaFiltersBase parent;

  /* Under the object lock; always valid. */
  cudafilters::SharpenParams params;
};

#define gst_cuda_sharpen_parent_class parent_class
G_DEFINE_TYPE (GstCudaSharpen, gst_cuda_sharpen, GST_TYPE_CUDA_FILTERS_BASE);
GST_ELEMENT_REGISTER_DEFINE (cudasharpen, "cudasharpen", GST_RANK_NONE,
    GST_TYPE_CUDA_SHARPEN);

GST_CUDA_FILTERS_DEFINE_ENUM_TYPE (GstCudaSharpenKernel,
    gst_cuda_sharpen_kernel,
    {(gint) cudafilters::SharpenKernel::kUnsharp,
        "Unsharp masking: src + amount * (src - Gaussian blur), above threshold",
        "unsharp"},
    {(gint) cudafilters::SharpenKernel::kLaplacian3x3,
        "The 3x3 sharpening kernel [0 -1 0; -1 5 -1; 0 -1 0]", "laplacian-3x3"});

static std::unique_ptr<GstCudaFiltersEngine>
gst_cuda_sharpen_create_engine (GstCudaFiltersBase * base)
{
  GstCudaSharpen *self = GST_CUDA_SHARPEN (base);
  return gst_cuda_filters_engine_new<cudafilters::SharpenCpu,
      cudafilters::SharpenGpu> (self->params);
}

/* The properties, each a field of the parameters. */
static const GstCudaFiltersField<cudafilters::SharpenParams> kFields[] = {
  gst_cuda_filters_field<&cudafilters::SharpenParams::kernel> (PROP_KERNEL),
  gst_cuda_filters_field<&cudafilters::SharpenParams::amount> (PROP_AMOUNT),
  gst_cuda_filters_field<&cudafilters::SharpenParams::radius> (PROP_RADIUS),
  gst_cuda_filters_field<&cudafilters::SharpenParams::threshold> (PROP_THRESHOLD),
};

static void
gst_cuda_sharpen_class_init (GstCudaSharpenClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaFiltersBaseClass *filter_class = GST_CUDA_FILTERS_BASE_CLASS (klass);
  const cudafilters::SharpenParams defaults;
  const GParamFlags controllable = (GParamFlags) (G_PARAM_READWRITE |
      GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE |
      G_PARAM_STATIC_STRINGS);

  gobject_class->set_property = gst_cuda_filters_set_field_property<
      GST_CUDA_SHARPEN, kFields, cudafilters::sharpen_params_error>;
  gobject_class->get_property =
      gst_cuda_filters_get_field_property<GST_CUDA_SHARPEN, kFields>;

  g_object_class_install_property (gobject_class, PROP_KERNEL,
      g_param_spec_enum ("kernel", "Kernel",
          "How to sharpen: unsharp masking, or the 3x3 sharpening kernel",
          GST_TYPE_CUDA_SHARPEN_KERNEL, (gint) defaults.kernel, controllable));
  g_object_class_install_property (gobject_class, PROP_AMOUNT,
      g_param_spec_double ("amount", "Amount",
          "How far each pixel moves away from the blur, in multiples of "
          "their difference (unsharp only)", 0.0,
          cudafilters::kSharpenMaxAmount, defaults.amount, controllable));
  g_object_class_install_property (gobject_class, PROP_RADIUS,
      g_param_spec_double ("radius", "Radius",
          "Standard deviation of the Gaussian blur, in pixels; the blur "
          "spans round(6 radius + 1) pixels made odd, round(8 radius + 1) "
          "on 10- to 16-bit frames (unsharp only)",
          cudafilters::kSharpenMinRadius, cudafilters::kSharpenMaxRadius,
          defaults.radius, controllable));
  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
      g_param_spec_int ("threshold", "Threshold",
          "Pixels that differ from the blur by fewer levels than this are "
          "left as they are, in 8-bit levels at every depth (unsharp only)", 0,
          cudafilters::kSharpenMaxThreshold, defaults.threshold,
          controllable));

  gst_element_class_set_static_metadata (element_class,
      "CUDA sharpen", "Filter/Effect/Video/Hardware",
      "Sharpens 8- to 16-bit video frames by unsharp masking or a 3x3 kernel "
      "on an NVIDIA GPU (bit-identical to OpenCV)", "cudafilters developers");
  gst_cuda_filters_base_class_add_pad_templates (element_class);

  filter_class->create_engine = gst_cuda_sharpen_create_engine;

  GST_DEBUG_CATEGORY_INIT (gst_cuda_sharpen_debug, "cudasharpen", 0,
      "CUDA sharpen");
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_SHARPEN_KERNEL,
      (GstPluginAPIFlags) 0);
}

static void
gst_cuda_sharpen_init (GstCudaSharpen * self)
{
  self->params = cudafilters::SharpenParams ();
}
