#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersflow.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

#include <deque>
#include <exception>

#include <cudafilters/cpu_frame_runner.h>
#include <cudafilters/cpu_window_runner.h>
#include <cudafilters/cuda_check.h>

#include "gstcudafiltersframe.h"

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_filters_base_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_base_debug

bool
GstCudaFiltersStream::statistics_due (GstBuffer * buf)
{
  GST_OBJECT_LOCK (trans);
  const GstCudaFiltersStats::Settings settings = stats_settings;
  GST_OBJECT_UNLOCK (trans);
  return stats.due (trans, buf, settings);
}

namespace {

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

/* Runs @work; a failure becomes an element error, a CUDA one once until the
 * next start. */
template <typename Work> GstFlowReturn
guarded (GstCudaFiltersStream & s, const Work & work)
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

/* Gives the engine about to filter a frame the element's settings, and a
 * new history where one is due. */
void
configure (GstCudaFiltersStream & s, bool gpu)
{
  s.engine->configure (gpu);
  if (s.restart_history.exchange (false))
    s.engine->reset_history ();
}

/* An output buffer for @in, from the element's prepare_output_buffer: OK
 * comes with a buffer. A pool that gives none and says OK would lose the
 * frame without a word, so that is an error. */
GstFlowReturn
prepare_output (GstCudaFiltersStream & s, GstBuffer * in, GstBuffer ** out)
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

/* ------------------------------------------------------------ one plane */

class PlaneFlow final : public GstCudaFiltersFlow
{
public:
  explicit PlaneFlow (GstCudaFiltersStream & s) : s_ (s) {}

  /* As GstBaseTransform's default: an output buffer, then the transform. */
  GstFlowReturn generate (GstBuffer * in, GstBuffer ** out) override {
    *out = nullptr;
    if (!in)
      return GST_FLOW_OK;
    GstFlowReturn ret = prepare_output (s_, in, out);
    if (ret != GST_FLOW_OK) {
      gst_buffer_unref (in);
      return ret;
    }
    ret = transform (in, *out);
    gst_buffer_unref (in);
    return ret;
  }

private:
  GstFlowReturn transform (GstBuffer * inbuf, GstBuffer * outbuf);

  GstCudaFiltersStream & s_;
  cudafilters::CpuFrameRunner cpu_;
};

GstFlowReturn
PlaneFlow::transform (GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstElement *element = GST_ELEMENT (s_.trans);
  /* CUDA memory on the GPU path is mapped as device pointers; anywhere else
   * frames are mapped to host memory (GstCudaMemory downloads itself). */
  const bool on_device = s_.on_gpu () && s_.cuda_caps &&
      is_cuda_memory (inbuf) && is_cuda_memory (outbuf);
  const GstMapFlags device = on_device ? cuda_map_flag () : (GstMapFlags) 0;
  GST_LOG_OBJECT (s_.trans, "frame mapped on the %s", on_device ? "device" :
      "host");

  GstCudaFiltersFrame in, out;
  if (!gst_cuda_filters_map_frame (element, in, s_.info, inbuf,
          (GstMapFlags) (GST_MAP_READ | device)) ||
      !gst_cuda_filters_map_frame (element, out, s_.info, outbuf,
          (GstMapFlags) (GST_MAP_WRITE | device)))
    return GST_FLOW_ERROR;

  if (GST_BUFFER_FLAG_IS_SET (inbuf, GST_BUFFER_FLAG_DISCONT))
    s_.restart_history = true;
  cudafilters::FrameLevels levels;
  cudafilters::FrameLevels *want = s_.statistics_due (inbuf) ? &levels :
      nullptr;

  GstFlowReturn ret = guarded (s_, [&] {
        configure (s_, s_.on_gpu ());
        if (on_device) {
          const bool queued = s_.gpu->filter_device (in, out, inbuf, outbuf,
              want, true);
          GST_LOG_OBJECT (s_.trans, "device frame %s", queued ? "queued" :
              "waited for");
          return;
        }
        if (s_.on_gpu ())
          s_.gpu->filter_host (in.luma (), out.luma_mut (), want);
        else
          cpu_.process (*s_.engine->cpu_plane (), in.luma (), out.luma_mut (),
              want);
        /* Only the first (luma or gray) plane is filtered; the others are
         * carried. */
        for (guint p = 1; p < in.n_planes (); ++p)
          out.copy_plane_from (in, p);
      });
  if (ret == GST_FLOW_OK && want)
    GstCudaFiltersStats::post (s_.trans, inbuf, levels);
  return ret;
}

/* ------------------------------------------------------- whole frames */

class WindowFlow final : public GstCudaFiltersFlow
{
public:
  explicit WindowFlow (GstCudaFiltersStream & s)
      : s_ (s), radius_ (s.engine->window_radius ()) {}
  ~WindowFlow () override { forget_waiting (); }

  GstFlowReturn generate (GstBuffer * in, GstBuffer ** out) override;
  GstFlowReturn drain () override;
  void reset () override;
  bool holds_frames () const override { return !waiting_.empty (); }
  GstClockTime latency () const override;

private:
  bool ready (bool draining) const {
    return !waiting_.empty () && (s_.on_gpu () ? s_.gpu->window_ready (draining) :
        cpu_.ready (draining));
  }
  GstFlowReturn push (GstBuffer * in);
  GstFlowReturn output (GstBuffer ** out);
  void forget_waiting ();

  GstCudaFiltersStream & s_;
  const int radius_;
  cudafilters::CpuWindowRunner cpu_;
  /* The metadata of the frames not yet filtered, oldest first (buffers
   * without memory: upstream's buffers are released as soon as their frame
   * is copied). */
  std::deque<GstBuffer *> waiting_;
  /* Duration of the last input frame: the latency unit when the caps have
   * no frame rate. Under the object lock. */
  GstClockTime last_duration_ = GST_CLOCK_TIME_NONE;
};

void
WindowFlow::forget_waiting ()
{
  for (GstBuffer *meta : waiting_)
    gst_buffer_unref (meta);
  waiting_.clear ();
}

void
WindowFlow::reset ()
{
  forget_waiting ();
  cpu_.reset (radius_);
  if (s_.on_gpu ()) {
    try {
      s_.gpu->window_reset (radius_);
    } catch (const std::exception & e) {
      GST_WARNING_OBJECT (s_.trans, "frames held failed: %s", e.what ());
    }
  }
  /* A frame held back cannot be dropped for lateness without changing its
   * neighbours' windows: QoS only without a window. */
  gst_base_transform_set_qos_enabled (s_.trans, radius_ == 0);
}

/* Copies the frame in @in into the window and keeps its metadata. */
GstFlowReturn
WindowFlow::push (GstBuffer * in)
{
  const bool on_device = s_.on_gpu () && s_.cuda_caps && is_cuda_memory (in);
  GstCudaFiltersFrame frame;
  if (!gst_cuda_filters_map_frame (GST_ELEMENT (s_.trans), frame, s_.info, in,
          (GstMapFlags) (GST_MAP_READ | (on_device ? cuda_map_flag () : 0))))
    return GST_FLOW_ERROR;
  const cudafilters::FramePlanes planes = frame.components ();
  const GstFlowReturn ret = guarded (s_, [&] {
        if (s_.on_gpu ())
          s_.gpu->window_push (planes, in, on_device);
        else
          cpu_.push (planes);
      });
  if (ret != GST_FLOW_OK)
    return ret;

  GstBuffer *meta = gst_buffer_new ();
  gst_buffer_copy_into (meta, in, (GstBufferCopyFlags) (GST_BUFFER_COPY_FLAGS |
          GST_BUFFER_COPY_TIMESTAMPS | GST_BUFFER_COPY_META), 0, -1);
  waiting_.push_back (meta);
  if (GST_BUFFER_DURATION_IS_VALID (in)) {
    GST_OBJECT_LOCK (s_.trans);
    last_duration_ = GST_BUFFER_DURATION (in);
    GST_OBJECT_UNLOCK (s_.trans);
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
  const bool on_device = ret == GST_FLOW_OK && s_.on_gpu () && s_.cuda_caps &&
      is_cuda_memory (*out);
  GstCudaFiltersFrame frame;
  if (ret == GST_FLOW_OK && !gst_cuda_filters_map_frame (GST_ELEMENT (s_.trans),
          frame, s_.info, *out, (GstMapFlags) (GST_MAP_WRITE |
              (on_device ? cuda_map_flag () : 0))))
    ret = GST_FLOW_ERROR;
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
  cudafilters::FrameLevels levels;
  cudafilters::FrameLevels *want = s_.statistics_due (meta) ? &levels : nullptr;
  ret = guarded (s_, [&] {
        configure (s_, s_.on_gpu ());
        if (s_.on_gpu ())
          s_.gpu->window_output (dst, *out, on_device, want, true);
        else
          cpu_.output (*s_.engine->cpu_window (), dst, want);
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
  if (in) {
    const GstFlowReturn ret = push (in);
    gst_buffer_unref (in);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  if (!ready (false))
    return GST_FLOW_OK;
  return output (out);
}

/* Filters every frame still held, from the frames before it (the window
 * clipped at the last one), pushes them downstream, and starts afresh. */
GstFlowReturn
WindowFlow::drain ()
{
  GstFlowReturn ret = GST_FLOW_OK;
  while (ret == GST_FLOW_OK && ready (true)) {
    GstBuffer *out = nullptr;
    ret = output (&out);
    if (ret == GST_FLOW_OK)
      ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (s_.trans), out);
  }
  reset ();
  return ret;
}

/* The latency a window of radius r adds: r frames. */
GstClockTime
WindowFlow::latency () const
{
  if (radius_ == 0)
    return 0;
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
gst_cuda_filters_flow_new (GstCudaFiltersStream & stream)
{
  if (stream.engine->whole_frames ())
    return std::make_unique<WindowFlow> (stream);
  return std::make_unique<PlaneFlow> (stream);
}
