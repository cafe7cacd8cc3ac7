/**
 * SECTION:element-cudalowlight
 * @title: cudalowlight
 *
 * Brightens dark, noisy video (a surveillance camera at night, a dim room)
 * on an NVIDIA GPU: a bin of
 *
 * |[
 * cudanlm auto-strength=true temporal-radius=1 ! cudaclahe clip-limit=4 temporal-smoothing=0.8 ! cudasharpen
 * ]|
 *
 * first denoising each frame with non-local means over it and its two
 * neighbours in time, at a strength set from the frame's own noise
 * (`auto-strength`), then raising local contrast with CLAHE, and, with
 * `sharpen=true`, sharpening the result by unsharp masking.
 *
 * `cudaclahe` alone on such video lifts the noise with the shadows: in a
 * dark tile, whose levels crowd into a few bins, the mapping is steep (up to
 * about `clip-limit` + 1 output levels per input level), and noise of a few
 * levels becomes a grain several times as strong that changes from frame
 * to frame. Denoising first removes most of it before it is amplified; the
 * automatic strength follows the noise as the light falls or the camera's
 * gain changes.
 *
 * The default `clip-limit` is 4, twice `cudaclahe`'s 2. The clip limit
 * bounds the slope of each tile's mapping, so it sets both how far a dark
 * tile's levels are spread out and how much the noise left after denoising
 * is amplified: at most about `clip-limit` + 1 times. Denoised, a dark
 * tile's histogram is narrow, and CLAHE spreads a narrow histogram less at a
 * given clip limit (what is clipped off is spread over all levels): at 4
 * this chain brightens dark frames about as much as `cudaclahe` at 2 does
 * the noisy ones, with the noise kept far below the input's; higher limits
 * brighten further and amplify more of what the denoising leaves
 * (docs/cudalowlight.md has the measurement). Lower it for noisier video,
 * raise it for darker, cleaner video. `temporal-smoothing` (0.8) blends
 * each tile's histogram with earlier frames', so that noise and small
 * movements do not make the brightness flicker.
 *
 * The output is, byte for byte, what the same three elements linked by
 * hand give. Frames stay in the memory they arrive in between the stages:
 * in CUDA memory (`nvh264dec`, `cudaupload`) they never leave the GPU, and
 * no converter is put between the stages. The formats are those of the
 * three elements: 8- to 16-bit gray and YUV, RGB and packed 4:2:2; luma and
 * chroma are denoised, luma alone is equalized and sharpened.
 *
 * Frame n leaves once frame n + 1 has arrived: the element reports one
 * frame of latency (`cudanlm`'s), and the last frame leaves at EOS. A flush
 * drops the frame held; a DISCONT buffer, a new segment or new caps start a
 * new history in every stage.
 *
 * `sharpen` takes `cudasharpen` into the chain or out of it: when off, the
 * element is out of the bin, in the NULL state, so it costs nothing (and
 * leaves no unlinked pad in the bin). It may change while playing, from any
 * thread: the streaming thread relinks the stage before the next frame (or
 * serialized event) goes in, when nothing is inside the bin, and the frames
 * that leave after that are sharpened, or not. In the NULL and READY states
 * the change is made at once. Its settings are `cudasharpen`'s defaults
 * (unsharp masking, amount 1, radius 1).
 *
 * The inner elements are named after their factories, so their other
 * properties can be set as the bin's children: `cudanlm::noise-smoothing`,
 * `cudaclahe::tiles-x`, `cudasharpen::amount` (also while sharpening is
 * off), ... `backend`, `cuda-device-id` and `cuda-wait` apply to all three;
 * `denoise-strength`, `clip-limit` and `temporal-smoothing` can change while
 * playing and are controllable, each taking effect at the stage it belongs
 * to from the next frame there. As on `cudanlm`, a strength given to the
 * denoiser is used: `cudanlm::strength` (or `noise-sigma`,
 * `chroma-strength`) turns its `auto-strength` off, and setting
 * `denoise-strength`, the automatic strength's scale, turns it back on.
 * Without a usable GPU, `backend=auto` runs the same arithmetic on the CPU.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudalowlight ! videoconvert ! autovideosink
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudaupload ! cudalowlight denoise-strength=1.5 sharpen=true ! cudadownload ! videoconvert ! autovideosink
 * gst-launch-1.0 filesrc location=night.mp4 ! qtdemux ! h264parse ! nvh264dec ! cudalowlight clip-limit=6 ! cudadownload ! videoconvert ! autovideosink
 * gst-launch-1.0 rtspsrc location=rtsp://camera/stream ! rtph264depay ! h264parse ! nvh264dec ! cudalowlight sharpen=true cudasharpen::amount=0.6 cudasharpen::threshold=3 ! nvh264enc ! h264parse ! mp4mux ! filesink location=night-enhanced.mp4
 * gst-launch-1.0 filesrc location=dark.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 ! cudalowlight backend=cpu ! pngenc ! filesink location=bright.png
 * ]|
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudalowlight.h"
#include "gstcudafiltersbase.h"
#include "gstcudafilterscontext.h"
#include "gstcudafiltersproperties.h"

#include <initializer_list>

#include <cudafilters/clahe_params.h>
#include <cudafilters/nlm_params.h>

GST_DEBUG_CATEGORY_STATIC (gst_cuda_low_light_debug);
#define GST_CAT_DEFAULT gst_cuda_low_light_debug

enum
{
  PROP_0,
  PROP_DENOISE_STRENGTH,
  PROP_CLIP_LIMIT,
  PROP_TEMPORAL_SMOOTHING,
  PROP_SHARPEN,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_CUDA_WAIT,
};

/* cudanlm's auto-strength-scale, whose default is the engine's. */
#define DEFAULT_DENOISE_STRENGTH (cudafilters::NlmParams ().auto_scale)
#define DEFAULT_CLIP_LIMIT 4.0
#define DEFAULT_TEMPORAL_SMOOTHING 0.8
#define DEFAULT_SHARPEN FALSE
#define DEFAULT_TEMPORAL_RADIUS 1

/* The bin's controllable properties of cudaclahe: synced with their
 * control bindings as each frame reaches it. denoise-strength is synced by
 * cudanlm itself (DenoiseStrengthBinding). */
#define CLAHE_CONTROLLED { "clip-limit", "temporal-smoothing" }

struct _GstCudaLowLight
{
  GstBin parent;

  /* The stages: cudanlm and cudaclahe children of the bin (which owns
   * them), cudasharpen owned here and a child only while sharpening; the
   * ghost pads, the src pad's target cudaclahe's or cudasharpen's src pad. */
  GstElement *nlm;
  GstElement *clahe;
  GstElement *sharpen;
  GstPad *sinkpad;
  GstPad *srcpad;
  /* What keeps the bin from being built (a stage missing from an
   * incomplete install), or null: the bin then refuses to leave NULL, with
   * an error that says this. */
  const char *broken;

  /* Under the object lock: the `sharpen` property, and whether a probe on
   * the way in is to bring the chain in line with it. */
  gboolean sharpen_wanted;
  gboolean relink_pending;
  /* Whether cudasharpen is in the chain: changed only by the relink, which
   * runs once at a time (relink_pending); read under the object lock. */
  gboolean sharpen_linked;
};

static void gst_cuda_low_light_child_proxy_init (gpointer g_iface,
    gpointer iface_data);

#define gst_cuda_low_light_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstCudaLowLight, gst_cuda_low_light, GST_TYPE_BIN,
    G_IMPLEMENT_INTERFACE (GST_TYPE_CHILD_PROXY,
        gst_cuda_low_light_child_proxy_init));

GST_ELEMENT_REGISTER_DEFINE (cudalowlight, "cudalowlight", GST_RANK_NONE,
    GST_TYPE_CUDA_LOW_LIGHT);

/* cudasharpen into the bin, between cudaclahe and the src pad, then started
 * in the bin's state. */
static void
link_sharpen (GstCudaLowLight * self)
{
  GstPad *clahe_src = gst_element_get_static_pad (self->clahe, "src");
  GstPad *sharpen_sink = gst_element_get_static_pad (self->sharpen, "sink");
  GstPad *sharpen_src = gst_element_get_static_pad (self->sharpen, "src");

  if (!gst_bin_add (GST_BIN (self), self->sharpen))
    GST_ERROR_OBJECT (self, "could not add cudasharpen");
  if (!gst_ghost_pad_set_target (GST_GHOST_PAD (self->srcpad), sharpen_src))
    GST_ERROR_OBJECT (self, "could not make cudasharpen's src pad the target");
  const GstPadLinkReturn linked = gst_pad_link (clahe_src, sharpen_sink);
  if (GST_PAD_LINK_FAILED (linked))
    GST_ERROR_OBJECT (self, "could not link cudaclahe to cudasharpen: %s",
        gst_pad_link_get_name (linked));
  if (!gst_element_sync_state_with_parent (self->sharpen))
    GST_ELEMENT_ERROR (self, CORE, STATE_CHANGE, (nullptr),
        ("cudasharpen could not follow the bin's state"));

  gst_object_unref (sharpen_src);
  gst_object_unref (sharpen_sink);
  gst_object_unref (clahe_src);
}

/* cudaclahe straight to the src pad; cudasharpen unlinked, stopped and out
 * of the bin: no unlinked pad stays in the bin for a parent to take
 * (gst_bin_find_unlinked_pad looks into child bins), and the bin's state
 * changes leave it alone. */
static void
unlink_sharpen (GstCudaLowLight * self)
{
  GstPad *clahe_src = gst_element_get_static_pad (self->clahe, "src");
  GstPad *sharpen_sink = gst_element_get_static_pad (self->sharpen, "sink");

  gst_pad_unlink (clahe_src, sharpen_sink);
  if (!gst_ghost_pad_set_target (GST_GHOST_PAD (self->srcpad), clahe_src))
    GST_ERROR_OBJECT (self, "could not make cudaclahe's src pad the target");
  gst_element_set_state (self->sharpen, GST_STATE_NULL);
  gst_bin_remove (GST_BIN (self), self->sharpen);

  gst_object_unref (sharpen_sink);
  gst_object_unref (clahe_src);
}

/* Brings the chain in line with the `sharpen` property, relinking until it
 * is as the property last said. Runs with the bin's state lock held (no
 * state change can run beside it) and nothing inside the bin: in the
 * streaming thread before the next frame or event goes in, or where the bin
 * does not stream (NULL, READY). */
static void
relink (GstCudaLowLight * self)
{
  for (;;) {
    GST_OBJECT_LOCK (self);
    const gboolean want = self->sharpen_wanted;
    if (want == self->sharpen_linked) {
      self->relink_pending = FALSE;
      GST_OBJECT_UNLOCK (self);
      return;
    }
    GST_OBJECT_UNLOCK (self);

    GST_DEBUG_OBJECT (self, "%s cudasharpen", want ? "linking" : "unlinking");
    if (want)
      link_sharpen (self);
    else
      unlink_sharpen (self);
    GST_OBJECT_LOCK (self);
    self->sharpen_linked = want;
    GST_OBJECT_UNLOCK (self);
  }
}

/* A blocking probe on the pad that pushes into cudanlm: the streaming
 * thread relinks before the next frame or serialized event goes in, so no
 * frame is ever inside the bin while it changes, and no frame goes out
 * through a stage still starting. Where a state change holds the state
 * lock (and may be waiting for this thread to stop), the item goes on and
 * the change waits for the next one; a bin that stops has the change made
 * at its next start (change_state). */
static GstPadProbeReturn
relink_before_next (GstPad *, GstPadProbeInfo * info, gpointer user_data)
{
  GstCudaLowLight *self = GST_CUDA_LOW_LIGHT (user_data);
  if ((GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) &&
      !GST_EVENT_IS_SERIALIZED (GST_PAD_PROBE_INFO_EVENT (info)))
    return GST_PAD_PROBE_PASS;
  if (!GST_STATE_TRYLOCK (self))
    return GST_PAD_PROBE_PASS;
  relink (self);
  GST_STATE_UNLOCK (self);
  return GST_PAD_PROBE_REMOVE;
}

static void
set_sharpen (GstCudaLowLight * self, gboolean on)
{
  GST_OBJECT_LOCK (self);
  self->sharpen_wanted = on;
  if (self->broken) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
  const gboolean start = !self->relink_pending && on != self->sharpen_linked;
  if (start)
    self->relink_pending = TRUE;
  GST_OBJECT_UNLOCK (self);
  if (!start)
    return;

  /* Not streaming: at once, with state changes kept out. */
  if (GST_STATE_TRYLOCK (self)) {
    GST_OBJECT_LOCK (self);
    const bool streaming = GST_STATE (self) > GST_STATE_READY;
    GST_OBJECT_UNLOCK (self);
    if (!streaming) {
      relink (self);
      GST_STATE_UNLOCK (self);
      return;
    }
    GST_STATE_UNLOCK (self);
  }
  GstPad *way_in = GST_PAD (gst_proxy_pad_get_internal (GST_PROXY_PAD
          (self->sinkpad)));
  gst_pad_add_probe (way_in, (GstPadProbeType) (GST_PAD_PROBE_TYPE_BLOCK |
          GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST |
          GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM), relink_before_next, self,
      nullptr);
  gst_object_unref (way_in);
}

/* Syncs the control bindings of @names (properties of the bin) with the
 * stream time of the frame @info carries, as it reaches a stage's sink pad
 * @pad: the stage then filters that frame with them, as an element syncs
 * its own bindings before filtering a frame. */
static void
sync_bindings (GstCudaLowLight * self, GstPad * pad, GstPadProbeInfo * info,
    std::initializer_list < const char *>names)
{
  if (!gst_object_has_active_control_bindings (GST_OBJECT (self)))
    return;
  GstBuffer *buf = nullptr;
  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER)
    buf = GST_PAD_PROBE_INFO_BUFFER (info);
  else if (GstBufferList * list = GST_PAD_PROBE_INFO_BUFFER_LIST (info))
    buf = gst_buffer_list_length (list) ? gst_buffer_list_get (list, 0) : nullptr;
  if (!buf)
    return;

  GstEvent *event = gst_pad_get_sticky_event (pad, GST_EVENT_SEGMENT, 0);
  if (!event)
    return;
  const GstSegment *segment;
  gst_event_parse_segment (event, &segment);
  const GstClockTime stream_time = segment->format == GST_FORMAT_TIME ?
      gst_segment_to_stream_time (segment, GST_FORMAT_TIME,
      GST_BUFFER_PTS (buf)) : GST_CLOCK_TIME_NONE;
  gst_event_unref (event);
  if (!GST_CLOCK_TIME_IS_VALID (stream_time))
    return;

  for (const char *name:names) {
    GstControlBinding *binding =
        gst_object_get_control_binding (GST_OBJECT (self), name);
    if (!binding)
      continue;
    if (!gst_control_binding_is_disabled (binding))
      gst_control_binding_sync_values (binding, GST_OBJECT (self), stream_time,
          GST_CLOCK_TIME_NONE);
    gst_object_unref (binding);
  }
}

/* A control binding on cudanlm's auto-strength-scale that syncs the bin's
 * denoise-strength binding (if any) whenever cudanlm syncs its own: at the
 * stream time of the frame it is about to filter, which in its temporal
 * window leaves one frame after it came in (the bin's sink pad would see
 * the frame after). GStreamer's GstProxyControlBinding does the same, in a
 * library the plugin does not otherwise need. */
struct DenoiseStrengthBinding
{
  GstControlBinding parent;
  GWeakRef bin;
};

struct DenoiseStrengthBindingClass
{
  GstControlBindingClass parent_class;
};

G_DEFINE_TYPE (DenoiseStrengthBinding, denoise_strength_binding,
    GST_TYPE_CONTROL_BINDING);

static gboolean
denoise_strength_binding_sync_values (GstControlBinding * binding, GstObject *,
    GstClockTime timestamp, GstClockTime last_sync)
{
  auto *self = reinterpret_cast < DenoiseStrengthBinding * >(binding);
  GstObject *bin = GST_OBJECT (g_weak_ref_get (&self->bin));
  if (!bin)
    return TRUE;
  gboolean ret = TRUE;
  if (GstControlBinding * theirs =
      gst_object_get_control_binding (bin, "denoise-strength")) {
    if (!gst_control_binding_is_disabled (theirs))
      ret = gst_control_binding_sync_values (theirs, bin, timestamp,
          last_sync);
    gst_object_unref (theirs);
  }
  gst_object_unref (bin);
  return ret;
}

/* Values are the bin's binding's to give: this one holds none. */
static GValue *
denoise_strength_binding_get_value (GstControlBinding *, GstClockTime)
{
  return nullptr;
}

static gboolean
denoise_strength_binding_get_g_value_array (GstControlBinding *, GstClockTime,
    GstClockTime, guint, GValue *)
{
  return FALSE;
}

static void
denoise_strength_binding_finalize (GObject * object)
{
  g_weak_ref_clear (&reinterpret_cast < DenoiseStrengthBinding * >(object)->
      bin);
  G_OBJECT_CLASS (denoise_strength_binding_parent_class)->finalize (object);
}

static void
denoise_strength_binding_class_init (DenoiseStrengthBindingClass * klass)
{
  GstControlBindingClass *binding_class = GST_CONTROL_BINDING_CLASS (klass);
  binding_class->sync_values = denoise_strength_binding_sync_values;
  binding_class->get_value = denoise_strength_binding_get_value;
  binding_class->get_g_value_array =
      denoise_strength_binding_get_g_value_array;
  G_OBJECT_CLASS (klass)->finalize = denoise_strength_binding_finalize;
}

static void
denoise_strength_binding_init (DenoiseStrengthBinding * self)
{
  g_weak_ref_init (&self->bin, nullptr);
}

static GstPadProbeReturn
sync_clahe_bindings (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  sync_bindings (GST_CUDA_LOW_LIGHT (user_data), pad, info, CLAHE_CONTROLLED);
  return GST_PAD_PROBE_OK;
}

static void
gst_cuda_low_light_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaLowLight *self = GST_CUDA_LOW_LIGHT (object);

  /* Without its stages the bin keeps only `sharpen`, its own. */
  if (self->broken && prop_id != PROP_SHARPEN) {
    g_warning ("%s: refusing %s: %s", GST_OBJECT_NAME (self), pspec->name,
        self->broken);
    return;
  }
  /* Refused here, or the stages would refuse it each, except one that is
   * out of the chain. */
  if (gst_cuda_filters_refuse_while_running (GST_ELEMENT (self), pspec, value))
    return;
  switch (prop_id) {
    case PROP_DENOISE_STRENGTH:{
      /* The bin's strength scales the automatic one: where a
       * cudanlm::strength set on the bin turned that off, it comes back on,
       * so that the value set is used. */
      gboolean automatic = TRUE;
      g_object_get (self->nlm, "auto-strength", &automatic, NULL);
      if (!automatic) {
        GST_INFO_OBJECT (self, "denoise-strength set: cudanlm's "
            "auto-strength is on again");
        g_object_set (self->nlm, "auto-strength", TRUE, NULL);
      }
      g_object_set_property (G_OBJECT (self->nlm), "auto-strength-scale",
          value);
      break;
    }
    case PROP_CLIP_LIMIT:
      g_object_set_property (G_OBJECT (self->clahe), "clip-limit", value);
      break;
    case PROP_TEMPORAL_SMOOTHING:
      g_object_set_property (G_OBJECT (self->clahe), "temporal-smoothing",
          value);
      break;
    case PROP_SHARPEN:
      set_sharpen (self, g_value_get_boolean (value));
      break;
    case PROP_BACKEND:
    case PROP_DEVICE_ID:
    case PROP_CUDA_WAIT:
      for (GstElement * stage : {self->nlm, self->clahe, self->sharpen})
        g_object_set_property (G_OBJECT (stage), pspec->name, value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_cuda_low_light_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaLowLight *self = GST_CUDA_LOW_LIGHT (object);

  /* Without its stages the bin has only its defaults to show. */
  if (self->broken && prop_id != PROP_SHARPEN) {
    g_param_value_set_default (pspec, value);
    return;
  }
  switch (prop_id) {
    case PROP_DENOISE_STRENGTH:
      g_object_get_property (G_OBJECT (self->nlm), "auto-strength-scale",
          value);
      break;
    case PROP_CLIP_LIMIT:
      g_object_get_property (G_OBJECT (self->clahe), "clip-limit", value);
      break;
    case PROP_TEMPORAL_SMOOTHING:
      g_object_get_property (G_OBJECT (self->clahe), "temporal-smoothing",
          value);
      break;
    case PROP_SHARPEN:
      GST_OBJECT_LOCK (self);
      g_value_set_boolean (value, self->sharpen_wanted);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_BACKEND:
    case PROP_DEVICE_ID:
    case PROP_CUDA_WAIT:
      g_object_get_property (G_OBJECT (self->nlm), pspec->name, value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

/* GstBin's own lookup of children by name. */
static GObject *(*bin_get_child_by_name) (GstChildProxy * parent,
    const gchar * name);

/* cudasharpen by name also while it is out of the bin, so that
 * `cudasharpen::amount` and the like work whether sharpening is on or not. */
static GObject *
gst_cuda_low_light_get_child_by_name (GstChildProxy * proxy, const gchar * name)
{
  GstCudaLowLight *self = GST_CUDA_LOW_LIGHT (proxy);
  if (self->sharpen && g_strcmp0 (name, GST_OBJECT_NAME (self->sharpen)) == 0)
    return G_OBJECT (gst_object_ref (self->sharpen));
  return bin_get_child_by_name (proxy, name);
}

static void
gst_cuda_low_light_child_proxy_init (gpointer g_iface, gpointer)
{
  GstChildProxyInterface *iface = (GstChildProxyInterface *) g_iface;
  GstChildProxyInterface *bin_iface = (GstChildProxyInterface *)
      g_type_interface_peek_parent (iface);
  bin_get_child_by_name = bin_iface->get_child_by_name;
  iface->get_child_by_name = gst_cuda_low_light_get_child_by_name;
}

static void
gst_cuda_low_light_dispose (GObject * object)
{
  GstCudaLowLight *self = GST_CUDA_LOW_LIGHT (object);
  G_OBJECT_CLASS (parent_class)->dispose (object);
  gst_clear_object (&self->sharpen);
}

static GstStateChangeReturn
gst_cuda_low_light_change_state (GstElement * element,
    GstStateChange transition)
{
  GstCudaLowLight *self = GST_CUDA_LOW_LIGHT (element);
  if (transition == GST_STATE_CHANGE_NULL_TO_READY && self->broken) {
    GST_ELEMENT_ERROR (self, CORE, MISSING_PLUGIN,
        ("cudalowlight cannot run: %s.", self->broken),
        ("the cudafilters plugin is not installed whole, or not the same "
            "version throughout"));
    return GST_STATE_CHANGE_FAILURE;
  }
  /* A change of `sharpen` that no frame came to carry out (the bin stopped
   * first) is made before the bin streams again; the caller holds the state
   * lock. */
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    relink (self);
  const GstStateChangeReturn ret =
      GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  /* cudasharpen out of the bin keeps no state of its own. */
  if (transition == GST_STATE_CHANGE_READY_TO_NULL)
    gst_element_set_state (self->sharpen, GST_STATE_NULL);
  return ret;
}

static void
gst_cuda_low_light_class_init (GstCudaLowLightClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  const GParamFlags live = (GParamFlags) (G_PARAM_READWRITE |
      GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS);
  const GParamFlags controllable = (GParamFlags) (live | GST_PARAM_CONTROLLABLE);
  const GParamFlags in_ready = (GParamFlags) (G_PARAM_READWRITE |
      GST_PARAM_MUTABLE_READY | G_PARAM_STATIC_STRINGS);

  gobject_class->set_property = gst_cuda_low_light_set_property;
  gobject_class->get_property = gst_cuda_low_light_get_property;
  gobject_class->dispose = gst_cuda_low_light_dispose;

  g_object_class_install_property (gobject_class, PROP_DENOISE_STRENGTH,
      g_param_spec_float ("denoise-strength", "Denoise strength",
          "Multiplies the denoising strengths cudanlm sets from each frame's "
          "noise (its auto-strength-scale): above 1 removes more noise and "
          "more detail, below 1 less. Setting it turns cudanlm's "
          "auto-strength back on where cudanlm::strength turned it off",
          cudafilters::kNlmMinAutoScale, cudafilters::kNlmMaxAutoScale,
          DEFAULT_DENOISE_STRENGTH, controllable));
  g_object_class_install_property (gobject_class, PROP_CLIP_LIMIT,
      g_param_spec_double ("clip-limit", "Clip limit",
          "cudaclahe's contrast limit, in multiples of a tile's mean bin "
          "count: a tile's mapping multiplies differences of level (and the "
          "noise left) by at most about clip-limit + 1. 0 does not clip",
          0.0, cudafilters::kClaheMaxClipLimit, DEFAULT_CLIP_LIMIT,
          controllable));
  g_object_class_install_property (gobject_class, PROP_TEMPORAL_SMOOTHING,
      g_param_spec_double ("temporal-smoothing", "Temporal smoothing",
          "Weight of earlier frames in cudaclahe's histograms (exponential "
          "moving average): higher values keep noise and small movements "
          "from making the brightness flicker, and let changes of light fade "
          "in over more frames; 0 maps every frame on its own. Restarts on "
          "new caps, a flush, a seek and a DISCONT buffer",
          0.0, 1.0, DEFAULT_TEMPORAL_SMOOTHING, controllable));
  g_object_class_install_property (gobject_class, PROP_SHARPEN,
      g_param_spec_boolean ("sharpen", "Sharpen",
          "Sharpen the output with cudasharpen (unsharp masking, its "
          "settings as cudasharpen::amount, ...). Off, the stage is out of "
          "the chain and costs nothing; a change while playing takes effect "
          "between two input frames", DEFAULT_SHARPEN, live));
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where the three stages filter: auto (GPU when usable, else CPU "
          "with a warning), cuda (GPU or fail) or cpu",
          GST_TYPE_CUDA_FILTERS_BACKEND, GST_CUDA_FILTERS_BACKEND_AUTO,
          in_ready));
  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "Cuda Device ID",
          "The GPU the three stages use (-1 = auto)", -1, G_MAXINT, -1,
          in_ready));
  g_object_class_install_property (gobject_class, PROP_CUDA_WAIT,
      g_param_spec_enum ("cuda-wait", "CUDA wait",
          "How threads wait for the GPU in the stages' CUDA context, which "
          "decoders and other elements share: blocking (blocking "
          "synchronisation while the stages run; the context's flags are "
          "given back at stop) or keep (left as it is)",
          GST_TYPE_CUDA_FILTERS_CUDA_WAIT, GST_CUDA_FILTERS_CUDA_WAIT_BLOCKING,
          in_ready));

  gst_element_class_set_static_metadata (element_class,
      "CUDA low-light enhancement", "Filter/Effect/Video/Hardware",
      "Brightens dark, noisy video on an NVIDIA GPU: non-local means "
      "denoising with automatic strength, then CLAHE, optionally sharpening",
      "cudafilters developers");
  gst_cuda_filters_base_class_add_pad_templates (element_class);

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_cuda_low_light_change_state);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_low_light_debug, "cudalowlight", 0,
      "CUDA low-light enhancement");
}

/* A stage of the chain, named after its factory, or null (with @missing
 * noted in self->broken) where the factory cannot be found. */
static GstElement *
make_stage (GstCudaLowLight * self, const char *factory, const char *missing)
{
  GstElement *stage = gst_element_factory_make (factory, factory);
  if (!stage) {
    GST_ERROR_OBJECT (self, "%s", missing);
    if (!self->broken)
      self->broken = missing;
  }
  return stage;
}

static void
gst_cuda_low_light_init (GstCudaLowLight * self)
{
  GstElementClass *klass = GST_ELEMENT_GET_CLASS (self);

  self->broken = nullptr;
  self->nlm = make_stage (self, "cudanlm", "there is no cudanlm element");
  self->clahe = make_stage (self, "cudaclahe", "there is no cudaclahe element");
  self->sharpen = make_stage (self, "cudasharpen",
      "there is no cudasharpen element");
  self->sharpen_wanted = DEFAULT_SHARPEN;
  self->sharpen_linked = FALSE;
  self->relink_pending = FALSE;
  if (self->broken) {
    /* Pads for the caps a parent may ask about; the bin refuses to start. */
    for (GstElement ** stage : {&self->nlm, &self->clahe, &self->sharpen})
      if (*stage) {
        gst_object_ref_sink (*stage);
        gst_clear_object (stage);
      }
    self->sinkpad = gst_ghost_pad_new_no_target_from_template ("sink",
        gst_element_class_get_pad_template (klass, "sink"));
    self->srcpad = gst_ghost_pad_new_no_target_from_template ("src",
        gst_element_class_get_pad_template (klass, "src"));
    gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);
    gst_element_add_pad (GST_ELEMENT (self), self->srcpad);
    return;
  }
  gst_bin_add (GST_BIN (self), self->nlm);
  gst_bin_add (GST_BIN (self), self->clahe);
  /* Off until `sharpen` says otherwise: out of the bin, in NULL. */
  gst_object_ref_sink (self->sharpen);
  g_object_set (self->nlm, "auto-strength", TRUE, "temporal-radius",
      DEFAULT_TEMPORAL_RADIUS, "auto-strength-scale", DEFAULT_DENOISE_STRENGTH,
      nullptr);
  g_object_set (self->clahe, "clip-limit", DEFAULT_CLIP_LIMIT,
      "temporal-smoothing", DEFAULT_TEMPORAL_SMOOTHING, nullptr);
  if (!gst_element_link (self->nlm, self->clahe)) {
    self->broken = "cudanlm does not link to cudaclahe";
    GST_ERROR_OBJECT (self, "%s", self->broken);
  }

  GstPad *nlm_sink = gst_element_get_static_pad (self->nlm, "sink");
  GstPad *clahe_sink = gst_element_get_static_pad (self->clahe, "sink");
  GstPad *clahe_src = gst_element_get_static_pad (self->clahe, "src");
  self->sinkpad = gst_ghost_pad_new_from_template ("sink", nlm_sink,
      gst_element_class_get_pad_template (klass, "sink"));
  self->srcpad = gst_ghost_pad_new_from_template ("src", clahe_src,
      gst_element_class_get_pad_template (klass, "src"));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  const GstPadProbeType buffers = (GstPadProbeType) (GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST);
  gst_pad_add_probe (clahe_sink, buffers, sync_clahe_bindings, self, nullptr);
  auto *strength = reinterpret_cast < DenoiseStrengthBinding * >(g_object_new
      (denoise_strength_binding_get_type (), "object", self->nlm, "name",
          "auto-strength-scale", nullptr));
  g_weak_ref_set (&strength->bin, self);
  gst_object_add_control_binding (GST_OBJECT (self->nlm),
      GST_CONTROL_BINDING (strength));

  gst_object_unref (clahe_src);
  gst_object_unref (clahe_sink);
  gst_object_unref (nlm_sink);
}
