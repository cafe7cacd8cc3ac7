/**
 * SECTION:element-cudanlm
 * @title: cudanlm
 *
 * Non-local means denoising of 8- to 16-bit frames on an NVIDIA GPU. Each
 * output pixel is the weighted mean of the pixels in a search window around
 * it, weighted by how alike the patches around the two pixels are:
 * w = exp(-max(d2 - 2 sigma^2, 0) / h^2), d2 the mean squared patch
 * difference (box or Gaussian-weighted). Borders are mirrored, so the output
 * has the input's size with no dark or smeared edges.
 *
 * `strength` and `noise-sigma` are in 8-bit units at every depth: on 10- to
 * 16-bit frames (GRAY16_LE, P010_10LE, ...) they are scaled by 2^(b-8)
 * inside, so the same settings denoise a frame and its deeper version
 * alike. Luma is filtered at full precision.
 *
 * The chroma of YUV frames (I420, NV12, P010_10LE, ...) is denoised too, U
 * and V together: each pair of chroma patches gets one weight from their
 * distance over both channels, with `chroma-strength` as h (-1, the
 * default: `strength`; 0 leaves chroma as it is). Patch and search sizes
 * count chroma samples. On video converted from RGB, chroma noise is about
 * half of luma's: a `chroma-strength` of about half `strength` suits it
 * best (docs/cudanlm.md).
 *
 * With `temporal-radius` r > 0 the search spans the 2r + 1 frames around
 * the one denoised. Frame n then leaves once frame n + r has arrived (the
 * element reports r frames of latency) with its own timestamps and flags;
 * the last r frames leave at EOS; a flush drops the frames held, and a caps
 * change, a new segment or a DISCONT buffer starts a new history. Earlier
 * frames stay on the GPU.
 *
 * With `auto-strength` (the default), the element chooses the strength,
 * noise allowance and chroma strength itself, frame by frame, from the
 * noise of the frame (the `strength`, `noise-sigma` and `chroma-strength`
 * properties keep the values given, and are not used):
 * a robust estimate of its standard deviation (Immerkaer's Laplacian over
 * the flat pixels, docs/noise-estimation.md), of luma and of chroma, made
 * on the GPU on the frame's own stream and averaged over time
 * (`noise-smoothing`; frame n is filtered with the average that includes
 * its own estimate). `auto-strength-scale` makes it stronger or weaker. The
 * statistics messages (`post-messages`) carry the estimates as
 * `noise-sigma` and `noise-sigma-chroma`. Setting `strength`,
 * `noise-sigma` or `chroma-strength` (other than 0) turns `auto-strength`
 * off, so that they apply as given: `cudanlm strength=15` filters at 15.
 * Setting `auto-strength=true` afterwards turns it back on.
 * `chroma-strength=0` leaves chroma as it is in both modes.
 *
 * `strength` (h), `chroma-strength` and `noise-sigma` can be changed while
 * playing and are controllable; patch and search sizes can be changed while
 * playing too, `temporal-radius` in the READY state. Without a usable GPU,
 * `backend=auto` runs the same arithmetic on the CPU.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=noisy.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 ! cudanlm ! pngenc ! filesink location=clean.png
 * gst-launch-1.0 filesrc location=noisy.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 ! cudanlm strength=15 ! pngenc ! filesink location=clean.png
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=GRAY8 ! cudanlm ! videoconvert ! autovideosink
 * gst-launch-1.0 filesrc location=thermal.raw ! rawvideoparse format=gray16-le width=640 height=512 ! cudanlm strength=8 ! cudaclahe tiles-x=1 tiles-y=1 clip-limit=4 ! videoconvert ! autovideosink
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=I420 ! cudanlm auto-strength-scale=1.5 ! videoconvert ! autovideosink
 * gst-launch-1.0 filesrc location=night.mp4 ! qtdemux ! h264parse ! nvh264dec ! cudanlm temporal-radius=1 ! cudadownload ! videoconvert ! autovideosink
 * ]|
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudanlm.h"
#include "gstcudafiltersproperties.h"

#include <cudafilters/nlm_cpu.h>
#include <cudafilters/nlm_gpu.h>

GST_DEBUG_CATEGORY_STATIC (gst_cuda_nlm_debug);

#define GST_CAT_DEFAULT gst_cuda_nlm_debug

enum
{
  PROP_0,
  PROP_STRENGTH,
  PROP_PATCH_SIZE,
  PROP_SEARCH_SIZE,
  PROP_NOISE_SIGMA,
  PROP_PATCH_WEIGHTING,
  PROP_CHROMA_STRENGTH,
  PROP_TEMPORAL_RADIUS,
  PROP_AUTO_STRENGTH,
  PROP_AUTO_STRENGTH_SCALE,
  PROP_NOISE_SMOOTHING,
};

typedef enum
{
  GST_CUDA_NLM_PATCH_BOX,
  GST_CUDA_NLM_PATCH_GAUSSIAN,
} GstCudaNlmPatchWeighting;

struct _GstCudaNlm
{
  GstCudaFiltersBase parent;

  /* Under the object lock; always a valid combination. */
  cudafilters::NlmParams params;
};

#define gst_cuda_nlm_parent_class parent_class
G_DEFINE_TYPE (GstCudaNlm, gst_cuda_nlm, GST_TYPE_CUDA_FILTERS_BASE);
GST_ELEMENT_REGISTER_DEFINE (cudanlm, "cudanlm", GST_RANK_NONE,
    GST_TYPE_CUDA_NLM);

GST_CUDA_FILTERS_DEFINE_ENUM_TYPE (GstCudaNlmPatchWeighting,
    gst_cuda_nlm_patch_weighting,
    {GST_CUDA_NLM_PATCH_BOX, "Every patch pixel counts the same", "box"},
    {GST_CUDA_NLM_PATCH_GAUSSIAN,
        "Patch pixels weighted by a Gaussian of their distance from the centre "
          "(standard deviation patch-size / 4)", "gaussian"});

/* The radius is the one the element starts with (temporal-radius is
 * refused while it runs). */
static std::unique_ptr<GstCudaFiltersEngine>
gst_cuda_nlm_create_engine (GstCudaFiltersBase * base)
{
  GstCudaNlm *self = GST_CUDA_NLM (base);
  return gst_cuda_filters_engine_new<cudafilters::NlmCpu, cudafilters::NlmGpu> (
      self->params, self->params.temporal_radius);
}

/* Why @candidate cannot replace @current, with the order of changes that
 * gets there when patch-size and search-size are in each other's way;
 * empty when it can. */
static std::string
nlm_params_refusal (const cudafilters::NlmParams & candidate,
    const cudafilters::NlmParams & current)
{
  std::string error = cudafilters::nlm_params_error (candidate);
  if (error.empty () || candidate.patch_size <= candidate.search_size)
    return error;
  cudafilters::NlmParams ordered = candidate;
  ordered.search_size = candidate.patch_size;
  if (cudafilters::nlm_params_error (ordered).empty ())
    error += candidate.patch_size != current.patch_size ?
        ": raise search-size first" : ": lower patch-size first";
  return error;
}

/* Applies one property change if the resulting parameters are valid;
 * otherwise keeps the current ones and says why. */
template < typename Change > static void
update_params (GstCudaNlm * self, const GParamSpec * pspec,
    const GValue * value, Change change)
{
  gst_cuda_filters_update_params (GST_CUDA_FILTERS_BASE (self), self->params,
      pspec, value, change, nlm_params_refusal);
}

static GParamSpec *auto_strength_pspec;

/* A strength that is set is used: setting strength, noise-sigma or
 * chroma-strength turns auto-strength off (notified, and logged once per
 * change), so that a pipeline written as `cudanlm strength=15` filters at
 * 15. auto-strength=true turns it back on, keeping the values given. */
template < typename Change > static void
give_strength (GstCudaNlm * self, const GParamSpec * pspec,
    const GValue * value, Change change)
{
  const bool was_auto = gst_cuda_filters_snapshot_params (self).auto_strength;
  update_params (self, pspec, value, [&change](cudafilters::NlmParams & p) {
        change (p);
        p.auto_strength = false;});
  if (was_auto && !gst_cuda_filters_snapshot_params (self).auto_strength) {
    GST_INFO_OBJECT (self, "%s set: auto-strength is now off (set "
        "auto-strength=true to turn it back on)", pspec->name);
    g_object_notify_by_pspec (G_OBJECT (self), auto_strength_pspec);
  }
}

/* The properties, each a field of the parameters (patch-weighting: whether
 * patches are Gaussian-weighted). Setting strength, noise-sigma or
 * chroma-strength also turns auto-strength off, and temporal-radius is
 * refused while running: gst_cuda_nlm_set_property sees to those first. */
static const GstCudaFiltersField<cudafilters::NlmParams> kFields[] = {
  gst_cuda_filters_field<&cudafilters::NlmParams::h> (PROP_STRENGTH),
  gst_cuda_filters_field<&cudafilters::NlmParams::patch_size> (PROP_PATCH_SIZE),
  gst_cuda_filters_field<&cudafilters::NlmParams::search_size>
      (PROP_SEARCH_SIZE),
  gst_cuda_filters_field<&cudafilters::NlmParams::noise_sigma>
      (PROP_NOISE_SIGMA),
  {PROP_PATCH_WEIGHTING,
        [](cudafilters::NlmParams & p, const GValue * v) {
          p.gaussian = g_value_get_enum (v) == GST_CUDA_NLM_PATCH_GAUSSIAN;},
        [](const cudafilters::NlmParams & p, GValue * v) {
          g_value_set_enum (v, p.gaussian ? GST_CUDA_NLM_PATCH_GAUSSIAN :
              GST_CUDA_NLM_PATCH_BOX);}},
  gst_cuda_filters_field<&cudafilters::NlmParams::chroma_h>
      (PROP_CHROMA_STRENGTH),
  gst_cuda_filters_field<&cudafilters::NlmParams::temporal_radius>
      (PROP_TEMPORAL_RADIUS),
  gst_cuda_filters_field<&cudafilters::NlmParams::auto_strength>
      (PROP_AUTO_STRENGTH),
  gst_cuda_filters_field<&cudafilters::NlmParams::auto_scale>
      (PROP_AUTO_STRENGTH_SCALE),
  gst_cuda_filters_field<&cudafilters::NlmParams::noise_smoothing>
      (PROP_NOISE_SMOOTHING),
};

static void
gst_cuda_nlm_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaNlm *self = GST_CUDA_NLM (object);

  /* The frames held and the latency reported follow the temporal radius
   * the element started with. */
  if (gst_cuda_filters_refuse_while_running (GST_ELEMENT (self), pspec, value))
    return;
  switch (prop_id) {
    case PROP_STRENGTH:{
      const float h = g_value_get_float (value);
      give_strength (self, pspec, value, [h](cudafilters::NlmParams & p) {
            p.h = h;});
      return;
    }
    case PROP_NOISE_SIGMA:{
      const float s = g_value_get_float (value);
      give_strength (self, pspec, value, [s](cudafilters::NlmParams & p) {
            p.noise_sigma = s;});
      return;
    }
    case PROP_CHROMA_STRENGTH:{
      /* 0 is no strength: it leaves chroma as it is, with automatic
       * strength on luma as well. */
      const float h = g_value_get_float (value);
      auto set = [h](cudafilters::NlmParams & p) {
        p.chroma_h = h;
      };
      if (h == 0.f)
        update_params (self, pspec, value, set);
      else
        give_strength (self, pspec, value, set);
      return;
    }
    default:
      break;
  }
  if (!gst_cuda_filters_set_field (GST_CUDA_FILTERS_BASE (self), self->params,
          kFields, prop_id, value, pspec, nlm_params_refusal))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

/* A chroma-strength given for frames without chroma (gray) is not used:
 * the element says so, and that giving it turned automatic strength off. */
static gboolean
gst_cuda_nlm_check_format (GstCudaFiltersBase * base, const GstVideoInfo * info)
{
  const cudafilters::NlmParams p =
      gst_cuda_filters_snapshot_params (GST_CUDA_NLM (base));
  if (p.chroma_h > 0.f && GST_VIDEO_INFO_IS_GRAY (info))
    GST_ELEMENT_WARNING (base, STREAM, FORMAT,
        ("chroma-strength=%g is not used: %s frames have no chroma.%s",
            p.chroma_h, GST_VIDEO_INFO_NAME (info), p.auto_strength ? "" :
            " Luma is filtered at strength, with auto-strength off."),
        (nullptr));
  return TRUE;
}

static void
gst_cuda_nlm_class_init (GstCudaNlmClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaFiltersBaseClass *filter_class = GST_CUDA_FILTERS_BASE_CLASS (klass);
  /* The engine's defaults are the element's. */
  const cudafilters::NlmParams defaults;
  const GParamFlags live = (GParamFlags) (G_PARAM_READWRITE |
      GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS);
  const GParamFlags controllable = (GParamFlags) (live | GST_PARAM_CONTROLLABLE);

  gobject_class->set_property = gst_cuda_nlm_set_property;
  gobject_class->get_property =
      gst_cuda_filters_get_field_property<GST_CUDA_NLM, kFields>;

  g_object_class_install_property (gobject_class, PROP_STRENGTH,
      g_param_spec_float ("strength", "Strength",
          "Filtering strength h, in 8-bit intensity units (as OpenCV's h) at "
          "every depth: higher removes more noise and more detail. Setting it "
          "turns auto-strength off",
          cudafilters::kNlmMinStrength, cudafilters::kNlmMaxStrength,
          defaults.h, controllable));
  g_object_class_install_property (gobject_class, PROP_PATCH_SIZE,
      g_param_spec_int ("patch-size", "Patch size",
          "Side of the square patches compared (odd, at most search-size)",
          1, cudafilters::kNlmMaxPatchSize, defaults.patch_size, live));
  g_object_class_install_property (gobject_class, PROP_SEARCH_SIZE,
      g_param_spec_int ("search-size", "Search size",
          "Diameter of the disk of offsets searched for similar patches "
          "(odd): offsets within search-size / 2 of the pixel",
          1, cudafilters::kNlmMaxSearchSize, defaults.search_size, live));
  g_object_class_install_property (gobject_class, PROP_NOISE_SIGMA,
      g_param_spec_float ("noise-sigma", "Noise sigma",
          "Standard deviation of the noise, in 8-bit intensity units: patch "
          "distances below 2 sigma^2 count as identical. Setting it turns "
          "auto-strength off", 0.f, 255.f, defaults.noise_sigma,
          controllable));
  g_object_class_install_property (gobject_class, PROP_PATCH_WEIGHTING,
      g_param_spec_enum ("patch-weighting", "Patch weighting",
          "How the pixels of a patch count in the patch distance",
          GST_TYPE_CUDA_NLM_PATCH_WEIGHTING, defaults.gaussian ?
          GST_CUDA_NLM_PATCH_GAUSSIAN : GST_CUDA_NLM_PATCH_BOX, live));
  g_object_class_install_property (gobject_class, PROP_CHROMA_STRENGTH,
      g_param_spec_float ("chroma-strength", "Chroma strength",
          "Filtering strength h for the chroma planes of YUV frames (U and V "
          "together), in 8-bit units: -1 uses strength, 0 leaves chroma as it "
          "is, 0.1 to 255 its own. Setting it to anything but 0 turns "
          "auto-strength off", -1.f, cudafilters::kNlmMaxStrength,
          defaults.chroma_h, controllable));
  g_object_class_install_property (gobject_class, PROP_TEMPORAL_RADIUS,
      g_param_spec_int ("temporal-radius", "Temporal radius",
          "Frames searched before and after the frame denoised (0: each frame "
          "on its own). Each frame leaves once this many later frames have "
          "arrived: the element adds as many frames of latency. Set in the NULL "
          "or READY state",
          0, cudafilters::kNlmMaxTemporalRadius, defaults.temporal_radius,
          (GParamFlags) (G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
              G_PARAM_STATIC_STRINGS)));

  auto_strength_pspec =
      g_param_spec_boolean ("auto-strength", "Automatic strength",
          "Set strength, noise-sigma and chroma-strength from each frame's own "
          "noise, estimated on the GPU and averaged over time (noise-smoothing); "
          "the three properties are then not used, except chroma-strength=0, "
          "which still leaves chroma as it is. Setting strength, noise-sigma "
          "or chroma-strength (other than 0) turns it off; true turns it back "
          "on", defaults.auto_strength, live);
  g_object_class_install_property (gobject_class, PROP_AUTO_STRENGTH,
      auto_strength_pspec);
  g_object_class_install_property (gobject_class, PROP_AUTO_STRENGTH_SCALE,
      g_param_spec_float ("auto-strength-scale", "Automatic strength scale",
          "Multiplies the strengths auto-strength sets: above 1 removes more "
          "noise and more detail, below 1 less",
          cudafilters::kNlmMinAutoScale, cudafilters::kNlmMaxAutoScale,
          defaults.auto_scale, controllable));
  g_object_class_install_property (gobject_class, PROP_NOISE_SMOOTHING,
      g_param_spec_float ("noise-smoothing", "Noise smoothing",
          "Weight of the past in the running average of the noise estimate "
          "that auto-strength follows (0: each frame's own estimate). The "
          "average restarts after a seek, a DISCONT buffer or new caps",
          0.f, cudafilters::kNlmMaxNoiseSmoothing, defaults.noise_smoothing,
          controllable));

  gst_element_class_set_static_metadata (element_class,
      "CUDA non-local means denoising", "Filter/Effect/Video/Hardware",
      "Removes noise from 8- to 16-bit video frames with non-local means on "
      "an NVIDIA GPU", "cudafilters developers");
  gst_cuda_filters_base_class_add_pad_templates (element_class);

  filter_class->create_engine = gst_cuda_nlm_create_engine;
  filter_class->check_format = gst_cuda_nlm_check_format;

  GST_DEBUG_CATEGORY_INIT (gst_cuda_nlm_debug, "cudanlm", 0,
      "CUDA non-local means");
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_NLM_PATCH_WEIGHTING,
      (GstPluginAPIFlags) 0);
}

static void
gst_cuda_nlm_init (GstCudaNlm * self)
{
  self->params = cudafilters::NlmParams ();
}
