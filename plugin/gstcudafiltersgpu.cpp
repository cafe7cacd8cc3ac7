#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersgpu.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/gpu_window_runner.h>

#include <stdexcept>
#include <vector>

namespace {

bool
env_flag (const gchar * name)
{
  const gchar *v = g_getenv (name);
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

}  // namespace

GstCudaFiltersGpu::Options
GstCudaFiltersGpu::Options::from_environment ()
{
  Options o;
  o.host_sync = env_flag ("CUDAFILTERS_HOST_SYNC");
  o.other_device_for_tests = env_flag ("CUDAFILTERS_TEST_OTHER_DEVICE");
  return o;
}

/* What the element holds while it runs on the GPU. Created and destroyed with
 * the context current. */
struct GstCudaFiltersGpu::State
{
  explicit State (const GstCudaFiltersContext & context) : streams (context) {}

  /* Declared before the runners, which are destroyed first. */
  GstCudaFiltersStreams streams;
  cudafilters::GpuFrameRunner runner;
  /* Whole-frame filters: holds the frames of their windows. */
  std::unique_ptr<cudafilters::GpuWindowRunner> window_runner;
  /* The chroma planes of the current device frame; kept so that its storage
   * is reused from frame to frame. */
  cudafilters::CarriedPlanes carried;
  /* Copies of the planes of frames in another device's memory. */
  std::vector<cudafilters::DevicePlane> staging;
};

namespace {

/* The element's context, current for the scope of a call that uses it. */
class Current
{
public:
  explicit Current (const GstCudaFiltersContext & context) : scope_ (context) {
    if (!scope_.pushed ())
      throw std::runtime_error ("could not make the CUDA context current");
  }

private:
  GstCudaFiltersScopedContext scope_;
};

}  // namespace

GstCudaFiltersGpu::GstCudaFiltersGpu (const Options & options)
    : options_ (options)
{
}

GstCudaFiltersGpu::~GstCudaFiltersGpu ()
{
  close ();
}

GstCudaFiltersStreams &
GstCudaFiltersGpu::streams ()
{
  return state_->streams;
}

bool
GstCudaFiltersGpu::open (GstElement * element, gint device_id,
    GstCudaFiltersEngine & engine, const GstVideoInfo & info,
    std::string & why, std::string & warning)
{
  /* Not close (): a context set on the element before it starts
   * (set_context) is the one to share, or to replace if it is lost. */
  release_state ();
  error_posted_ = false;
  if (!GstCudaFiltersContext::driver_loaded ()) {
    why = "the CUDA driver library (libcuda.so.1) could not be loaded";
    return false;
  }
  if (!context_.open (element, device_id, why))
    return false;
  /* A context shared with other elements (GstContext) stays unusable after a
   * fault in any of them: every call in it fails. */
  std::string fault;
  if (!context_.usable (fault)) {
    if (!context_.renew (element, why)) {
      why = "the CUDA context shared with other elements is unusable after an "
          "earlier fault (" + fault + "), and a new one could not be created: "
          + why;
      context_.close ();
      return false;
    }
    warning = fault;
  }

  return create_state (engine, info, why);
}

bool
GstCudaFiltersGpu::create_state (GstCudaFiltersEngine & engine,
    const GstVideoInfo & info, std::string & why)
{
  GstCudaFiltersScopedContext scope (context_);
  if (!scope.pushed ()) {
    why = "the CUDA context could not be made current";
    context_.close ();
    return false;
  }
  try {
    auto state = std::make_unique<State> (context_);
    engine.open_gpu ();
    if (engine.whole_frames ()) {
      state->window_runner = std::make_unique<cudafilters::GpuWindowRunner> ();
      state->window_runner->reset (engine.window_radius ());
    }
    state_ = std::move (state);
    engine_ = &engine;
    reserve (info);
  } catch (const std::exception & e) {
    why = e.what ();
    state_.reset ();
    engine_ = nullptr;
    engine.close_gpu ();
    context_.close ();
    return false;
  }
  return true;
}

void
GstCudaFiltersGpu::close ()
{
  release_state ();
  context_.close ();
}

void
GstCudaFiltersGpu::release_state ()
{
  if (!state_)
    return;
  GstCudaFiltersScopedContext scope (context_);
  state_.reset ();
  engine_->close_gpu ();
  engine_ = nullptr;
}

void
GstCudaFiltersGpu::finish ()
{
  if (!state_)
    return;
  const Current scope (context_);
  state_->runner.synchronize ();
  if (state_->window_runner)
    state_->window_runner->synchronize ();
}

void
GstCudaFiltersGpu::report_error (GstElement * element, const std::exception & e)
{
  if (error_posted_)
    return;
  error_posted_ = true;
  GST_ELEMENT_ERROR (element, LIBRARY, FAILED, ("CUDA processing failed."),
      ("%s", e.what ()));
}

void
GstCudaFiltersGpu::reserve (const GstVideoInfo & info)
{
  if (!state_ || info.finfo == nullptr)
    return;
  const Current scope (context_);
  state_->runner.reserve (GST_VIDEO_INFO_WIDTH (&info),
      GST_VIDEO_INFO_HEIGHT (&info), GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0));
}

#ifdef HAVE_GST_CUDA
GstCudaContext *
GstCudaFiltersGpu::context_to_adopt (GstBuffer * buffer, gint wanted) const
{
  if (!state_)
    return nullptr;
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  if (!gst_is_cuda_memory (mem))
    return nullptr;
  GstCudaContext *theirs = GST_CUDA_MEMORY_CAST (mem)->context;
  if (theirs == context_.gst_context ())
    return nullptr;
  guint their_device = 0;
  g_object_get (theirs, "cuda-device-id", &their_device, nullptr);
  if (options_.other_device_for_tests)
    their_device = (guint) wanted + 1;
  if (wanted >= 0 && their_device != (guint) wanted)
    return nullptr;
  return theirs;
}

bool
GstCudaFiltersGpu::adopt (GstCudaContext * theirs, const GstVideoInfo & info,
    std::string & why)
{
  GstCudaFiltersEngine & engine = *engine_;
  close ();
  context_.adopt (theirs);
  return create_state (engine, info, why);
}
#endif

bool
GstCudaFiltersGpu::on_other_device (GstBuffer * buffer) const
{
#ifdef HAVE_GST_CUDA
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  return gst_is_cuda_memory (mem) &&
      GST_CUDA_MEMORY_CAST (mem)->context != context_.gst_context ();
#else
  (void) buffer;
  return false;
#endif
}

void
GstCudaFiltersGpu::filter_host (cudafilters::ConstPlane src,
    cudafilters::Plane dst, cudafilters::FrameLevels * levels)
{
  const Current scope (context_);
  state_->runner.process_host (*engine_->gpu_plane (), src, dst, levels);
}

bool
GstCudaFiltersGpu::filter_device (const GstCudaFiltersFrame & in,
    GstCudaFiltersFrame & out, GstBuffer * inbuf, GstBuffer * outbuf,
    cudafilters::FrameLevels * levels, bool may_queue)
{
  const Current scope (context_);
  State & s = *state_;
  cudafilters::GpuPlaneFilter & filter = *engine_->gpu_plane ();
  const bool other_device = on_other_device (inbuf);
  may_queue = may_queue && !levels && !options_.host_sync && !other_device;

  cudafilters::CarriedPlanes & carried = s.carried;
  out.carried_from (in, carried);
  cudafilters::ConstPlane src = in.luma ();
  const cudafilters::Plane dst = out.luma_mut ();
  if (other_device) {
    /* Another device's planes are copied to ours first (with unified
     * addressing a plain copy crosses devices), after their producer. A
     * copy between device memories returns before it is done, on the
     * legacy stream, which the runner's stream does not wait for. */
    GstCudaFiltersStreams::wait_for_producer (inbuf);
    if (s.staging.size () < carried.size () + 1)
      s.staging.resize (carried.size () + 1);
    auto stage = [&](cudafilters::ConstPlane & plane, size_t i) {
      cudafilters::DevicePlane & copy = s.staging[i];
      copy.reserve ((int) plane.row_bytes (), plane.height);
      CUDAFILTERS_CHECK (cudaMemcpy2D (copy.data (), copy.pitch (), plane.data,
              plane.stride, plane.row_bytes (), plane.height,
              cudaMemcpyDefault));
      plane.data = copy.data ();
      plane.stride = copy.pitch ();
    };
    stage (src, 0);
    for (size_t i = 0; i < carried.size (); ++i)
      stage (carried[i].src, i + 1);
    CUDAFILTERS_CHECK (cudaStreamSynchronize (nullptr));
  }

  GstCudaFiltersStreams::Placement at;
  if (may_queue)
    at = s.streams.place (inbuf, outbuf, s.runner);
  if (at.work == nullptr) {
    GstCudaFiltersStreams::wait_for_producer (inbuf);
    s.runner.process_device (filter, src, dst, carried, levels,
        GstCudaFiltersStreams::stream_of (outbuf));
    GstCudaFiltersStreams::mark_finished (outbuf);
    return false;
  }
  if (at.work != at.output)
    s.runner.order_after (at.output, at.work);
  s.runner.enqueue_device (filter, src, dst, carried, at.work);
  if (at.work != at.output)
    s.runner.order_after (at.work, at.output);
  /* A fault of an earlier frame shows now at the latest: this frame is not
   * pushed. */
  s.runner.check_queued_work ();
  return true;
}

void
GstCudaFiltersGpu::window_reset (int radius)
{
  if (!state_)
    return;
  const Current scope (context_);
  state_->window_runner->reset (radius);
}

bool
GstCudaFiltersGpu::window_ready (bool draining) const
{
  return state_->window_runner->ready (draining);
}

void
GstCudaFiltersGpu::window_drop_next ()
{
  state_->window_runner->drop_next ();
}

void
GstCudaFiltersGpu::window_push (const cudafilters::FramePlanes & planes,
    GstBuffer * in, bool on_device)
{
  const Current scope (context_);
  cudafilters::GpuWindowRunner & runner = *state_->window_runner;
  if (!on_device) {
    runner.push_host (planes);
    return;
  }
  /* Another device's frame is copied on our stream, after its producer's
   * work on the host. */
  cudaStream_t stream = options_.host_sync || on_other_device (in) ? nullptr :
      GstCudaFiltersStreams::stream_of (in);
  if (!stream)
    GstCudaFiltersStreams::wait_for_producer (in);
  runner.push_device (planes, stream);
}

bool
GstCudaFiltersGpu::window_output (const cudafilters::FramePlanesOut & dst,
    GstBuffer * outbuf, bool on_device, cudafilters::FrameLevels * levels,
    bool may_queue)
{
  const Current scope (context_);
  cudafilters::GpuWindowRunner & runner = *state_->window_runner;
  cudafilters::GpuWindowFilter & filter = *engine_->gpu_window ();
  if (!on_device) {
    runner.output_host (filter, dst, levels);
    return false;
  }
  const bool queued = may_queue && !options_.host_sync && !levels &&
      state_->streams.output_stream (outbuf) != nullptr;
  runner.output_device (filter, dst, GstCudaFiltersStreams::stream_of (outbuf),
      queued, levels);
  if (queued)
    runner.check_queued_work ();
  else
    GstCudaFiltersStreams::mark_finished (outbuf);
  return queued;
}
