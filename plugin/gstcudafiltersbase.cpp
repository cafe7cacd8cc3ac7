#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersbase.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include <atomic>
#include <cstring>
#include <deque>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <cudafilters/cuda_check.h>
#include "gstcudafilterscontext.h"
#include "gstcudafiltershostallocator.h"
#include "gstcudafiltersstreams.h"
#include <cudafilters/frame_store.h>
#include <cudafilters/frame_window.h>
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/gpu_window_runner.h>
#include <cudafilters/plane_levels.h>

GST_DEBUG_CATEGORY_STATIC (gst_cuda_filters_base_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_base_debug

enum
{
  PROP_0,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_POST_MESSAGES,
  PROP_MESSAGE_INTERVAL,
};

#define DEFAULT_BACKEND GST_CUDA_FILTERS_BACKEND_AUTO
#define DEFAULT_DEVICE_ID -1
#define DEFAULT_POST_MESSAGES FALSE
#define DEFAULT_MESSAGE_INTERVAL (GST_SECOND / 10)

/* Index arithmetic in the kernels is 32-bit; 2^30 pixels (32768 x 32768)
 * leaves it headroom. */
#define MAX_DIMENSION 32768
#define MAX_PIXELS (G_GINT64_CONSTANT (1) << 30)

static gboolean cuda_library_loaded = FALSE;

void
gst_cuda_filters_set_cuda_loaded (gboolean loaded)
{
  cuda_library_loaded = loaded;
}

namespace {

using ScopedCudaContext = GstCudaFiltersScopedContext;

/* The caps feature of GStreamer's CUDA memory. */
constexpr const char *kCudaMemoryFeature = "memory:CUDAMemory";

bool
is_cuda_memory (GstBuffer * buffer)
{
#ifdef HAVE_GST_CUDA
  return gst_is_cuda_memory (gst_buffer_peek_memory (buffer, 0));
#else
  (void) buffer;
  return false;
#endif
}

/* The flag that maps CUDA memory for the GPU (none without such memory). */
GstMapFlags
cuda_map_flag ()
{
#ifdef HAVE_GST_CUDA
  return (GstMapFlags) GST_MAP_CUDA;
#else
  return (GstMapFlags) 0;
#endif
}

/* What the element holds while it runs on the GPU. Created and destroyed with
 * the element's CUDA context current. */
struct GpuState
{
  explicit GpuState (const GstCudaFiltersContext & context) : streams (context) {}

  /* Declared before the runners, which are destroyed first. */
  GstCudaFiltersStreams streams;
  cudafilters::GpuFrameRunner runner;
  std::unique_ptr<cudafilters::GpuPlaneFilter> filter;
  /* Whole-frame filters instead of `filter`; the runner holds their history. */
  std::unique_ptr<cudafilters::GpuWindowFilter> window_filter;
  std::unique_ptr<cudafilters::GpuWindowRunner> window_runner;
  /* The chroma planes of the current device frame; kept so that its storage
   * is reused from frame to frame. */
  cudafilters::CarriedPlanes carried;
  /* Copies of the planes of frames in another device's memory. */
  std::vector<cudafilters::DevicePlane> staging;
};

bool
env_flag (const gchar * name)
{
  const gchar *v = g_getenv (name);
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

/* With CUDAFILTERS_POISON_OUTPUT, system-memory outputs are filled with the
 * engine's poison byte before each frame (the engine does the same on the
 * device), so that samples a filter fails to write show in tests. */
void
poison_host_plane (cudafilters::Plane p)
{
  for (int y = 0; y < p.height; ++y)
    memset (p.data + static_cast < size_t > (y) * p.stride,
        cudafilters::kPoisonByte, p.row_bytes ());
}

}  // namespace

struct GstCudaFiltersBasePrivate
{
  /* Settings, under the object lock. */
  GstCudaFiltersBackend backend = DEFAULT_BACKEND;
  gint device_id = DEFAULT_DEVICE_ID;
  bool post_messages = DEFAULT_POST_MESSAGES;
  GstClockTime message_interval = DEFAULT_MESSAGE_INTERVAL;

  /* Streaming state. */
  GstCudaFiltersContext context;
  std::unique_ptr<GpuState> gpu;
  /* finfo null until the first caps. */
  GstVideoInfo info = {};
  /* Negotiated video/x-raw(memory:CUDAMemory): frames stay on the GPU. */
  bool cuda_caps = false;
  bool poison_outputs = env_flag ("CUDAFILTERS_POISON_OUTPUT");
  /* Wait for every frame in CUDA memory before pushing it, as with
   * GStreamer 1.22: the comparison point for tests and benchmarks. */
  bool host_sync = env_flag ("CUDAFILTERS_HOST_SYNC");
  /* Tests of frames in another device's memory on a one-GPU host: CUDA
   * memory of any other context counts as another device's. */
  bool other_device_for_tests = env_flag ("CUDAFILTERS_TEST_OTHER_DEVICE");
  /* A CUDA failure was posted as an element error: not again at stop. */
  bool gpu_error_posted = false;
  /* The next frame starts a new history (set from flushing threads too). */
  std::atomic<bool> restart_history { true };
  /* Running time of the last statistics message; NONE: none since the
   * start or the last flush. */
  GstClockTime last_message = GST_CLOCK_TIME_NONE;

  /* Whole-frame filters: the window radius, the frames held on the CPU
   * path (on the GPU path GpuState's runner holds them), and the metadata
   * of the frames not yet filtered, oldest first (buffers without memory:
   * upstream's buffers are released as soon as their frame is copied). */
  std::atomic<int> radius { 0 };
  cudafilters::FrameWindow cpu_window;
  cudafilters::HostFrameStore cpu_frames;
  std::deque<GstBuffer *> waiting;
  /* Duration of the last input frame: the latency unit when the caps have
   * no frame rate. */
  GstClockTime last_duration = GST_CLOCK_TIME_NONE;
};

#define gst_cuda_filters_base_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstCudaFiltersBase, gst_cuda_filters_base,
    GST_TYPE_BASE_TRANSFORM);

static GstCudaFiltersBasePrivate *
get_priv (GstCudaFiltersBase * self)
{
  return static_cast < GstCudaFiltersBasePrivate * >(
      gst_cuda_filters_base_get_instance_private (self));
}

static bool
is_window_filter (GstCudaFiltersBase * self)
{
  return GST_CUDA_FILTERS_BASE_GET_CLASS (self)->filter_window_cpu != nullptr;
}

static void window_reset (GstCudaFiltersBase * self);

GType
gst_cuda_filters_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_FILTERS_BACKEND_AUTO,
        "The GPU when one is usable, otherwise the CPU (with a warning)", "auto"},
    {GST_CUDA_FILTERS_BACKEND_CUDA, "The GPU; fail to start without one", "cuda"},
    {GST_CUDA_FILTERS_BACKEND_CPU, "The CPU", "cpu"},
    {0, nullptr, nullptr},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaFiltersBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

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
gst_cuda_filters_base_class_add_pad_templates (GstElementClass * klass,
    const gchar * formats, const gchar * cuda_formats)
{
  /* Memory kind is kept: CUDA memory in, CUDA memory out; system memory in,
   * system memory out. Without GStreamer's CUDA library there is no CUDA
   * memory to take. */
  gchar *sysmem = template_caps_fields (formats);
#ifdef HAVE_GST_CUDA
  gchar *cuda = template_caps_fields (cuda_formats);
  gchar *str = g_strdup_printf ("video/x-raw(%s), %s; video/x-raw, %s",
      kCudaMemoryFeature, cuda, sysmem);
  g_free (cuda);
#else
  (void) cuda_formats;
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

GParamSpec *
gst_cuda_filters_param_spec_temporal_smoothing (void)
{
  return g_param_spec_double ("temporal-smoothing", "Temporal smoothing",
      "Weight of earlier frames in the histograms the mapping comes from "
      "(exponential moving average): 0 maps every frame on its own, higher "
      "values let changes of brightness fade in over more frames instead of "
      "flickering; 1 holds the first frame's mapping. Restarts on new caps, a "
      "flush, a seek and a DISCONT buffer",
      0.0, 1.0, 0.0, (GParamFlags) (G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE |
          G_PARAM_STATIC_STRINGS));
}

/* Posts a CUDA failure as an element error, once until the next start. */
static void
post_gpu_error (GstCudaFiltersBase * self, const std::exception & e)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  if (priv->gpu_error_posted)
    return;
  priv->gpu_error_posted = true;
  GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("CUDA processing failed."),
      ("%s", e.what ()));
}

/* Waits for every frame queued on the GPU. A failure there (a fault in a
 * frame already pushed) is an element error. */
static bool
finish_gpu_work (GstCudaFiltersBase * self)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  if (!priv->gpu)
    return true;
  ScopedCudaContext scope (priv->context);
  try {
    priv->gpu->runner.synchronize ();
    if (priv->gpu->window_runner)
      priv->gpu->window_runner->synchronize ();
  } catch (const std::exception & e) {
    post_gpu_error (self, e);
    return false;
  }
  return true;
}

/* Frees the GPU state (in its context) and drops the context; with
 * @report, frames still queued that failed are an error. */
static void
close_gpu (GstCudaFiltersBase * self, bool report = true)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);

  if (priv->gpu) {
    if (report)
      finish_gpu_work (self);
    ScopedCudaContext scope (priv->context);
    priv->gpu.reset ();
  }
  priv->context.close ();
}

/* Creates stream and engine in priv->context. On failure drops the context
 * and says why in @why. */
static bool
create_gpu_state (GstCudaFiltersBase * self, std::string & why)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstCudaFiltersBaseClass *klass = GST_CUDA_FILTERS_BASE_GET_CLASS (self);

  ScopedCudaContext scope (priv->context);
  if (!scope.pushed ()) {
    why = "the CUDA context could not be made current";
    priv->context.close ();
    return false;
  }
  try {
    auto gpu = std::make_unique < GpuState > (priv->context);
    if (is_window_filter (self)) {
      gpu->window_filter = klass->create_gpu_window_filter (self);
      gpu->window_runner = std::make_unique < cudafilters::GpuWindowRunner > ();
      gpu->window_runner->reset (priv->radius);
    } else {
      gpu->filter = klass->create_gpu_filter (self);
    }
    if (GST_VIDEO_INFO_WIDTH (&priv->info) > 0)
      gpu->runner.reserve (GST_VIDEO_INFO_WIDTH (&priv->info),
          GST_VIDEO_INFO_HEIGHT (&priv->info),
          GST_VIDEO_INFO_COMP_PSTRIDE (&priv->info, 0));
    priv->gpu = std::move (gpu);
  } catch (const std::exception & e) {
    why = e.what ();
    priv->gpu.reset ();
  }
  if (!priv->gpu) {
    priv->context.close ();
    return false;
  }
  return true;
}

/* Brings up the GPU path: context, stream, engine. On failure leaves nothing
 * behind and says why in @why. */
static bool
open_gpu (GstCudaFiltersBase * self, gint device_id, std::string & why)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);

  if (!cuda_library_loaded) {
    why = "the CUDA driver library (libcuda.so.1) could not be loaded";
    return false;
  }
  if (!priv->context.open (GST_ELEMENT (self), device_id, why))
    return false;
  /* A context shared with other elements (GstContext) stays unusable after a
   * fault in any of them: every call in it fails. */
  std::string fault;
  if (!priv->context.usable (fault)) {
    if (!priv->context.renew (GST_ELEMENT (self), why)) {
      why = "the CUDA context shared with other elements is unusable after an "
          "earlier fault (" + fault + "), and a new one could not be created: "
          + why;
      return false;
    }
    GST_ELEMENT_WARNING (self, RESOURCE, FAILED,
        ("The CUDA context shared with other elements is unusable after an "
            "earlier fault: this element continues in a new one."),
        ("%s", fault.c_str ()));
  }

  return create_gpu_state (self, why);
}

static gboolean
gst_cuda_filters_base_start (GstBaseTransform * trans)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);

  GST_OBJECT_LOCK (self);
  GstCudaFiltersBackend backend = priv->backend;
  gint device_id = priv->device_id;
  GST_OBJECT_UNLOCK (self);

  priv->restart_history = true;
  priv->last_message = GST_CLOCK_TIME_NONE;
  priv->gpu_error_posted = false;
  /* The radius in use until the next start (temporal-radius is refused
   * while running). */
  GstCudaFiltersBaseClass *klass = GST_CUDA_FILTERS_BASE_GET_CLASS (self);
  priv->radius = is_window_filter (self) && klass->window_radius ?
      (int) klass->window_radius (self) : 0;
  window_reset (self);
  if (backend == GST_CUDA_FILTERS_BACKEND_CPU) {
    GST_INFO_OBJECT (self, "running on the CPU (backend=cpu)");
    return TRUE;
  }

  std::string why;
  if (open_gpu (self, device_id, why)) {
    GST_INFO_OBJECT (self, "running on the GPU");
    return TRUE;
  }

  if (backend == GST_CUDA_FILTERS_BACKEND_CUDA) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No usable CUDA device (backend=cuda)."), ("%s", why.c_str ()));
    return FALSE;
  }
  GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
      ("No usable CUDA device: filtering on the CPU instead."),
      ("%s", why.c_str ()));
  return TRUE;
}

static gboolean
gst_cuda_filters_base_stop (GstBaseTransform * trans)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  close_gpu (self);
  window_reset (self);
  return TRUE;
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

static gboolean
gst_cuda_filters_base_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstVideoInfo info;

  if (!gst_video_info_from_caps (&info, incaps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (nullptr),
        ("invalid input caps %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  if (!gst_caps_is_equal (incaps, outcaps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (nullptr),
        ("output caps %" GST_PTR_FORMAT " differ from input caps", outcaps));
    return FALSE;
  }
  const gint64 pixels = (gint64) GST_VIDEO_INFO_WIDTH (&info) *
      GST_VIDEO_INFO_HEIGHT (&info);
  if (pixels > MAX_PIXELS) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Frames of %dx%d are too large (at most %" G_GINT64_FORMAT
            " pixels).", GST_VIDEO_INFO_WIDTH (&info),
            GST_VIDEO_INFO_HEIGHT (&info), MAX_PIXELS), (nullptr));
    return FALSE;
  }
  GstCudaFiltersBaseClass *klass = GST_CUDA_FILTERS_BASE_GET_CLASS (self);
  if (klass->check_format && !klass->check_format (self, &info))
    return FALSE;
  const bool cuda_caps = caps_in_cuda_memory (incaps);
  if (cuda_caps && cuda_allocator_lacks_a_row (info)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("NV21 frames of odd height (%dx%d) cannot be held in CUDA memory "
            "with this GStreamer: its CUDA allocator leaves out the last "
            "chroma row. Use NV12, an even height, or system memory.",
            GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info)),
        ("gst_cuda_allocator_calculate_alloc_height does not round NV21's "
            "height up (GStreamer %s)", gst_version_string ()));
    return FALSE;
  }

  if (priv->gpu) {
    ScopedCudaContext scope (priv->context);
    try {
      priv->gpu->runner.reserve (GST_VIDEO_INFO_WIDTH (&info),
          GST_VIDEO_INFO_HEIGHT (&info), GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0));
    } catch (const std::exception & e) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not allocate GPU memory for %dx%d frames.",
              GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info)),
          ("%s", e.what ()));
      return FALSE;
    }
  }

  /* Renegotiation with the same frames keeps a window filter's history;
   * new frames come after a CAPS event, which drained it. */
  const bool new_frames = priv->info.finfo == nullptr ||
      !gst_video_info_is_equal (&info, &priv->info);
  GST_OBJECT_LOCK (self);
  priv->info = info;
  GST_OBJECT_UNLOCK (self);
  priv->restart_history = true;
  priv->cuda_caps = cuda_caps;
  if (new_frames)
    window_reset (self);
  GST_DEBUG_OBJECT (self, "configured for %" GST_PTR_FORMAT, incaps);
  return TRUE;
}

/* The memory kind never changes across the element, so the other pad takes
 * the same caps. When frames may be filtered on the GPU, CUDA memory comes
 * first: an upstream that offers both (cudaupload prefers system memory)
 * then hands over device frames instead of a host round trip. Our order
 * wins over @filter's, the filter only narrows. */
static GstCaps *
gst_cuda_filters_base_transform_caps (GstBaseTransform * trans,
    GstPadDirection, GstCaps * caps, GstCaps * filter)
{
  GstCudaFiltersBasePrivate *priv = get_priv (GST_CUDA_FILTERS_BASE (trans));
  GST_OBJECT_LOCK (trans);
  const bool prefer_cuda = priv->backend != GST_CUDA_FILTERS_BACKEND_CPU;
  GST_OBJECT_UNLOCK (trans);

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
  GST_LOG_OBJECT (trans, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps,
      result);
  return result;
}

/* The output size follows from the caps alone. An input buffer that is too
 * small is reported in transform(), as a stream error naming both sizes. */
static gboolean
gst_cuda_filters_base_transform_size (GstBaseTransform *, GstPadDirection,
    GstCaps *, gsize, GstCaps * othercaps, gsize * othersize)
{
  GstVideoInfo info;

  if (!gst_video_info_from_caps (&info, othercaps))
    return FALSE;
  *othersize = GST_VIDEO_INFO_SIZE (&info);
  return TRUE;
}

#ifdef HAVE_GST_CUDA
/* Configures @pool for @caps; with @decide, its stream becomes ours
 * (see GstCudaFiltersStreams), otherwise it gets the one we use. */
static gboolean
configure_cuda_pool (GstBufferPool * pool, GpuState & gpu, bool decide,
    GstCaps * caps, gsize size, guint min, guint max)
{
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (decide)
    gpu.streams.decide (config);
  else
    gpu.streams.offer (config);
  if (gst_buffer_pool_set_config (pool, config))
    return TRUE;
  /* A pool that adjusted the configuration refuses it and keeps the
   * adjusted one, which is then taken. */
  return gst_buffer_pool_set_config (pool, gst_buffer_pool_get_config (pool));
}

/* CUDA caps: keep downstream's pool if it is a CUDA pool of our context,
 * otherwise use one of ours. */
static gboolean
decide_cuda_pool (GstCudaFiltersBase * self, GstQuery * query, GstCaps * caps,
    const GstVideoInfo * info, guint min, guint max)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstBufferPool *pool = nullptr;

  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, nullptr, nullptr,
        nullptr);
  if (pool && (!GST_IS_CUDA_BUFFER_POOL (pool) ||
          GST_CUDA_BUFFER_POOL (pool)->context != priv->context.gst_context ()))
    gst_clear_object (&pool);
  if (!pool)
    pool = gst_cuda_buffer_pool_new (priv->context.gst_context ());

  /* Frames queued on the stream we leave finish before the next one is
   * queued on another. */
  {
    ScopedCudaContext scope (priv->context);
    try {
      priv->gpu->runner.synchronize ();
    } catch (const std::exception & e) {
      GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("CUDA processing failed."),
          ("%s", e.what ()));
      gst_object_unref (pool);
      return FALSE;
    }
  }

  const gsize size = GST_VIDEO_INFO_SIZE (info);
  if (!configure_cuda_pool (pool, *priv->gpu, true, caps, size, min, max)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, (nullptr),
        ("could not configure a CUDA buffer pool"));
    gst_object_unref (pool);
    return FALSE;
  }
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return TRUE;
}

#endif

/* On the GPU path, output buffers come from a pool of pinned host memory so
 * that the download lands in them directly, with no staging copy. */
static gboolean
gst_cuda_filters_base_decide_allocation (GstBaseTransform * trans,
    GstQuery * query)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);

  if (!priv->gpu)
    return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans,
        query);

  GstCaps *caps = nullptr;
  gst_query_parse_allocation (query, &caps, nullptr);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;

  guint min = 0, max = 0;
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, nullptr, nullptr, &min, &max);

#ifdef HAVE_GST_CUDA
  if (priv->cuda_caps)
    return decide_cuda_pool (self, query, caps, &info, min, max);
#endif

  GstBufferPool *pool = gst_cuda_filters_host_pool_new (priv->context, caps,
      min, max);
  if (!pool) {
    GST_WARNING_OBJECT (self, "no pinned output pool, using the default");
    return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans,
        query);
  }
  GstAllocator *allocator = gst_cuda_filters_host_allocator_new (priv->context);
  GstAllocationParams params;
  gst_allocation_params_init (&params);

  const gsize size = GST_VIDEO_INFO_SIZE (&info);
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_set_nth_allocation_param (query, 0, allocator, &params);
  else
    gst_query_add_allocation_param (query, allocator, &params);

  gst_object_unref (allocator);
  gst_object_unref (pool);
  return TRUE;
}

/* On the GPU path, offer upstream a pool of pinned host memory: a producer
 * that takes it writes frames where the upload can read them at full PCIe
 * speed. Producers that bring their own buffers go through staging. */
static gboolean
gst_cuda_filters_base_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);

  /* Chain up first: it forwards the query in passthrough and copies the
   * metas the base class accepts. */
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans,
          decide_query, query))
    return FALSE;
  if (!decide_query)
    return TRUE;

  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr);
  if (!priv->gpu)
    return TRUE;

  GstCaps *caps = nullptr;
  gboolean need_pool = FALSE;
  gst_query_parse_allocation (query, &caps, &need_pool);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;

#ifdef HAVE_GST_CUDA
  if (priv->cuda_caps) {
    if (need_pool) {
      GstBufferPool *pool = gst_cuda_buffer_pool_new (priv->context.gst_context ());
      if (configure_cuda_pool (pool, *priv->gpu, false, caps,
              GST_VIDEO_INFO_SIZE (&info), 0, 0))
        gst_query_add_allocation_pool (query, pool,
            GST_VIDEO_INFO_SIZE (&info), 0, 0);
      gst_object_unref (pool);
    }
    return TRUE;
  }
#endif

  if (need_pool) {
    GstBufferPool *pool = gst_cuda_filters_host_pool_new (priv->context, caps,
        0, 0);
    if (pool) {
      gst_query_add_allocation_pool (query, pool, GST_VIDEO_INFO_SIZE (&info),
          0, 0);
      gst_object_unref (pool);
    }
  }
  GstAllocator *allocator = gst_cuda_filters_host_allocator_new (priv->context);
  gst_query_add_allocation_param (query, allocator, nullptr);
  gst_object_unref (allocator);
  return TRUE;
}

static void
gst_cuda_filters_base_set_context (GstElement * element, GstContext * context)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (element);
  GstCudaFiltersBasePrivate *priv = get_priv (self);

  if (cuda_library_loaded) {
    GST_OBJECT_LOCK (self);
    gint device_id = priv->device_id;
    GST_OBJECT_UNLOCK (self);
    priv->context.handle_set_context (element, context, device_id);
  }

  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static GstClockTime window_latency (GstCudaFiltersBase * self);

static gboolean
gst_cuda_filters_base_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT && cuda_library_loaded &&
      get_priv (self)->context.handle_query (GST_ELEMENT (self), query))
    return TRUE;

  gboolean ret = GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans,
      direction, query);
  /* A window filter holds `radius` frames back. */
  if (ret && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY &&
      direction == GST_PAD_SRC && is_window_filter (self)) {
    gboolean live;
    GstClockTime min, max;
    gst_query_parse_latency (query, &live, &min, &max);
    const GstClockTime ours = window_latency (self);
    GST_DEBUG_OBJECT (self, "adding %" GST_TIME_FORMAT " of latency",
        GST_TIME_ARGS (ours));
    gst_query_set_latency (query, live, min + ours,
        GST_CLOCK_TIME_IS_VALID (max) ? max + ours : max);
  }
  return ret;
}

#ifdef HAVE_GST_CUDA
/* The context of @buffer's CUDA memory when it is another than ours, on a
 * device we may use: we move there (adopt_upstream_context). */
static GstCudaContext *
upstream_context_to_adopt (GstCudaFiltersBase * self, GstBuffer * buffer)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  if (!priv->gpu || !priv->cuda_caps)
    return nullptr;
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  if (!gst_is_cuda_memory (mem))
    return nullptr;
  GstCudaContext *theirs = GST_CUDA_MEMORY_CAST (mem)->context;
  if (theirs == priv->context.gst_context ())
    return nullptr;

  GST_OBJECT_LOCK (self);
  const gint wanted = priv->device_id;
  GST_OBJECT_UNLOCK (self);
  guint their_device = 0;
  g_object_get (theirs, "cuda-device-id", &their_device, nullptr);
  if (priv->other_device_for_tests)
    their_device = (guint) wanted + 1;
  if (wanted >= 0 && their_device != (guint) wanted)
    return nullptr;
  return theirs;
}
#endif

/* Whether @buffer is CUDA memory of another context than ours that we did
 * not adopt: another device's (cuda-device-id names ours). Its frames are
 * copied to our device before they are filtered. */
static bool
on_other_device (GstCudaFiltersBase * self, GstBuffer * buffer)
{
#ifdef HAVE_GST_CUDA
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  return gst_is_cuda_memory (mem) &&
      GST_CUDA_MEMORY_CAST (mem)->context != get_priv (self)->context.gst_context ();
#else
  (void) self;
  (void) buffer;
  return false;
#endif
}

/* Whether @buffer makes us move to another context (and so start a new GPU
 * state, without the frames a window filter holds). */
static gboolean
adopts_upstream_context (GstCudaFiltersBase * self, GstBuffer * buffer)
{
#ifdef HAVE_GST_CUDA
  return upstream_context_to_adopt (self, buffer) != nullptr;
#else
  (void) self;
  (void) buffer;
  return FALSE;
#endif
}

/* CUDA memory from another context on the device we may use: move our GPU
 * state into that context, as nvcodec's filters do, and renegotiate the
 * output pool. */
static void
adopt_upstream_context (GstCudaFiltersBase * self, GstBuffer * buffer)
{
#ifdef HAVE_GST_CUDA
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstCudaContext *theirs = upstream_context_to_adopt (self, buffer);
  if (!theirs)
    return;

  GST_INFO_OBJECT (self, "adopting upstream CUDA context %" GST_PTR_FORMAT,
      theirs);
  close_gpu (self);
  priv->context.adopt (theirs);
  std::string why;
  if (!create_gpu_state (self, why))
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, (nullptr),
        ("could not move to upstream's CUDA context: %s", why.c_str ()));
  gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
#else
  (void) self;
  (void) buffer;
#endif
}

/* A buffer's running and stream time in the current segment; NONE where
 * there is none (no timestamp, outside the segment, or a segment not in
 * time, such as appsrc's default bytes). */
static GstClockTime
running_time_of (GstBaseTransform * trans, GstClockTime pts)
{
  if (trans->segment.format != GST_FORMAT_TIME)
    return GST_CLOCK_TIME_NONE;
  return gst_segment_to_running_time (&trans->segment, GST_FORMAT_TIME, pts);
}

static GstClockTime
stream_time_of (GstBaseTransform * trans, GstClockTime pts)
{
  if (trans->segment.format != GST_FORMAT_TIME)
    return GST_CLOCK_TIME_NONE;
  return gst_segment_to_stream_time (&trans->segment, GST_FORMAT_TIME, pts);
}

static void
gst_cuda_filters_base_before_transform (GstBaseTransform * trans,
    GstBuffer * buffer)
{
  GstClockTime stream_time = stream_time_of (trans, GST_BUFFER_TIMESTAMP (buffer));

  if (GST_CLOCK_TIME_IS_VALID (stream_time))
    gst_object_sync_values (GST_OBJECT (trans), stream_time);

  adopt_upstream_context (GST_CUDA_FILTERS_BASE (trans), buffer);
}

static cudafilters::ConstPlane
frame_plane (const GstVideoFrame * frame, guint plane)
{
  return cudafilters::ConstPlane (static_cast < const uint8_t *>(
          GST_VIDEO_FRAME_PLANE_DATA (frame, plane)),
      GST_VIDEO_FRAME_PLANE_STRIDE (frame, plane),
      GST_VIDEO_FRAME_COMP_WIDTH (frame, plane),
      GST_VIDEO_FRAME_COMP_HEIGHT (frame, plane),
      gst_cuda_filters_sample_layout (&frame->info));
}

static cudafilters::Plane
frame_plane_mut (GstVideoFrame * frame, guint plane)
{
  return cudafilters::writable (frame_plane (frame, plane));
}

/* Runs @work (which enqueues and waits for one frame) in the element's CUDA
 * context, after the subclass has configured its filter; a failure becomes
 * an element error. */
template <typename Work> static GstFlowReturn
run_on_gpu (GstCudaFiltersBase * self, const Work & work)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstCudaFiltersBaseClass *klass = GST_CUDA_FILTERS_BASE_GET_CLASS (self);

  ScopedCudaContext scope (priv->context);
  if (!scope.pushed ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED, (nullptr),
        ("could not make the CUDA context current"));
    return GST_FLOW_ERROR;
  }
  try {
    GpuState & gpu = *priv->gpu;
    if (gpu.filter) {
      if (klass->configure_gpu_filter)
        klass->configure_gpu_filter (self, *gpu.filter);
      if (priv->restart_history.exchange (false))
        gpu.filter->reset_history ();
    } else if (klass->configure_gpu_window_filter) {
      klass->configure_gpu_window_filter (self, *gpu.window_filter);
    }
    work (gpu);
  } catch (const cudafilters::CudaError & e) {
    post_gpu_error (self, e);
    return GST_FLOW_ERROR;
  } catch (const std::exception & e) {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("Processing failed."),
        ("%s", e.what ()));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* Host frames: the kernels read and write pinned frames directly where the
 * filter allows it, otherwise upload, filter, download. */
static GstFlowReturn
filter_on_gpu (GstCudaFiltersBase * self, cudafilters::ConstPlane src,
    cudafilters::Plane dst, cudafilters::FrameLevels * levels)
{
  return run_on_gpu (self, [&](GpuState & gpu) {
        gpu.runner.process_host (*gpu.filter, src, dst, levels);
        GST_LOG_OBJECT (self, "host frame %s", gpu.runner.last_frame_streamed ()
            ? "streamed from and to pinned memory" : "copied in and out");
      });
}

/* Frames in CUDA memory: the filter runs on the mapped device planes, the
 * other planes are copied on the device. Where the memory's streams allow
 * it (gstcudafiltersstreams.h) the frame is only queued; otherwise, and for
 * frames whose statistics are read, it is waited for. */
static GstFlowReturn
filter_device_frames (GstCudaFiltersBase * self, GstBuffer * inbuf,
    GstBuffer * outbuf, GstVideoFrame * in_frame, GstVideoFrame * out_frame,
    cudafilters::FrameLevels * levels)
{
  const bool other_device = on_other_device (self, inbuf);
  const bool may_queue = !levels && !get_priv (self)->host_sync && !other_device;
  bool queued = false;
  GstFlowReturn ret = run_on_gpu (self, [&](GpuState & gpu) {
        /* Another device's planes are copied to ours first (with unified
         * addressing a plain copy crosses devices), after its producer. */
        if (other_device)
          GstCudaFiltersStreams::wait_for_producer (inbuf);
        const guint planes = GST_VIDEO_FRAME_N_PLANES (in_frame);
        if (gpu.staging.size () < planes)
          gpu.staging.resize (planes);
        auto source = [&](guint p, cudafilters::ConstPlane plane) {
          if (!other_device)
            return plane;
          cudafilters::DevicePlane & copy = gpu.staging[p];
          copy.reserve ((int) plane.row_bytes (), plane.height);
          CUDAFILTERS_CHECK (cudaMemcpy2D (copy.data (), copy.pitch (),
                  plane.data, plane.stride, plane.row_bytes (), plane.height,
                  cudaMemcpyDefault));
          plane.data = copy.data ();
          plane.stride = copy.pitch ();
          return plane;
        };
        gpu.carried.clear ();
        for (guint p = 1; p < planes; ++p) {
          cudafilters::ConstPlane src = frame_plane (in_frame, p);
          cudafilters::Plane dst = frame_plane_mut (out_frame, p);
          /* Rows in bytes: interleaved chroma (NV12) has 2 bytes per sample. */
          const gint bytes = GST_VIDEO_FRAME_COMP_WIDTH (in_frame, p) *
              GST_VIDEO_FRAME_COMP_PSTRIDE (in_frame, p);
          src.width = dst.width = bytes;
          src.samples = dst.samples = cudafilters::SampleLayout {
          };
          gpu.carried.push_back ({source (p, src), dst});
        }
        const cudafilters::ConstPlane src = source (0, frame_plane (in_frame,
                0));
        const cudafilters::Plane dst = frame_plane_mut (out_frame, 0);
        /* A copy between device memories returns before it is done, on the
         * legacy stream, which the runner's stream does not wait for. */
        if (other_device)
          CUDAFILTERS_CHECK (cudaStreamSynchronize (nullptr));

        GstCudaFiltersStreams::Placement at;
        if (may_queue)
          at = gpu.streams.place (inbuf, outbuf, gpu.runner);
        queued = at.work != nullptr;
        if (!queued) {
          GstCudaFiltersStreams::wait_for_producer (inbuf);
          gpu.runner.process_device (*gpu.filter, src, dst, gpu.carried,
              levels, GstCudaFiltersStreams::stream_of (outbuf));
          return;
        }
        if (at.work != at.output)
          gpu.runner.order_after (at.output, at.work);
        gpu.runner.enqueue_device (*gpu.filter, src, dst, gpu.carried,
            at.work);
        if (at.work != at.output)
          gpu.runner.order_after (at.work, at.output);
        /* A fault of an earlier frame shows now at the latest: this frame
         * is not pushed. */
        gpu.runner.check_queued_work ();
      });
  if (ret == GST_FLOW_OK && !queued)
    GstCudaFiltersStreams::mark_finished (outbuf);
  GST_LOG_OBJECT (self, "device frame %s", queued ? "queued" : "waited for");
  return ret;
}

/* Whether this frame's statistics go on the bus: the first frame after the
 * start or a flush, then one per message-interval of running time. Frames
 * without a running time each post one. */
static bool
message_due (GstCudaFiltersBase * self, GstBuffer * inbuf)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GST_OBJECT_LOCK (self);
  const bool enabled = priv->post_messages;
  const GstClockTime interval = priv->message_interval;
  GST_OBJECT_UNLOCK (self);
  if (!enabled)
    return false;

  const GstClockTime now = running_time_of (GST_BASE_TRANSFORM (self),
      GST_BUFFER_PTS (inbuf));
  if (!GST_CLOCK_TIME_IS_VALID (now))
    return true;
  if (GST_CLOCK_TIME_IS_VALID (priv->last_message) && now >= priv->last_message
      && now - priv->last_message < interval)
    return false;
  priv->last_message = now;
  return true;
}

static GValue
histogram_value (const uint32_t hist[cudafilters::kHistBins])
{
  GValue array = G_VALUE_INIT;
  gst_value_array_init (&array, cudafilters::kHistBins);
  for (int b = 0; b < cudafilters::kHistBins; ++b) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_UINT);
    g_value_set_uint (&v, hist[b]);
    gst_value_array_append_and_take_value (&array, &v);
  }
  return array;
}

/* An element message named after the element (its factory) with the
 * filtered plane's statistics for the frame in @inbuf. */
static void
post_levels_message (GstCudaFiltersBase * self, GstBuffer * inbuf,
    const cudafilters::FrameLevels & levels)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  const GstClockTime pts = GST_BUFFER_PTS (inbuf);
  const cudafilters::LevelSummary in = cudafilters::summarize_levels (levels.input);
  const cudafilters::LevelSummary out =
      cudafilters::summarize_levels (levels.output);
  GstElementFactory *factory = gst_element_get_factory (GST_ELEMENT (self));
  const gchar *name = factory ? GST_OBJECT_NAME (factory) :
      G_OBJECT_TYPE_NAME (self);

  GstStructure *s = gst_structure_new (name,
      "timestamp", G_TYPE_UINT64, pts,
      "duration", G_TYPE_UINT64, GST_BUFFER_DURATION (inbuf),
      "running-time", G_TYPE_UINT64, running_time_of (trans, pts),
      "stream-time", G_TYPE_UINT64, stream_time_of (trans, pts),
      "input-min", G_TYPE_UINT, (guint) in.min,
      "input-max", G_TYPE_UINT, (guint) in.max,
      "input-mean", G_TYPE_DOUBLE, in.mean,
      "output-min", G_TYPE_UINT, (guint) out.min,
      "output-max", G_TYPE_UINT, (guint) out.max,
      "output-mean", G_TYPE_DOUBLE, out.mean, nullptr);
  GValue hist = histogram_value (levels.input);
  gst_structure_take_value (s, "histogram", &hist);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), s));
}

/* Why a video meta on a buffer cannot describe frames of @info (before
 * mapping, which would only assert on it); empty when it can. */
static std::string
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

/* Why a plane of @frame, as the element reads or writes it (rows of the
 * negotiated width, COMP_HEIGHT rows, the frame's strides), does not lie
 * inside the memory mapped for it; empty when every plane does. A video meta
 * may say anything: gst_video_frame_map checks only the buffer's size, and
 * only for buffers without one. */
static std::string
frame_planes_overflow (const GstVideoFrame * frame)
{
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (frame); ++p) {
    /* Without a meta, every plane lies in the one mapping of the buffer. */
    const GstMapInfo & map = frame->meta ? frame->map[p] : frame->map[0];
    const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, p);
    const guint64 row_bytes = (guint64) GST_VIDEO_FRAME_COMP_WIDTH (frame, p) *
        GST_VIDEO_FRAME_COMP_PSTRIDE (frame, p);
    const guint64 rows = GST_VIDEO_FRAME_COMP_HEIGHT (frame, p);
    const guint8 *start = static_cast < const guint8 *>(
        GST_VIDEO_FRAME_PLANE_DATA (frame, p));
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

/* Maps @buf as a frame of the negotiated caps with @flags: GST_MAP_READ for
 * an input, GST_MAP_WRITE for an output, with the CUDA map flag or not.
 * Frames whose video meta is larger than the caps (padding) are cropped to
 * them. Every plane is checked against the memory it lies in. Posts an error
 * if it cannot map: an input that does not hold such a frame is a stream
 * error. */
static bool
map_frame (GstCudaFiltersBase * self, GstVideoFrame * frame, GstBuffer * buf,
    GstMapFlags flags)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  const GstVideoInfo *info = &priv->info;
  const GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  std::string why = meta ? video_meta_mismatch (meta, info) : std::string ();
  bool mapped = false;
  if (why.empty ()) {
    mapped = gst_video_frame_map (frame, info, buf, flags);
    if (!mapped) {
      why = "buffer of " + std::to_string (gst_buffer_get_size (buf)) +
          " bytes, caps need " + std::to_string (GST_VIDEO_INFO_SIZE (info));
    } else {
      frame->info.width = GST_VIDEO_INFO_WIDTH (info);
      frame->info.height = GST_VIDEO_INFO_HEIGHT (info);
      why = frame_planes_overflow (frame);
    }
  }
  if (why.empty ())
    return true;
  if (mapped)
    gst_video_frame_unmap (frame);
  if (flags & GST_MAP_WRITE) {
    GST_ELEMENT_ERROR (self, CORE, FAILED,
        ("Output buffer does not hold a %dx%d %s frame.",
            GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
            GST_VIDEO_INFO_NAME (info)), ("%s", why.c_str ()));
  } else {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Input buffer does not hold a %dx%d %s frame.",
            GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
            GST_VIDEO_INFO_NAME (info)), ("%s", why.c_str ()));
  }
  return false;
}

static GstFlowReturn
gst_cuda_filters_base_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstCudaFiltersBaseClass *klass = GST_CUDA_FILTERS_BASE_GET_CLASS (self);
  GstVideoFrame in_frame, out_frame;

  /* CUDA memory on the GPU path is mapped as device pointers; anywhere else
   * frames are mapped to host memory (GstCudaMemory downloads itself). */
  const bool on_device = priv->gpu && priv->cuda_caps &&
      is_cuda_memory (inbuf) && is_cuda_memory (outbuf);
  const GstMapFlags device = on_device ? cuda_map_flag () : (GstMapFlags) 0;
  GST_LOG_OBJECT (self, "frame mapped on the %s: input %s memory, output %s "
      "memory", on_device ? "device" : "host",
      is_cuda_memory (inbuf) ? "CUDA" : "host",
      is_cuda_memory (outbuf) ? "CUDA" : "host");

  if (!map_frame (self, &in_frame, inbuf,
          (GstMapFlags) (GST_MAP_READ | device)))
    return GST_FLOW_ERROR;
  if (!map_frame (self, &out_frame, outbuf,
          (GstMapFlags) (GST_MAP_WRITE | device))) {
    gst_video_frame_unmap (&in_frame);
    return GST_FLOW_ERROR;
  }

  if (GST_BUFFER_FLAG_IS_SET (inbuf, GST_BUFFER_FLAG_DISCONT))
    priv->restart_history = true;
  cudafilters::FrameLevels levels;
  cudafilters::FrameLevels *want_levels = message_due (self, inbuf) ? &levels :
      nullptr;

  GstFlowReturn ret;
  if (on_device) {
    ret = filter_device_frames (self, inbuf, outbuf, &in_frame, &out_frame,
        want_levels);
  } else {
    cudafilters::ConstPlane src = frame_plane (&in_frame, 0);
    cudafilters::Plane dst = frame_plane_mut (&out_frame, 0);
    if (priv->poison_outputs)
      poison_host_plane (dst);
    ret = GST_FLOW_OK;
    if (priv->gpu) {
      ret = filter_on_gpu (self, src, dst, want_levels);
    } else {
      if (priv->restart_history.exchange (false) && klass->reset_cpu_history)
        klass->reset_cpu_history (self);
      try {
        klass->filter_cpu (self, src, dst);
      } catch (const std::exception & e) {
        GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("Processing failed."),
            ("%s", e.what ()));
        ret = GST_FLOW_ERROR;
      }
      if (ret == GST_FLOW_OK && want_levels) {
        cudafilters::count_levels_cpu (src, levels.input);
        cudafilters::count_levels_cpu (dst, levels.output);
      }
    }

    /* Only the first (luma or gray) plane is filtered; the others are
     * carried. */
    for (guint p = 1; ret == GST_FLOW_OK &&
        p < GST_VIDEO_FRAME_N_PLANES (&in_frame); ++p)
      gst_video_frame_copy_plane (&out_frame, &in_frame, p);
  }

  gst_video_frame_unmap (&out_frame);
  gst_video_frame_unmap (&in_frame);
  if (ret == GST_FLOW_OK && want_levels)
    post_levels_message (self, inbuf, levels);
  return ret;
}


/* ---- Whole-frame filters with windows of frames (gstcudafiltersbase.h) ---- */

static cudafilters::SampleLayout
component_layout (const GstVideoInfo * info, guint comp)
{
  cudafilters::SampleLayout l;
  l.bits = GST_VIDEO_INFO_COMP_DEPTH (info, comp);
  l.bytes = l.bits > 8 ? 2 : 1;
  l.shift = GST_VIDEO_FORMAT_INFO_SHIFT (info->finfo, comp);
  return l;
}

/* Where component @comp starts. Where U and V interleave in one plane,
 * the second of them starts one sample after the first: GStreamer 1.22's
 * format table puts P010_10LE's and P016_LE's V one byte after U instead of
 * two (its poffset), so only the order of the offsets is taken from it. */
static const uint8_t *
component_data (const GstVideoFrame * frame, guint comp)
{
  const GstVideoInfo *info = &frame->info;
  const guint plane = GST_VIDEO_INFO_COMP_PLANE (info, comp);
  const uint8_t *base = static_cast < const uint8_t *>(
      GST_VIDEO_FRAME_PLANE_DATA (frame, plane));
  if (comp == 0 || GST_VIDEO_INFO_COMP_PLANE (info, 1) !=
      GST_VIDEO_INFO_COMP_PLANE (info, 2))
    return base + GST_VIDEO_INFO_COMP_POFFSET (info, comp);
  const guint other = comp == 1 ? 2 : 1;
  const bool second = GST_VIDEO_INFO_COMP_POFFSET (info, comp) >
      GST_VIDEO_INFO_COMP_POFFSET (info, other);
  return base + (second ? component_layout (info, comp).bytes : 0);
}

static cudafilters::ConstPlane
component_plane (const GstVideoFrame * frame, guint comp)
{
  return cudafilters::ConstPlane (component_data (frame, comp),
      GST_VIDEO_FRAME_COMP_STRIDE (frame, comp),
      GST_VIDEO_FRAME_COMP_WIDTH (frame, comp),
      GST_VIDEO_FRAME_COMP_HEIGHT (frame, comp),
      component_layout (&frame->info, comp));
}

/* Luma and, for YUV formats, U and V: each component where it lies, NV12's
 * U and V interleaved in one plane (two samples apart). */
static cudafilters::FramePlanes
frame_planes (const GstVideoFrame * frame)
{
  cudafilters::FramePlanes f;
  f.luma = component_plane (frame, 0);
  if (GST_VIDEO_FRAME_N_COMPONENTS (frame) >= 3) {
    f.u = component_plane (frame, 1);
    f.v = component_plane (frame, 2);
    f.chroma_step = GST_VIDEO_FRAME_COMP_PSTRIDE (frame, 1) / f.u.samples.bytes;
  }
  return f;
}

static cudafilters::FramePlanesOut
frame_planes_out (GstVideoFrame * frame)
{
  return cudafilters::writable (frame_planes (frame));
}

static void
poison_host_frame (const cudafilters::FramePlanesOut & f)
{
  const cudafilters::FrameBytes bytes (f.as_const ());
  for (int i = 0; i < bytes.count; ++i)
    poison_host_plane (cudafilters::writable (bytes.planes[i]));
}

static const cudafilters::FrameWindow &
window_of (GstCudaFiltersBase * self)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  return priv->gpu ? priv->gpu->window_runner->window () : priv->cpu_window;
}

/* Moves past the next frame without filtering it. */
static void
window_drop_next (GstCudaFiltersBase * self)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  if (priv->gpu)
    priv->gpu->window_runner->drop_next ();
  else
    priv->cpu_window.pop ();
}

/* Whether the next frame can be filtered (draining: no frames follow). */
static bool
window_ready (GstCudaFiltersBase * self, bool draining)
{
  return !get_priv (self)->waiting.empty () &&
      window_of (self).ready (draining);
}

/* Forgets the frames held and their metadata. */
static void
window_reset (GstCudaFiltersBase * self)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  if (!is_window_filter (self))
    return;
  for (GstBuffer *meta : priv->waiting)
    gst_buffer_unref (meta);
  priv->waiting.clear ();
  priv->cpu_window.reset (priv->radius);
  if (priv->gpu) {
    ScopedCudaContext scope (priv->context);
    try {
      priv->gpu->window_runner->reset (priv->radius);
    } catch (const std::exception & e) {
      GST_WARNING_OBJECT (self, "frames held failed: %s", e.what ());
    }
  }
  /* A frame held back cannot be dropped for lateness without changing its
   * neighbours' windows: QoS only without a window. */
  gst_base_transform_set_qos_enabled (GST_BASE_TRANSFORM (self),
      priv->radius == 0);
}

template <typename Work> static GstFlowReturn run_on_gpu (GstCudaFiltersBase *
    self, const Work & work);

/* Copies the frame in @in into the history and keeps its metadata. */
static GstFlowReturn
window_push (GstCudaFiltersBase * self, GstBuffer * in)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  const bool on_device = priv->gpu && priv->cuda_caps && is_cuda_memory (in);
  GstVideoFrame frame;
  if (!map_frame (self, &frame, in, (GstMapFlags) (GST_MAP_READ |
              (on_device ? cuda_map_flag () : 0))))
    return GST_FLOW_ERROR;
  const cudafilters::FramePlanes planes = frame_planes (&frame);
  GstFlowReturn ret = GST_FLOW_OK;
  if (priv->gpu) {
    ret = run_on_gpu (self, [&](GpuState & gpu) {
          if (!on_device) {
            gpu.window_runner->push_host (planes);
            return;
          }
          /* Another device's frame is copied on our stream, after its
           * producer's work on the host. */
          cudaStream_t stream = priv->host_sync || on_other_device (self, in) ?
              nullptr : GstCudaFiltersStreams::stream_of (in);
          if (!stream)
            GstCudaFiltersStreams::wait_for_producer (in);
          gpu.window_runner->push_device (planes, stream);
        });
  } else {
    priv->cpu_frames.store (priv->cpu_window.push (), planes);
  }
  gst_video_frame_unmap (&frame);
  if (ret != GST_FLOW_OK)
    return ret;

  GstBuffer *meta = gst_buffer_new ();
  gst_buffer_copy_into (meta, in, (GstBufferCopyFlags) (GST_BUFFER_COPY_FLAGS |
          GST_BUFFER_COPY_TIMESTAMPS | GST_BUFFER_COPY_META), 0, -1);
  priv->waiting.push_back (meta);
  if (GST_BUFFER_DURATION_IS_VALID (in)) {
    GST_OBJECT_LOCK (self);
    priv->last_duration = GST_BUFFER_DURATION (in);
    GST_OBJECT_UNLOCK (self);
  }
  return GST_FLOW_OK;
}

static bool message_due (GstCudaFiltersBase * self, GstBuffer * inbuf);
static void post_levels_message (GstCudaFiltersBase * self, GstBuffer * inbuf,
    const cudafilters::FrameLevels & levels);

/* Filters the next frame on the CPU into @dst. */
static GstFlowReturn
window_filter_cpu (GstCudaFiltersBase * self,
    const cudafilters::FramePlanesOut & dst, cudafilters::FrameLevels * levels)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  const cudafilters::FrameWindow::Window w = priv->cpu_window.next ();
  cudafilters::FramePlanes views[2 * cudafilters::FrameWindow::kMaxRadius + 1];
  for (int i = 0; i < w.count; ++i)
    views[i] = priv->cpu_frames.view (w.slots[i]);
  if (priv->poison_outputs)
    poison_host_frame (dst);
  GstFlowReturn ret = GST_FLOW_OK;
  try {
    GST_CUDA_FILTERS_BASE_GET_CLASS (self)->filter_window_cpu (self, views,
        w.count, w.center, dst);
    if (levels) {
      cudafilters::count_levels_cpu (views[w.center].luma, levels->input);
      cudafilters::count_levels_cpu (dst.luma, levels->output);
    }
  } catch (const std::exception & e) {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("Processing failed."),
        ("%s", e.what ()));
    ret = GST_FLOW_ERROR;
  }
  priv->cpu_window.pop ();
  return ret;
}

/* Filters the next frame into a new output buffer with its metadata. */
static GstFlowReturn
window_output (GstCudaFiltersBase * self, GstBuffer ** outbuf)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstBuffer *meta = priv->waiting.front ();
  priv->waiting.pop_front ();
  GstFlowReturn ret = GST_BASE_TRANSFORM_GET_CLASS (self)->prepare_output_buffer
      (trans, meta, outbuf);
  GstVideoFrame frame;
  const bool on_device = ret == GST_FLOW_OK && priv->gpu && priv->cuda_caps &&
      is_cuda_memory (*outbuf);
  if (ret == GST_FLOW_OK && !map_frame (self, &frame, *outbuf,
          (GstMapFlags) (GST_MAP_WRITE | (on_device ? cuda_map_flag () : 0))))
    ret = GST_FLOW_ERROR;
  if (ret != GST_FLOW_OK) {
    /* The frame is dropped with its metadata; the window moves on. */
    window_drop_next (self);
    gst_clear_buffer (outbuf);
    gst_buffer_unref (meta);
    return ret;
  }

  const cudafilters::FramePlanesOut dst = frame_planes_out (&frame);
  cudafilters::FrameLevels levels;
  cudafilters::FrameLevels *want = message_due (self, meta) ? &levels : nullptr;
  if (priv->gpu) {
    bool queued = false;
    ret = run_on_gpu (self, [&](GpuState & gpu) {
          if (!on_device) {
            gpu.window_runner->output_host (*gpu.window_filter, dst, want);
            return;
          }
          queued = !priv->host_sync && !want &&
              gpu.streams.output_stream (*outbuf) != nullptr;
          gpu.window_runner->output_device (*gpu.window_filter, dst,
              GstCudaFiltersStreams::stream_of (*outbuf), queued, want);
          if (queued)
            gpu.window_runner->check_queued_work ();
        });
    if (ret == GST_FLOW_OK && on_device && !queued)
      GstCudaFiltersStreams::mark_finished (*outbuf);
  } else {
    ret = window_filter_cpu (self, dst, want);
  }
  gst_video_frame_unmap (&frame);
  if (ret == GST_FLOW_OK && want)
    post_levels_message (self, meta, levels);
  gst_buffer_unref (meta);
  if (ret != GST_FLOW_OK)
    gst_clear_buffer (outbuf);
  return ret;
}

/* Filters every frame still held, from the frames before it (the window
 * clipped at the last one), pushes them downstream, and starts afresh. */
static GstFlowReturn
window_drain (GstCudaFiltersBase * self)
{
  GstFlowReturn ret = GST_FLOW_OK;
  while (ret == GST_FLOW_OK && window_ready (self, true)) {
    GstBuffer *out = nullptr;
    ret = window_output (self, &out);
    if (ret == GST_FLOW_OK)
      ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), out);
  }
  window_reset (self);
  return ret;
}

/* The latency a window of `radius` frames adds: that many frames. */
static GstClockTime
window_latency (GstCudaFiltersBase * self)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  const int radius = priv->radius;
  if (radius == 0)
    return 0;
  /* Queried from any thread: the caps and durations the streaming thread
   * sets are read under the object lock. */
  GST_OBJECT_LOCK (self);
  const gint n = GST_VIDEO_INFO_FPS_N (&priv->info);
  const gint d = GST_VIDEO_INFO_FPS_D (&priv->info);
  const GstClockTime last_duration = priv->last_duration;
  GST_OBJECT_UNLOCK (self);
  if (n > 0 && d > 0)
    return radius * gst_util_uint64_scale_int (GST_SECOND, d, n);
  if (GST_CLOCK_TIME_IS_VALID (last_duration))
    return radius * last_duration;
  GST_DEBUG_OBJECT (self, "no frame rate or duration yet: latency unknown");
  return 0;
}

static gboolean adopts_upstream_context (GstCudaFiltersBase * self,
    GstBuffer * buffer);

/* A DISCONT buffer breaks the window: the frames held before it leave
 * first. */
static GstFlowReturn
gst_cuda_filters_base_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  if (is_window_filter (self) && !get_priv (self)->waiting.empty () &&
      (GST_BUFFER_IS_DISCONT (input) || adopts_upstream_context (self, input))) {
    GstFlowReturn ret = window_drain (self);
    if (ret != GST_FLOW_OK) {
      gst_buffer_unref (input);
      return ret;
    }
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->submit_input_buffer (trans,
      is_discont, input);
}

/* Whole-frame filters: the frame queued by submit_input_buffer joins the
 * history, and the oldest frame whose window is complete leaves. */
static GstFlowReturn
gst_cuda_filters_base_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  if (!is_window_filter (self))
    return GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output (trans,
        outbuf);

  *outbuf = nullptr;
  GstBuffer *in = trans->queued_buf;
  trans->queued_buf = nullptr;
  if (in) {
    GST_BASE_TRANSFORM_GET_CLASS (self)->before_transform (trans, in);
    const GstFlowReturn ret = window_push (self, in);
    gst_buffer_unref (in);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  if (!window_ready (self, false))
    return GST_FLOW_OK;
  return window_output (self, outbuf);
}

/* A flush or a new segment (a seek) breaks the stream: histories restart
 * and the next frame posts its statistics. */
static gboolean
gst_cuda_filters_base_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_STOP:
      priv->restart_history = true;
      priv->last_message = GST_CLOCK_TIME_NONE;
      /* Frames held are dropped, as everything in flight is. */
      window_reset (self);
      break;
    case GST_EVENT_SEGMENT:
      priv->restart_history = true;
      priv->last_message = GST_CLOCK_TIME_NONE;
      /* The frames of the old segment leave in it. */
      window_drain (self);
      break;
    case GST_EVENT_EOS:
    case GST_EVENT_CAPS:
      /* The last frames leave before EOS, or with the caps they came in. */
      window_drain (self);
      break;
    default:
      break;
  }
  /* Frames pushed with their work still queued (CUDA memory, GStreamer
   * 1.24+) may yet fail: at the end of the stream and at each break in it,
   * the GPU finishes them, and a failure is an error instead of the EOS. */
  const GstEventType type = GST_EVENT_TYPE (event);
  if ((type == GST_EVENT_EOS || type == GST_EVENT_CAPS ||
          type == GST_EVENT_SEGMENT) && !finish_gpu_work (self)) {
    gst_event_unref (event);
    return FALSE;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

static void
gst_cuda_filters_base_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaFiltersBasePrivate *priv = get_priv (GST_CUDA_FILTERS_BASE (object));

  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_BACKEND:
      priv->backend = (GstCudaFiltersBackend) g_value_get_enum (value);
      break;
    case PROP_DEVICE_ID:
      priv->device_id = g_value_get_int (value);
      break;
    case PROP_POST_MESSAGES:
      priv->post_messages = g_value_get_boolean (value);
      break;
    case PROP_MESSAGE_INTERVAL:
      priv->message_interval = g_value_get_uint64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_filters_base_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaFiltersBasePrivate *priv = get_priv (GST_CUDA_FILTERS_BASE (object));

  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_BACKEND:
      g_value_set_enum (value, priv->backend);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, priv->device_id);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, priv->post_messages);
      break;
    case PROP_MESSAGE_INTERVAL:
      g_value_set_uint64 (value, priv->message_interval);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_filters_base_finalize (GObject * object)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (object);

  /* Stopped elements have no GPU state left; one never stopped has no bus
   * to report to. */
  close_gpu (self, false);
  get_priv (self)->~GstCudaFiltersBasePrivate ();

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_filters_base_class_init (GstCudaFiltersBaseClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_cuda_filters_base_set_property;
  gobject_class->get_property = gst_cuda_filters_base_get_property;
  gobject_class->finalize = gst_cuda_filters_base_finalize;

  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where frames are filtered: auto (GPU when usable, else CPU with a "
          "warning), cuda (GPU or fail) or cpu",
          GST_TYPE_CUDA_FILTERS_BACKEND, DEFAULT_BACKEND,
          (GParamFlags) (G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
              G_PARAM_STATIC_STRINGS)));
  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "Cuda Device ID",
          "Set the GPU device to use for operations (-1 = auto)",
          -1, G_MAXINT, DEFAULT_DEVICE_ID,
          (GParamFlags) (G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
              G_PARAM_STATIC_STRINGS)));

  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post an element message named after the element with the filtered "
          "plane's input histogram and its input and output minimum, maximum "
          "and mean, once per message-interval",
          DEFAULT_POST_MESSAGES,
          (GParamFlags) (G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
              G_PARAM_STATIC_STRINGS)));
  g_object_class_install_property (gobject_class, PROP_MESSAGE_INTERVAL,
      g_param_spec_uint64 ("message-interval", "Message interval",
          "Running time between two statistics messages, in nanoseconds "
          "(0: every frame)", 0, G_MAXUINT64, DEFAULT_MESSAGE_INTERVAL,
          (GParamFlags) (G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
              G_PARAM_STATIC_STRINGS)));

  element_class->set_context =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_set_context);

  /* Same caps on both pads must still filter: never passthrough. */
  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_filters_base_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_filters_base_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_filters_base_set_caps);
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_transform_caps);
  trans_class->transform_size =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_transform_size);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_filters_base_query);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_decide_allocation);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_propose_allocation);
  trans_class->before_transform =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_before_transform);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_filters_base_transform);
  trans_class->submit_input_buffer =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_submit_input_buffer);
  trans_class->generate_output =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_generate_output);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_filters_base_sink_event);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_filters_base_debug, "cudafiltersbase", 0,
      "Base class of the cudafilters elements");

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_FILTERS_BASE, (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_FILTERS_BACKEND, (GstPluginAPIFlags) 0);
}

static void
gst_cuda_filters_base_init (GstCudaFiltersBase * self)
{
  /* The private struct holds C++ members: construct it in place, destroy it
   * in finalize. */
  new (gst_cuda_filters_base_get_instance_private (self))
      GstCudaFiltersBasePrivate ();

  gst_base_transform_set_qos_enabled (GST_BASE_TRANSFORM (self), TRUE);
  /* Passthrough never happens; putting downstream's caps first would only
   * undo the memory preference of transform_caps. */
  gst_base_transform_set_prefer_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}
