/**
 * SECTION:element-cudaclahe
 * @title: cudaclahe
 *
 * Contrast-limited adaptive histogram equalization (CLAHE) of 8- to 16-bit
 * frames on an NVIDIA GPU. The frame is cut into `tiles-x` x `tiles-y` tiles; each
 * tile's histogram is clipped at `clip-limit` times its mean bin count (the
 * excess spread over all bins) and equalized, and every pixel blends the
 * mappings of its four nearest tiles. Local contrast comes up without the
 * noise amplification of global equalization. The output is bit-identical
 * to OpenCV's `cv::createCLAHE(clip-limit, (tiles-x, tiles-y))->apply()`,
 * including frames the grid does not divide: with 256 bins per tile on
 * 8-bit frames and 65536 on 16-bit ones (GRAY16_LE, P016_LE, Y444_16LE), as
 * OpenCV has them. Frames of 10 or 12 bits (P010_10LE, I420_10LE, ...) take
 * the same rule over their 2^b levels.
 *
 * With one tile (`tiles-x=1 tiles-y=1`) this is plateau equalization, the
 * automatic gain control of thermal cameras: the clip limit is the plateau,
 * which keeps a few hot objects or a large uniform background from taking
 * over the output range. With `temporal-smoothing` above
 * 0 each tile's histogram is blended with those of earlier frames, so the
 * mapping changes smoothly over time.
 *
 * Its own properties can change while playing and take effect at the next
 * frame (`backend`, `cuda-device-id` and `cuda-wait` are set before it
 * starts). Without a usable GPU, `backend=auto` runs the same arithmetic on
 * the CPU.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=in.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 ! cudaclahe clip-limit=2 ! pngenc ! filesink location=out.png
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudaclahe tiles-x=8 tiles-y=8 temporal-smoothing=0.8 ! videoconvert ! autovideosink
 * gst-launch-1.0 filesrc location=thermal.raw ! rawvideoparse format=gray16-le width=640 height=512 ! cudaclahe tiles-x=1 tiles-y=1 clip-limit=4 temporal-smoothing=0.9 ! videoconvert ! autovideosink
 * ]|
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaclahe.h"
#include "gstcudafiltersproperties.h"

#include <cudafilters/clahe_cpu.h>
#include <cudafilters/clahe_gpu.h>

GST_DEBUG_CATEGORY_STATIC (gst_cuda_clahe_debug);
#define GST_CAT_DEFAULT gst_cuda_clahe_debug

enum
{
  PROP_0,
  PROP_CLIP_LIMIT,
  PROP_TILES_X,
  PROP_TILES_Y,
  PROP_TEMPORAL_SMOOTHING,
};

struct _GstCudaClahe
{
  GstCudaFiltersBase parent;

  /* Under the object lock; always valid. */
  cudafilters::ClaheParams params;
};

#define gst_cuda_clahe_parent_class parent_class
G_DEFINE_TYPE (GstCudaClahe, gst_cuda_clahe, GST_TYPE_CUDA_FILTERS_BASE);
GST_ELEMENT_REGISTER_DEFINE (cudaclahe, "cudaclahe", GST_RANK_NONE,
    GST_TYPE_CUDA_CLAHE);

static std::unique_ptr<GstCudaFiltersEngine>
gst_cuda_clahe_create_engine (GstCudaFiltersBase * base)
{
  GstCudaClahe *self = GST_CUDA_CLAHE (base);
  return gst_cuda_filters_engine_new<cudafilters::ClaheCpu,
      cudafilters::ClaheGpu> (self->params);
}

/* The properties, each a field of the parameters. */
static const GstCudaFiltersField<cudafilters::ClaheParams> kFields[] = {
  gst_cuda_filters_field<&cudafilters::ClaheParams::clip_limit> (PROP_CLIP_LIMIT),
  gst_cuda_filters_field<&cudafilters::ClaheParams::tiles_x> (PROP_TILES_X),
  gst_cuda_filters_field<&cudafilters::ClaheParams::tiles_y> (PROP_TILES_Y),
  gst_cuda_filters_field<&cudafilters::ClaheParams::temporal_smoothing>
      (PROP_TEMPORAL_SMOOTHING),
};

static void
gst_cuda_clahe_class_init (GstCudaClaheClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaFiltersBaseClass *filter_class = GST_CUDA_FILTERS_BASE_CLASS (klass);
  const cudafilters::ClaheParams defaults;
  const GParamFlags controllable = (GParamFlags) (G_PARAM_READWRITE |
      GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE |
      G_PARAM_STATIC_STRINGS);

  gobject_class->set_property = gst_cuda_filters_set_field_property<
      GST_CUDA_CLAHE, kFields, cudafilters::clahe_params_error>;
  gobject_class->get_property =
      gst_cuda_filters_get_field_property<GST_CUDA_CLAHE, kFields>;

  g_object_class_install_property (gobject_class, PROP_CLIP_LIMIT,
      g_param_spec_double ("clip-limit", "Clip limit",
          "Contrast limit, in multiples of a tile's mean bin count (OpenCV's "
          "clipLimit): counts above it are spread over all bins. 0 does not "
          "clip; 256 never clips an 8-bit tile", 0.0,
          cudafilters::kClaheMaxClipLimit, defaults.clip_limit, controllable));
  g_object_class_install_property (gobject_class, PROP_TILES_X,
      g_param_spec_int ("tiles-x", "Tiles across",
          "Number of tile columns (OpenCV's tileGridSize.width)", 1,
          cudafilters::kClaheMaxTiles, defaults.tiles_x, controllable));
  g_object_class_install_property (gobject_class, PROP_TILES_Y,
      g_param_spec_int ("tiles-y", "Tiles down",
          "Number of tile rows (OpenCV's tileGridSize.height)", 1,
          cudafilters::kClaheMaxTiles, defaults.tiles_y, controllable));
  g_object_class_install_property (gobject_class, PROP_TEMPORAL_SMOOTHING,
      gst_cuda_filters_param_spec_temporal_smoothing ());

  gst_element_class_set_static_metadata (element_class,
      "CUDA CLAHE", "Filter/Effect/Video/Hardware",
      "Contrast-limited adaptive histogram equalization of 8- to 16-bit video "
      "frames on an NVIDIA GPU (bit-identical to OpenCV's CLAHE)",
      "cudafilters developers");
  gst_cuda_filters_base_class_add_pad_templates (element_class);

  filter_class->create_engine = gst_cuda_clahe_create_engine;

  GST_DEBUG_CATEGORY_INIT (gst_cuda_clahe_debug, "cudaclahe", 0,
      "CUDA CLAHE");
}

static void
gst_cuda_clahe_init (GstCudaClahe * self)
{
  self->params = cudafilters::ClaheParams ();
}
