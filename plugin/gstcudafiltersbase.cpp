#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersbase.h"

#include <new>
#include <string>

#include "gstcudafiltersallocation.h"
#include "gstcudafilterscaps.h"
#include "gstcudafiltersflow.h"
#include "gstcudafiltersframe.h"
#include "gstcudafiltersgpu.h"
#include "gstcudafiltersproperties.h"

GST_DEBUG_CATEGORY (gst_cuda_filters_base_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_base_debug

enum
{
  PROP_0,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_POST_MESSAGES,
  PROP_MESSAGE_INTERVAL,
  PROP_CUDA_WAIT,
};

#define DEFAULT_BACKEND GST_CUDA_FILTERS_BACKEND_AUTO
#define DEFAULT_DEVICE_ID -1
#define DEFAULT_CUDA_WAIT GST_CUDA_FILTERS_CUDA_WAIT_BLOCKING

struct GstCudaFiltersBasePrivate
{
  /* Settings, under the object lock (with stream.stats_settings). */
  GstCudaFiltersBackend backend = DEFAULT_BACKEND;
  gint device_id = DEFAULT_DEVICE_ID;
  GstCudaFiltersCudaWait cuda_wait = DEFAULT_CUDA_WAIT;
  /* Where the element runs, from start to stop (under the object lock):
   * caps in CUDA memory come first only where the GPU opened. */
  enum class Runs { kNotStarted, kOnGpu, kOnCpu } runs = Runs::kNotStarted;

  /* From start to stop: the element's engine, the GPU side (open where the
   * element runs on the GPU), the flow of frames, the streaming state they
   * share. */
  std::unique_ptr<GstCudaFiltersEngine> engine;
  const GstCudaFiltersEnvironment environment =
      GstCudaFiltersEnvironment::read ();
  GstCudaFiltersGpu gpu { environment };
  GstCudaFiltersStreaming stream { environment.runners };
  std::unique_ptr<GstCudaFiltersFlow> flow;
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

GST_CUDA_FILTERS_DEFINE_ENUM_TYPE (GstCudaFiltersBackend,
    gst_cuda_filters_backend,
    {GST_CUDA_FILTERS_BACKEND_AUTO,
        "The GPU when one is usable, otherwise the CPU (with a warning)", "auto"},
    {GST_CUDA_FILTERS_BACKEND_CUDA, "The GPU; fail to start without one", "cuda"},
    {GST_CUDA_FILTERS_BACKEND_CPU, "The CPU", "cpu"});

/* Waits for every frame queued on the GPU. A failure there (a fault in a
 * frame already pushed) is an element error. */
static bool
finish_gpu_work (GstCudaFiltersBase * self)
{
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  try {
    priv->gpu.finish ();
  } catch (const std::exception & e) {
    priv->gpu.report_error (GST_ELEMENT (self), e);
    return false;
  }
  return true;
}

static gboolean
gst_cuda_filters_base_start (GstBaseTransform * trans)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);

  GST_OBJECT_LOCK (self);
  const GstCudaFiltersBackend backend = priv->backend;
  const gint device_id = priv->device_id;
  const GstCudaFiltersCudaWait cuda_wait = priv->cuda_wait;
  GST_OBJECT_UNLOCK (self);

  /* Under the lock the settings are read and later changes pushed with:
   * none is lost in between. */
  GST_OBJECT_LOCK (self);
  priv->engine = GST_CUDA_FILTERS_BASE_GET_CLASS (self)->create_engine (self);
  GST_OBJECT_UNLOCK (self);
  priv->stream.restart_history = true;
  priv->stream.stats.restart ();
  std::unique_ptr<GstCudaFiltersFlow> flow =
      gst_cuda_filters_flow_new (priv->stream, *priv->engine);
  /* The latency query reads the flow from other threads. */
  GST_OBJECT_LOCK (self);
  priv->flow = std::move (flow);
  GST_OBJECT_UNLOCK (self);

  std::string why, replaced, not_blocking;
  if (backend == GST_CUDA_FILTERS_BACKEND_CPU) {
    GST_INFO_OBJECT (self, "running on the CPU (backend=cpu)");
  } else if (priv->gpu.open (GST_ELEMENT (self), device_id, *priv->engine,
          cuda_wait, why, replaced, not_blocking)) {
    GST_INFO_OBJECT (self, "running on the GPU");
    if (!replaced.empty ())
      GST_ELEMENT_WARNING (self, RESOURCE, FAILED,
          ("The CUDA context shared with other elements is unusable after an "
              "earlier fault: this element continues in a new one."),
          ("%s", replaced.c_str ()));
    if (!not_blocking.empty ())
      GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
          ("cuda-wait=blocking could not be applied: threads waiting for the "
              "GPU in this CUDA context may spin."), ("%s", not_blocking.c_str ()));
  } else if (backend == GST_CUDA_FILTERS_BACKEND_CUDA) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No usable CUDA device (backend=cuda)."), ("%s", why.c_str ()));
    return FALSE;
  } else {
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
        ("No usable CUDA device: filtering on the CPU instead."),
        ("%s", why.c_str ()));
  }
  priv->flow->reset ();
  GST_OBJECT_LOCK (self);
  priv->runs = priv->gpu.is_open () ? GstCudaFiltersBasePrivate::Runs::kOnGpu :
      GstCudaFiltersBasePrivate::Runs::kOnCpu;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_cuda_filters_base_stop (GstBaseTransform * trans)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GST_OBJECT_LOCK (self);
  get_priv (self)->runs = GstCudaFiltersBasePrivate::Runs::kNotStarted;
  GST_OBJECT_UNLOCK (self);
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  /* Frames still queued that failed are an error. */
  finish_gpu_work (self);
  GST_OBJECT_LOCK (self);
  std::unique_ptr<GstCudaFiltersFlow> flow = std::move (priv->flow);
  GST_OBJECT_UNLOCK (self);
  flow.reset ();
  priv->gpu.close ();
  GST_OBJECT_LOCK (self);
  std::unique_ptr<GstCudaFiltersEngine> engine = std::move (priv->engine);
  GST_OBJECT_UNLOCK (self);
  engine.reset ();
  return TRUE;
}

void
gst_cuda_filters_base_settings_changed (GstCudaFiltersBase * self)
{
  ++get_priv (self)->stream.settings_version;
}

static gboolean
gst_cuda_filters_base_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstVideoInfo info;
  bool cuda_caps = false;
  if (!gst_cuda_filters_check_caps (GST_ELEMENT (self), incaps, outcaps, &info,
          &cuda_caps))
    return FALSE;
  GstCudaFiltersBaseClass *klass = GST_CUDA_FILTERS_BASE_GET_CLASS (self);
  if (!klass->takes_interlaced && GST_VIDEO_INFO_INTERLACE_MODE (&info) !=
      GST_VIDEO_INTERLACE_MODE_PROGRESSIVE) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("%s filters progressive frames only, not %s ones: put deinterlace "
            "before it.", GST_OBJECT_NAME (self),
            gst_video_interlace_mode_to_string (GST_VIDEO_INFO_INTERLACE_MODE
                (&info))), ("caps %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  if (klass->check_format && !klass->check_format (self, &info))
    return FALSE;

  try {
    if (!cuda_caps)
      priv->gpu.reserve (info);
  } catch (const std::exception & e) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not allocate GPU memory for %dx%d frames.",
            GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info)),
        ("%s", e.what ()));
    return FALSE;
  }

  /* Renegotiation with the same frames keeps the frames held; new frames
   * come after a CAPS event, which drained them. */
  GstCudaFiltersStreaming & s = priv->stream;
  cudafilters::PackedPixels pixels;
  const bool packed = gst_cuda_filters_packed_pixels (&info, &pixels);
  const bool new_frames = s.info.finfo == nullptr ||
      !gst_video_info_is_equal (&info, &s.info);
  GST_OBJECT_LOCK (self);
  s.info = info;
  GST_OBJECT_UNLOCK (self);
  s.restart_history = true;
  s.cuda_caps = cuda_caps;
  if (new_frames)
    priv->flow->reset ();
  priv->engine->set_packing (packed ? &pixels : nullptr);
  GST_DEBUG_OBJECT (self, "configured for %" GST_PTR_FORMAT, incaps);
  return TRUE;
}

static GstCaps *
gst_cuda_filters_base_transform_caps (GstBaseTransform * trans,
    GstPadDirection, GstCaps * caps, GstCaps * filter)
{
  GstCudaFiltersBasePrivate *priv = get_priv (GST_CUDA_FILTERS_BASE (trans));
  /* Before start, as the backend property says; from start on, as the GPU
   * opened (backend=auto without a usable GPU filters on the CPU, where
   * CUDA memory would only be downloaded and uploaded again). */
  GST_OBJECT_LOCK (trans);
  using Runs = GstCudaFiltersBasePrivate::Runs;
  const bool prefer_cuda = priv->runs == Runs::kNotStarted ?
      priv->backend != GST_CUDA_FILTERS_BACKEND_CPU : priv->runs == Runs::kOnGpu;
  GST_OBJECT_UNLOCK (trans);
  GstCaps *result = gst_cuda_filters_transform_caps (caps, filter, prefer_cuda);
  GST_LOG_OBJECT (trans, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps,
      result);
  return result;
}

/* The output size follows from the caps alone. An input buffer that is too
 * small is reported when it is mapped, as a stream error naming both sizes. */
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

static gboolean
gst_cuda_filters_base_decide_allocation (GstBaseTransform * trans,
    GstQuery * query)
{
  GstCudaFiltersBasePrivate *priv = get_priv (GST_CUDA_FILTERS_BASE (trans));
  priv->stream.downstream_video_meta = gst_query_find_allocation_meta (query,
      GST_VIDEO_META_API_TYPE, nullptr);
  if (priv->gpu.is_open ()) {
    switch (gst_cuda_filters_decide_pool (GST_ELEMENT (trans), query,
            priv->gpu, priv->stream.cuda_caps)) {
      case GstCudaFiltersPool::kDecided:
        return TRUE;
      case GstCudaFiltersPool::kFailed:
        return FALSE;
      case GstCudaFiltersPool::kDefault:
        break;
    }
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans,
      query);
}

/* Never called: generate_output runs the flow. Its presence makes
 * GstBaseTransform treat outputs as new buffers (neither passthrough nor in
 * place), so that it decides downstream's allocation and answers upstream's
 * allocation query (propose_allocation). */
static GstFlowReturn
gst_cuda_filters_base_transform (GstBaseTransform *, GstBuffer *, GstBuffer *)
{
  g_return_val_if_reached (GST_FLOW_NOT_SUPPORTED);
}

static gboolean
gst_cuda_filters_base_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstCudaFiltersBasePrivate *priv = get_priv (GST_CUDA_FILTERS_BASE (trans));

  /* Chain up first: it forwards the query in passthrough and copies the
   * metas the base class accepts. */
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans,
          decide_query, query))
    return FALSE;
  if (!decide_query)
    return TRUE;
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr);
  if (!priv->gpu.is_open ())
    return TRUE;
  return gst_cuda_filters_propose_pool (query, priv->gpu, priv->stream.cuda_caps);
}

static void
gst_cuda_filters_base_set_context (GstElement * element, GstContext * context)
{
  GstCudaFiltersBasePrivate *priv = get_priv (GST_CUDA_FILTERS_BASE (element));

  if (GstCudaFiltersContext::driver_loaded ()) {
    GST_OBJECT_LOCK (element);
    const gint device_id = priv->device_id;
    GST_OBJECT_UNLOCK (element);
    priv->gpu.context ().handle_set_context (element, context, device_id);
  }
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_filters_base_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query)
{
  GstCudaFiltersBasePrivate *priv = get_priv (GST_CUDA_FILTERS_BASE (trans));

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      GstCudaFiltersContext::driver_loaded () &&
      priv->gpu.context ().handle_query (GST_ELEMENT (trans), query))
    return TRUE;

  const gboolean ret = GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans,
      direction, query);
  /* The flow may hold frames back. */
  if (ret && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY &&
      direction == GST_PAD_SRC) {
    gboolean live;
    GstClockTime min, max;
    gst_query_parse_latency (query, &live, &min, &max);
    GST_OBJECT_LOCK (trans);
    const GstClockTime ours = priv->flow ? priv->flow->latency () : 0;
    GST_OBJECT_UNLOCK (trans);
    GST_DEBUG_OBJECT (trans, "adding %" GST_TIME_FORMAT " of latency",
        GST_TIME_ARGS (ours));
    gst_query_set_latency (query, live, min + ours,
        GST_CLOCK_TIME_IS_VALID (max) ? max + ours : max);
  }
  return ret;
}

/* CUDA memory from another context on the device we may use: the frames
 * held leave first, then the GPU side moves into that context, as nvcodec's
 * filters do, and the output pool is negotiated again. A DISCONT buffer
 * breaks the window too. */
static GstFlowReturn
gst_cuda_filters_base_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GST_OBJECT_LOCK (self);
  const gint device_id = priv->device_id;
  GST_OBJECT_UNLOCK (self);
#ifdef HAVE_GST_CUDA
  /* Only where CUDA memory was negotiated: frames in system-memory caps are
   * mapped on the host, whatever memory carries them. */
  GstCudaContext *theirs = priv->stream.cuda_caps ?
      priv->gpu.context_to_adopt (input, device_id) : nullptr;
#else
  /* No CUDA memory without GStreamer's CUDA library: nothing to adopt. */
  const bool theirs = false;
  (void) device_id;
#endif

  if (priv->flow->holds_frames () && (GST_BUFFER_IS_DISCONT (input) || theirs)) {
    const GstFlowReturn ret = priv->flow->drain ();
    if (ret != GST_FLOW_OK) {
      gst_buffer_unref (input);
      return ret;
    }
  }
#ifdef HAVE_GST_CUDA
  if (theirs) {
    GST_INFO_OBJECT (self, "adopting upstream CUDA context %" GST_PTR_FORMAT,
        theirs);
    /* The frames queued in the context we leave finish first. */
    if (!finish_gpu_work (self)) {
      gst_buffer_unref (input);
      return GST_FLOW_ERROR;
    }
    std::string why;
    if (!priv->gpu.adopt (theirs, why)) {
      GST_ELEMENT_ERROR (self, LIBRARY, INIT, (nullptr),
          ("could not move to upstream's CUDA context: %s", why.c_str ()));
      gst_buffer_unref (input);
      return GST_FLOW_ERROR;
    }
    priv->flow->reset ();
    gst_base_transform_reconfigure_src (trans);
  }
#endif
  return GST_BASE_TRANSFORM_CLASS (parent_class)->submit_input_buffer (trans,
      is_discont, input);
}

static GstFlowReturn
gst_cuda_filters_base_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstBuffer *in = trans->queued_buf;
  trans->queued_buf = nullptr;
  return get_priv (GST_CUDA_FILTERS_BASE (trans))->flow->generate (in, outbuf);
}

/* The frames held pushed downstream before @event. Refused because
 * downstream has ended, they are not wanted and the event goes on (EOS
 * must, or the pipeline never ends). Any other failure fails the event
 * too, and where it is fatal (not a flush) the element posts the error, as
 * a streaming thread would. */
static bool
drain_before (GstCudaFiltersBase * self, GstEvent * event)
{
  const GstFlowReturn ret = get_priv (self)->flow->drain ();
  if (ret == GST_FLOW_OK)
    return true;
  GST_INFO_OBJECT (self, "pushing the frames held before %s: %s",
      GST_EVENT_TYPE_NAME (event), gst_flow_get_name (ret));
  if (ret == GST_FLOW_EOS)
    return true;
  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)
    GST_ELEMENT_FLOW_ERROR (self, ret);
  return false;
}

/* Whether @event (CAPS) holds the caps the sink pad has now. */
static bool
same_caps (GstBaseTransform * trans, GstEvent * event)
{
  GstCaps *caps = nullptr;
  gst_event_parse_caps (event, &caps);
  GstCaps *current = gst_pad_get_current_caps (GST_BASE_TRANSFORM_SINK_PAD (trans));
  const bool same = current && gst_caps_is_equal (caps, current);
  gst_clear_caps (&current);
  return same;
}

/* A flush or a new segment (a seek) breaks the stream: histories restart
 * and the next frame posts its statistics. */
static gboolean
gst_cuda_filters_base_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstCudaFiltersBase *self = GST_CUDA_FILTERS_BASE (trans);
  GstCudaFiltersBasePrivate *priv = get_priv (self);
  GstCudaFiltersStreaming & s = priv->stream;
  const GstEventType type = GST_EVENT_TYPE (event);
  bool drained = true;
  switch (type) {
    case GST_EVENT_FLUSH_STOP:{
      s.restart_history = true;
      s.stats.restart ();
      /* Frames held are dropped, as everything in flight is, once the
       * flush has gone downstream (the events held that stay with the
       * stream are then kept for the next frame). */
      const gboolean ret =
          GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
      priv->flow->reset ();
      return ret;
    }
    case GST_EVENT_SEGMENT:
      /* The frames of the old segment leave in it, with its history; the
       * new segment's first frame starts a new one. */
      drained = drain_before (self, event);
      s.restart_history = true;
      s.stats.restart ();
      break;
    case GST_EVENT_CAPS:
      /* The same caps again are no break (GstBaseTransform keeps its
       * negotiation too): the frames held stay neighbours of the next. */
      if (same_caps (trans, event))
        return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
      /* The last frames leave with the caps they came in. */
      drained = drain_before (self, event);
      break;
    case GST_EVENT_EOS:
      /* The last frames leave before EOS. */
      drained = drain_before (self, event);
      break;
    default:
      /* Nor may other serialized events overtake the frames held. */
      if (GST_EVENT_IS_SERIALIZED (event) && priv->flow->hold_event (event))
        return TRUE;
      break;
  }
  if (!drained) {
    gst_event_unref (event);
    return FALSE;
  }
  /* Frames pushed with their work still queued (CUDA memory, GStreamer
   * 1.24+) may yet fail: at the end of the stream and at each break in it,
   * the GPU finishes them, and a failure is an error instead of the event. */
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

  /* The backend, device and wait policy are taken when the element starts. */
  if (gst_cuda_filters_refuse_while_running (GST_ELEMENT (object), pspec,
          value))
    return;
  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_BACKEND:
      priv->backend = (GstCudaFiltersBackend) g_value_get_enum (value);
      break;
    case PROP_DEVICE_ID:
      priv->device_id = g_value_get_int (value);
      break;
    case PROP_POST_MESSAGES:
      priv->stream.stats_settings.enabled = g_value_get_boolean (value);
      break;
    case PROP_MESSAGE_INTERVAL:
      priv->stream.stats_settings.interval = g_value_get_uint64 (value);
      break;
    case PROP_CUDA_WAIT:
      priv->cuda_wait = (GstCudaFiltersCudaWait) g_value_get_enum (value);
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
      g_value_set_boolean (value, priv->stream.stats_settings.enabled);
      break;
    case PROP_MESSAGE_INTERVAL:
      g_value_set_uint64 (value, priv->stream.stats_settings.interval);
      break;
    case PROP_CUDA_WAIT:
      g_value_set_enum (value, priv->cuda_wait);
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
  get_priv (GST_CUDA_FILTERS_BASE (object))->~GstCudaFiltersBasePrivate ();
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_filters_base_class_init (GstCudaFiltersBaseClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  const GstCudaFiltersStats::Settings stats;

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
          stats.enabled,
          (GParamFlags) (G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
              G_PARAM_STATIC_STRINGS)));
  g_object_class_install_property (gobject_class, PROP_MESSAGE_INTERVAL,
      g_param_spec_uint64 ("message-interval", "Message interval",
          "Running time between two statistics messages, in nanoseconds "
          "(0: every frame)", 0, G_MAXUINT64, stats.interval,
          (GParamFlags) (G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
              G_PARAM_STATIC_STRINGS)));

  g_object_class_install_property (gobject_class, PROP_CUDA_WAIT,
      g_param_spec_enum ("cuda-wait", "CUDA wait",
          "How threads wait for the GPU in the element's CUDA context, which "
          "decoders and other elements share: blocking (the context schedules "
          "blocking synchronisation while the element runs, so that waiting "
          "threads sleep rather than spin; its flags are given back at stop) "
          "or keep (the context's scheduling is left as it is)",
          GST_TYPE_CUDA_FILTERS_CUDA_WAIT, DEFAULT_CUDA_WAIT,
          (GParamFlags) (G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
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
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_filters_base_transform);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_decide_allocation);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_propose_allocation);
  trans_class->submit_input_buffer =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_submit_input_buffer);
  trans_class->generate_output =
      GST_DEBUG_FUNCPTR (gst_cuda_filters_base_generate_output);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_filters_base_sink_event);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_filters_base_debug, "cudafiltersbase", 0,
      "Base class of the cudafilters elements");

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_FILTERS_BASE, (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_FILTERS_BACKEND, (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_FILTERS_CUDA_WAIT, (GstPluginAPIFlags) 0);
}

static void
gst_cuda_filters_base_init (GstCudaFiltersBase * self)
{
  /* The private struct holds C++ members: construct it in place, destroy it
   * in finalize. */
  GstCudaFiltersBasePrivate *priv = new (
      gst_cuda_filters_base_get_instance_private (self)) GstCudaFiltersBasePrivate ();
  priv->stream.trans = GST_BASE_TRANSFORM (self);
  priv->stream.gpu = &priv->gpu;

  gst_base_transform_set_qos_enabled (GST_BASE_TRANSFORM (self), TRUE);
  /* Passthrough never happens; putting downstream's caps first would only
   * undo the memory preference of transform_caps. */
  gst_base_transform_set_prefer_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}
