#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersflow.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

#include <deque>
#include <exception>
#include <type_traits>

#include <cudafilters/cpu_frame_runner.h>
#include <cudafilters/cpu_window_runner.h>
#include <cudafilters/cuda_check.h>

#include "gstcudafiltersframe.h"

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_filters_base_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_base_debug

bool
GstCudaFiltersStreaming::statistics_due (GstBuffer * buf)
{
  GST_OBJECT_LOCK (trans);
  const GstCudaFiltersStats::Settings settings = stats_settings;
  GST_OBJECT_UNLOCK (trans);
  return stats.due (trans, buf, settings);
}

void
GstCudaFiltersStreaming::note_host_paths (
    std::pair<GstCudaFiltersHostPath, GstCudaFiltersHostPath> paths)
{
  auto say = [this] (const char *side, GstCudaFiltersHostPath now,
      GstCudaFiltersHostPath & last) {
    if (now == GstCudaFiltersHostPath::kNone || now == last)
      return;
    last = now;
    GST_INFO_OBJECT (trans, "%s frames in system memory: %s", side,
        now == GstCudaFiltersHostPath::kPinned ?
        "page-locked, copied directly" :
        "pageable, staged by the host's threads (memory seen once, refused "
        "or past the cap; GST_DEBUG=cudafiltershostmemory:5 says which)");
  };
  say ("input", paths.first, host_paths.first);
  say ("output", paths.second, host_paths.second);
}

void
GstCudaFiltersStreaming::note_in_place (bool now)
{
  if (now == in_place)
    return;
  in_place = now;
  GST_INFO_OBJECT (trans, "%s", now ?
      "frames filtered in place: the input buffer is written and pushed, "
      "its other planes left where they are" :
      "frames filtered into output buffers, other planes copied");
}

namespace {

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

/* Runs @work; a failure becomes an element error, a CUDA one once until the
 * next start. */
template <typename Work> GstFlowReturn
guarded (GstCudaFiltersStreaming & s, const Work & work)
{
  try {
    work ();
  } catch (const cudafilters::CudaError & e) {
    s.gpu->report_error (GST_ELEMENT (s.trans), e);
    return GST_FLOW_ERROR;
  } catch (const std::exception & e) {
    GST_ELEMENT_ERROR (s.trans, LIBRARY, FAILED, ("Processing failed."),
        ("%s", e.what ()));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* The settings changed since the last frame, and a new history where one
 * is due, for the engine about to filter a frame. */
void
configure (GstCudaFiltersStreaming & s, GstCudaFiltersEngine & engine)
{
  GST_OBJECT_LOCK (s.trans);
  engine.collect_settings (s.settings_version);
  GST_OBJECT_UNLOCK (s.trans);
  if (s.restart_history.exchange (false))
    engine.reset_history ();
}

/* Controlled properties take their values at the stream time of @frame,
 * the frame about to be filtered (in a window, r frames after it came). */
void
sync_controls (GstCudaFiltersStreaming & s, GstBuffer * frame)
{
  const GstClockTime stream_time = gst_cuda_filters_stream_time (s.trans,
      GST_BUFFER_TIMESTAMP (frame));
  if (GST_CLOCK_TIME_IS_VALID (stream_time))
    gst_object_sync_values (GST_OBJECT (s.trans), stream_time);
}

/* QoS off while frames may be held, and as the user left it otherwise:
 * never turned on by the element. */
void
allow_qos (GstCudaFiltersStreaming & s, bool allowed)
{
  if (!allowed && !s.qos_before_window) {
    s.qos_before_window = gst_base_transform_is_qos_enabled (s.trans);
    gst_base_transform_set_qos_enabled (s.trans, FALSE);
  } else if (allowed && s.qos_before_window) {
    gst_base_transform_set_qos_enabled (s.trans, *s.qos_before_window);
    s.qos_before_window.reset ();
  }
}

/* The frames held by @cpu and the GPU side forgotten, windows of
 * 2 @radius + 1 frames from now on; QoS (dropping late frames) only where
 * no frame is held back, since a frame held cannot be dropped without
 * changing its neighbours' windows. */
void
reset_windows (GstCudaFiltersStreaming & s, cudafilters::CpuWindowRunner & cpu,
    int radius)
{
  cpu.reset (radius);
  if (s.on_gpu ()) {
    try {
      s.gpu->window_reset (radius);
    } catch (const std::exception & e) {
      GST_WARNING_OBJECT (s.trans, "resetting the frames held: %s", e.what ());
    }
  }
  allow_qos (s, radius == 0);
}

/* The map flags of a frame placed on the device, or on the host. */
GstMapFlags
map_flags (GstMapFlags access, bool device)
{
  return (GstMapFlags) (access | (device ? cuda_map_flag () : 0));
}

/* A buffer filtered in place keeps the metas an output buffer would have
 * been given (GstBaseTransform's copy_metadata): those the element's
 * transform_meta would not copy go, so that a frame carries the same
 * metas whichever way it was filtered. Its video meta, its memory's metas
 * and its pool's stay: they describe the buffer itself. */
void
drop_untransformed_metas (GstBaseTransform * trans, GstBuffer * buf)
{
  gst_buffer_foreach_meta (buf, [](GstBuffer * b, GstMeta ** meta,
          gpointer data) -> gboolean {
        auto *t = static_cast<GstBaseTransform *> (data);
        GstBaseTransformClass *klass = GST_BASE_TRANSFORM_GET_CLASS (t);
        static const GQuark memory_tag =
            g_quark_from_static_string (GST_META_TAG_MEMORY_STR);
        const GType api = (*meta)->info->api;
        if (api == GST_VIDEO_META_API_TYPE ||
            GST_META_FLAG_IS_SET (*meta, GST_META_FLAG_POOLED) ||
            GST_META_FLAG_IS_SET (*meta, GST_META_FLAG_LOCKED) ||
            gst_meta_api_type_has_tag (api, memory_tag))
          return TRUE;
        if (klass->transform_meta && !klass->transform_meta (t, b, *meta, b))
          *meta = nullptr;
        return TRUE;
      }, trans);
}

/* An output buffer for @in, from the element's prepare_output_buffer: OK
 * comes with a buffer. A pool that gives none and says OK would lose the
 * frame without a word, so that is an error. */
GstFlowReturn
prepare_output (GstCudaFiltersStreaming & s, GstBuffer * in, GstBuffer ** out)
{
  *out = nullptr;
  GstFlowReturn ret = GST_BASE_TRANSFORM_GET_CLASS (s.trans)->
      prepare_output_buffer (s.trans, in, out);
  if (ret == GST_FLOW_OK && *out == nullptr) {
    GST_ELEMENT_ERROR (s.trans, RESOURCE, FAILED,
        ("No output buffer for a frame."),
        ("prepare_output_buffer returned OK without a buffer"));
    ret = GST_FLOW_ERROR;
  }
  if (ret != GST_FLOW_OK) {
    GST_WARNING_OBJECT (s.trans, "no output buffer: %s",
        gst_flow_get_name (ret));
    gst_clear_buffer (out);
  }
  return ret;
}

/* --------------------------------------------- one frame in, one out */

/* Each input frame gives one output frame at once, as GstBaseTransform's
 * default: an output buffer, then the transform. A plane engine filters the
 * first (luma or gray) plane and the others are carried; a window engine of
 * radius 0 filters the whole frame where it lies, with no copy into a
 * window. On the GPU a plane engine filters a frame with planes to carry
 * in place where the element may write its buffer (a source's pool
 * buffer that no one else holds) and its memory is page-locked, as
 * GstBaseTransform's transform_ip would: the carried planes then cost no
 * copy, and the buffer leaves. (Pageable memory would be staged both ways
 * in place: it goes into a page-locked buffer of the element's.) */
template <typename Engine>
class FrameFlow final : public GstCudaFiltersFlow
{
  static constexpr bool kPlanes =
      std::is_same_v<Engine, GstCudaFiltersPlaneEngine>;

public:
  FrameFlow (GstCudaFiltersStreaming & s, Engine & engine)
      : s_ (s), engine_ (engine), cpu_ (s.runner_options) {}

  GstFlowReturn generate (GstBuffer * in, GstBuffer ** out) override {
    *out = nullptr;
    if (!in)
      return GST_FLOW_OK;
    sync_controls (s_, in);
    cudafilters::FrameLevels levels;
    cudafilters::FrameLevels *want = s_.statistics_due (in) ? &levels :
        nullptr;
    GstCudaFiltersFrameRequest request;
    request.in = in;
    request.make_output = [this, in](GstBuffer ** made) {
      return prepare_output (s_, in, made);
    };
    request.info = &s_.info;
    request.cuda_caps = s_.cuda_caps;
    request.levels_due = want != nullptr;
    request.one_plane = kPlanes;
    request.video_meta_downstream = s_.downstream_video_meta;
    GstCudaFiltersHostLease lease;
    GstCudaFiltersPlacement at;
    GstFlowReturn ret = s_.gpu->place (request, lease, at, out);
    if (ret == GST_FLOW_OK) {
      s_.note_in_place (at.in_place);
      s_.note_host_paths ({at.in_path, at.out_path});
      if (at.in_place) {
        ret = transform_in_place (in, levels, want);
        if (ret == GST_FLOW_OK)
          *out = in;
        else
          gst_buffer_unref (in);
        return ret;
      }
      ret = transform (at, in, *out, levels, want);
    }
    if (ret != GST_FLOW_OK)
      gst_clear_buffer (out);
    gst_buffer_unref (in);
    return ret;
  }

  /* Nothing is held back: a late frame can be dropped (a window flow of
   * an earlier start may have turned QoS off). */
  void reset () override {
    if constexpr (kPlanes)
      allow_qos (s_, true);
    else
      reset_windows (s_, cpu_, 0);
  }

private:
  /* The frame @inbuf -> @outbuf, placed @at; its levels into @levels where
   * @want. */
  GstFlowReturn transform (const GstCudaFiltersPlacement & at,
      GstBuffer * inbuf, GstBuffer * outbuf,
      cudafilters::FrameLevels & levels, cudafilters::FrameLevels * want);
  /* The frame of @buf, placed in place (its memory page-locked, and leased
   * by the caller). */
  GstFlowReturn transform_in_place (GstBuffer * buf,
      cudafilters::FrameLevels & levels, cudafilters::FrameLevels * want);
  /* The frame of @inbuf, mapped: the history restarted at a DISCONT, the
   * settings collected, @work run (an error becomes an element error), then
   * the statistics message where @want. */
  template <typename Work> GstFlowReturn run_frame (GstBuffer * inbuf,
      const cudafilters::FrameLevels & levels,
      const cudafilters::FrameLevels * want, const Work & work);
  void filter (const GstCudaFiltersPlacement & at,
      const GstCudaFiltersFrame & in, GstCudaFiltersFrame & out,
      GstBuffer * inbuf, GstBuffer * outbuf, cudafilters::FrameLevels * want);

  GstCudaFiltersStreaming & s_;
  Engine & engine_;
  std::conditional_t<kPlanes, cudafilters::CpuFrameRunner,
      cudafilters::CpuWindowRunner> cpu_;
};

template <typename Engine> GstFlowReturn
FrameFlow<Engine>::transform (const GstCudaFiltersPlacement & at,
    GstBuffer * inbuf, GstBuffer * outbuf, cudafilters::FrameLevels & levels,
    cudafilters::FrameLevels * want)
{
  GstElement *element = GST_ELEMENT (s_.trans);
  GST_LOG_OBJECT (s_.trans, "frame on the %s, %s", at.in_device ? "device" :
      "host", at.queued () ? "queued" : "waited for");

  GstCudaFiltersFrame in, out;
  if (!gst_cuda_filters_map_frame (element, in, s_.info, inbuf,
          map_flags (GST_MAP_READ, at.in_device)) ||
      !gst_cuda_filters_map_frame (element, out, s_.info, outbuf,
          map_flags (GST_MAP_WRITE, at.out_device)))
    return GST_FLOW_ERROR;

  return run_frame (inbuf, levels, want, [&] {
        filter (at, in, out, inbuf, outbuf, want);
      });
}

template <typename Engine> template <typename Work> GstFlowReturn
FrameFlow<Engine>::run_frame (GstBuffer * inbuf,
    const cudafilters::FrameLevels & levels,
    const cudafilters::FrameLevels * want, const Work & work)
{
  if (GST_BUFFER_FLAG_IS_SET (inbuf, GST_BUFFER_FLAG_DISCONT))
    s_.restart_history = true;

  GstFlowReturn ret = guarded (s_, [&] {
        configure (s_, engine_);
        work ();
      });
  if (ret == GST_FLOW_OK && want)
    GstCudaFiltersStats::post (s_.trans, inbuf, levels);
  return ret;
}

template <typename Engine> GstFlowReturn
FrameFlow<Engine>::transform_in_place (GstBuffer * buf,
    cudafilters::FrameLevels & levels, cudafilters::FrameLevels * want)
{
  if constexpr (!kPlanes) {
    g_return_val_if_reached (GST_FLOW_ERROR);
  } else {
    GstElement *element = GST_ELEMENT (s_.trans);
    GST_LOG_OBJECT (s_.trans, "frame on the host, filtered in place");
    drop_untransformed_metas (s_.trans, buf);

    GstCudaFiltersFrame frame;
    if (!gst_cuda_filters_map_frame (element, frame, s_.info, buf,
            (GstMapFlags) (GST_MAP_READ | GST_MAP_WRITE)))
      return GST_FLOW_ERROR;

    return run_frame (buf, levels, want, [&] {
          s_.gpu->filter_host_in_place (engine_.gpu (), frame, want);
        });
  }
}

template <> void
FrameFlow<GstCudaFiltersPlaneEngine>::filter (const GstCudaFiltersPlacement &
    at, const GstCudaFiltersFrame & in, GstCudaFiltersFrame & out,
    GstBuffer * inbuf, GstBuffer * outbuf, cudafilters::FrameLevels * want)
{
  if (at.in_device) {
    s_.gpu->filter_device (at, engine_.gpu (), in, out, inbuf, outbuf, want);
    return;
  }
  /* Only the first (luma or gray) plane is filtered; the others are
   * carried. */
  if (s_.on_gpu ()) {
    s_.gpu->filter_host (at, engine_.gpu (), in, out, want);
    return;
  }
  cpu_.process (engine_.cpu (), in.luma (), out.luma_mut (), want);
  for (guint p = 1; p < in.n_planes (); ++p)
    out.copy_plane_from (in, p);
}

template <> void
FrameFlow<GstCudaFiltersWindowEngine>::filter (const GstCudaFiltersPlacement &
    at, const GstCudaFiltersFrame & in, GstCudaFiltersFrame & out,
    GstBuffer * inbuf, GstBuffer * outbuf, cudafilters::FrameLevels * want)
{
  const cudafilters::FramePlanes src = in.components ();
  const cudafilters::FramePlanesOut dst = out.components_mut ();
  if (s_.on_gpu ())
    s_.gpu->filter_frame (at, engine_.gpu (), src, dst, inbuf, outbuf, want);
  else
    cpu_.filter_frame (engine_.cpu (), src, dst, want);
}

/* ------------------------------------------------------- whole frames */

class WindowFlow final : public GstCudaFiltersFlow
{
public:
  WindowFlow (GstCudaFiltersStreaming & s, GstCudaFiltersWindowEngine & engine)
      : s_ (s), engine_ (engine), radius_ (engine.radius ()),
        cpu_ (s.runner_options) {}
  ~WindowFlow () override { forget_waiting (false); }

  GstFlowReturn generate (GstBuffer * in, GstBuffer ** out) override;
  GstFlowReturn drain () override;
  void reset () override;
  bool holds_frames () const override { return !waiting_.empty (); }
  bool hold_event (GstEvent * event) override;
  GstClockTime latency () const override;

private:
  bool ready (bool draining) const {
    if (waiting_.empty ())
      return false;
    return s_.on_gpu () ? s_.gpu->window_ready (draining) :
        cpu_.ready (draining);
  }
  GstFlowReturn push (GstBuffer * in);
  GstFlowReturn output (GstBuffer ** out);
  void release_events ();
  void forget_waiting (bool streaming);
  /* Posts a LATENCY message when the latency has grown past what was last
   * said (new caps of a lower rate, longer frames without a rate), so that
   * a live pipeline asks again and its sinks wait long enough. */
  void announce_latency ();

  GstCudaFiltersStreaming & s_;
  GstCudaFiltersWindowEngine & engine_;
  const int radius_;
  cudafilters::CpuWindowRunner cpu_;
  /* The metadata of the frames not yet filtered, oldest first (buffers
   * without memory: upstream's buffers are released as soon as their frame
   * is copied). */
  std::deque<GstBuffer *> waiting_;
  /* Frames that have entered the window since the start; those not in
   * waiting_ have left it. */
  guint64 frames_in_ = 0;
  /* Serialized events held, each with the number of frames that go
   * downstream before it. */
  std::deque<std::pair<guint64, GstEvent *>> events_;
  /* Duration of the last input frame: the latency unit when the caps have
   * no frame rate. Under the object lock. */
  GstClockTime last_duration_ = GST_CLOCK_TIME_NONE;
  /* The latency last announced. Streaming thread. */
  GstClockTime announced_latency_ = 0;
};

/* Forgets the frames and events held; while @streaming, the events that
 * stay with the stream (tags, a new stream) go with the next frame, the
 * others go with the frames. */
void
WindowFlow::forget_waiting (bool streaming)
{
  for (GstBuffer *meta : waiting_)
    gst_buffer_unref (meta);
  waiting_.clear ();
  for (auto &[frames, event] : events_) {
    if (streaming && GST_EVENT_IS_STICKY (event))
      gst_pad_store_sticky_event (GST_BASE_TRANSFORM_SRC_PAD (s_.trans),
          event);
    gst_event_unref (event);
  }
  events_.clear ();
}

bool
WindowFlow::hold_event (GstEvent * event)
{
  release_events ();
  if (waiting_.empty ())
    return false;
  events_.emplace_back (frames_in_, event);
  return true;
}

/* Pushes the events held whose frames have all gone downstream. */
void
WindowFlow::release_events ()
{
  const guint64 frames_out = frames_in_ - waiting_.size ();
  while (!events_.empty () && events_.front ().first <= frames_out) {
    GstEvent *event = events_.front ().second;
    events_.pop_front ();
    gst_pad_push_event (GST_BASE_TRANSFORM_SRC_PAD (s_.trans), event);
  }
}

void
WindowFlow::reset ()
{
  forget_waiting (true);
  reset_windows (s_, cpu_, radius_);
  announce_latency ();
}

void
WindowFlow::announce_latency ()
{
  GST_OBJECT_LOCK (s_.trans);
  const GstClockTime now = latency ();
  GST_OBJECT_UNLOCK (s_.trans);
  if (now <= announced_latency_)
    return;
  GST_DEBUG_OBJECT (s_.trans, "latency now %" GST_TIME_FORMAT,
      GST_TIME_ARGS (now));
  announced_latency_ = now;
  gst_element_post_message (GST_ELEMENT (s_.trans),
      gst_message_new_latency (GST_OBJECT (s_.trans)));
}

/* Copies the frame in @in into the window and keeps its metadata. */
GstFlowReturn
WindowFlow::push (GstBuffer * in)
{
  const bool gpu = s_.on_gpu ();
  GstCudaFiltersFrameRequest request;
  request.in = in;
  request.info = &s_.info;
  request.cuda_caps = s_.cuda_caps;
  GstCudaFiltersHostLease lease;
  GstCudaFiltersPlacement at;
  s_.gpu->place (request, lease, at, nullptr);
  s_.note_host_paths ({at.in_path, at.out_path});
  GstCudaFiltersFrame frame;
  if (!gst_cuda_filters_map_frame (GST_ELEMENT (s_.trans), frame, s_.info, in,
          map_flags (GST_MAP_READ, at.in_device)))
    return GST_FLOW_ERROR;
  const cudafilters::FramePlanes planes = frame.components ();
  const GstFlowReturn ret = guarded (s_, [&] {
        if (gpu)
          s_.gpu->window_push (at, planes, in);
        else
          cpu_.push (planes);
      });
  if (ret != GST_FLOW_OK)
    return ret;

  GstBuffer *meta = gst_buffer_new ();
  gst_buffer_copy_into (meta, in, (GstBufferCopyFlags) (GST_BUFFER_COPY_FLAGS |
          GST_BUFFER_COPY_TIMESTAMPS | GST_BUFFER_COPY_META), 0, -1);
  waiting_.push_back (meta);
  ++frames_in_;
  if (GST_BUFFER_DURATION_IS_VALID (in)) {
    GST_OBJECT_LOCK (s_.trans);
    last_duration_ = GST_BUFFER_DURATION (in);
    GST_OBJECT_UNLOCK (s_.trans);
    announce_latency ();
  }
  return GST_FLOW_OK;
}

/* Filters the next frame into a new output buffer with its metadata. */
GstFlowReturn
WindowFlow::output (GstBuffer ** out)
{
  GstBuffer *meta = waiting_.front ();
  waiting_.pop_front ();
  GstFlowReturn ret = prepare_output (s_, meta, out);
  cudafilters::FrameLevels levels;
  cudafilters::FrameLevels *want = nullptr;
  const bool gpu = s_.on_gpu ();
  GstCudaFiltersPlacement at;
  GstCudaFiltersHostLease lease;
  GstCudaFiltersFrame frame;
  if (ret == GST_FLOW_OK) {
    want = s_.statistics_due (meta) ? &levels : nullptr;
    GstCudaFiltersFrameRequest request;
    request.out = *out;
    request.info = &s_.info;
    request.cuda_caps = s_.cuda_caps;
    request.levels_due = want != nullptr;
    s_.gpu->place (request, lease, at, nullptr);
    s_.note_host_paths ({at.in_path, at.out_path});
    if (!gst_cuda_filters_map_frame (GST_ELEMENT (s_.trans), frame, s_.info,
            *out, map_flags (GST_MAP_WRITE, at.out_device)))
      ret = GST_FLOW_ERROR;
  }
  if (ret != GST_FLOW_OK) {
    /* The frame is dropped with its metadata; the window moves on. */
    if (s_.on_gpu ())
      s_.gpu->window_drop_next ();
    else
      cpu_.drop_next ();
    gst_clear_buffer (out);
    gst_buffer_unref (meta);
    return ret;
  }

  const cudafilters::FramePlanesOut dst = frame.components_mut ();
  /* The first frame of a new window history starts the engine's own too. */
  if (GST_BUFFER_FLAG_IS_SET (meta, GST_BUFFER_FLAG_DISCONT))
    s_.restart_history = true;
  sync_controls (s_, meta);
  ret = guarded (s_, [&] {
        configure (s_, engine_);
        if (gpu)
          s_.gpu->window_output (at, engine_.gpu (), dst, *out, want);
        else
          cpu_.output (engine_.cpu (), dst, want);
      });
  if (ret == GST_FLOW_OK && want)
    GstCudaFiltersStats::post (s_.trans, meta, levels);
  gst_buffer_unref (meta);
  if (ret != GST_FLOW_OK)
    gst_clear_buffer (out);
  return ret;
}

/* The frame queued by submit_input_buffer joins the window, and the oldest
 * frame whose window is complete leaves. */
GstFlowReturn
WindowFlow::generate (GstBuffer * in, GstBuffer ** out)
{
  *out = nullptr;
  /* The frame that left last has been pushed: the events behind it follow. */
  release_events ();
  GstFlowReturn ret = in ? push (in) : GST_FLOW_OK;
  if (ret == GST_FLOW_OK && ready (false))
    ret = output (out);
  if (!in)
    return ret;
  /* @in goes back upstream once the copy into the window has read it; the
   * wait for the output frame mostly covered that copy. */
  const GstFlowReturn settled = s_.on_gpu () ?
      guarded (s_, [&] { s_.gpu->window_settle (); }) : GST_FLOW_OK;
  gst_buffer_unref (in);
  if (ret == GST_FLOW_OK && settled != GST_FLOW_OK) {
    gst_clear_buffer (out);
    ret = settled;
  }
  return ret;
}

/* Filters every frame still held, from the frames before it (the window
 * clipped at the last one), pushes them downstream, and starts afresh. */
GstFlowReturn
WindowFlow::drain ()
{
  GstFlowReturn ret = GST_FLOW_OK;
  release_events ();
  while (ret == GST_FLOW_OK && ready (true)) {
    GstBuffer *out = nullptr;
    ret = output (&out);
    if (ret == GST_FLOW_OK)
      ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (s_.trans), out);
    if (ret == GST_FLOW_OK)
      release_events ();
  }
  reset ();
  return ret;
}

/* The latency a window of radius r adds: r frames. */
GstClockTime
WindowFlow::latency () const
{
  const gint n = GST_VIDEO_INFO_FPS_N (&s_.info);
  const gint d = GST_VIDEO_INFO_FPS_D (&s_.info);
  if (n > 0 && d > 0)
    return radius_ * gst_util_uint64_scale_int (GST_SECOND, d, n);
  if (GST_CLOCK_TIME_IS_VALID (last_duration_))
    return radius_ * last_duration_;
  GST_DEBUG_OBJECT (s_.trans, "no frame rate or duration yet: latency unknown");
  return 0;
}

}  // namespace

std::unique_ptr<GstCudaFiltersFlow>
gst_cuda_filters_flow_new (GstCudaFiltersStreaming & stream,
    GstCudaFiltersEngine & engine)
{
  GstCudaFiltersWindowEngine *windows = engine.windows ();
  if (!windows)
    return std::make_unique<FrameFlow<GstCudaFiltersPlaneEngine>> (stream,
        *engine.planes ());
  /* Without neighbours to wait for, a frame is filtered where it lies. */
  if (windows->radius () == 0)
    return std::make_unique<FrameFlow<GstCudaFiltersWindowEngine>> (stream,
        *windows);
  return std::make_unique<WindowFlow> (stream, *windows);
}
