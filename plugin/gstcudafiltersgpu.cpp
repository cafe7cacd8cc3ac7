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

#include "gstcudafiltershostallocator.h"

#include <atomic>
#include <optional>
#include <stdexcept>
#include <vector>

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_filters_base_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_base_debug

/* What the element holds while it runs on the GPU. Created and destroyed with
 * the context current. */
struct GstCudaFiltersGpu::State
{
  State (const GstCudaFiltersContext & context,
      const cudafilters::RunnerOptions & options)
      : streams (context), runner (options), options (options),
        host_frames_in_flight (context.host_frames_in_flight ()) {}

  /* The context's scheduling (cuda-wait=blocking), given back last. */
  std::unique_ptr<GstCudaFiltersBlockingWaits> blocking_waits;
  /* Declared before the runners, which are destroyed first. */
  GstCudaFiltersStreams streams;
  cudafilters::GpuFrameRunner runner;
  /* Whole-frame filters: holds the frames of their windows. */
  std::unique_ptr<cudafilters::GpuWindowRunner> window_runner;
  cudafilters::RunnerOptions options;
  /* The device's count, which outlives the state. */
  std::atomic<int> & host_frames_in_flight;

  cudafilters::GpuWindowRunner & windows () {
    if (!window_runner)
      throw std::logic_error ("a window call on a filter of planes");
    return *window_runner;
  }
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

GstCudaFiltersGpu::GstCudaFiltersGpu (const GstCudaFiltersEnvironment &
    environment)
    : options_ (environment)
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
    GstCudaFiltersEngine & engine, GstCudaFiltersCudaWait wait,
    std::string & why, std::string & replaced, std::string & not_blocking)
{
  wait_ = wait;
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
    replaced = fault;
  }

  return create_state (engine, why, not_blocking);
}

bool
GstCudaFiltersGpu::create_state (GstCudaFiltersEngine & engine,
    std::string & why, std::string & not_blocking)
{
  GstCudaFiltersScopedContext scope (context_);
  if (!scope.pushed ()) {
    why = "the CUDA context could not be made current";
    context_.close ();
    return false;
  }
  try {
    auto state = std::make_unique<State> (context_, options_.runners);
    if (wait_ == GST_CUDA_FILTERS_CUDA_WAIT_BLOCKING) {
      std::string not_held;
      state->blocking_waits = GstCudaFiltersBlockingWaits::hold (not_held);
      if (!state->blocking_waits)
        not_blocking = not_held;
    }
    if (GstCudaFiltersWindowEngine *windows = engine.windows ()) {
      state->window_runner = std::make_unique<cudafilters::GpuWindowRunner> (state->options);
      state->window_runner->reset (windows->radius ());
    }
    engine.open_gpu ();
    state_ = std::move (state);
    engine_ = &engine;
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
  if (!scope.pushed ()) {
    /* Freed in no context, or in another thread's, the frees would fail or
     * free someone else's memory: the device memory is left to the
     * context, which frees it when it is destroyed. */
    GST_WARNING ("the CUDA context could not be made current to free the "
        "element's GPU memory: it is freed with the context");
    /* The streams hold references on the context: they must go for the
     * context to go (GStreamer pushes it itself to destroy them). */
    state_->streams.drop ();
    (void) state_.release ();
    engine_->abandon_gpu ();
    engine_ = nullptr;
    (void) cudafilters::take_release_error ();
    return;
  }
  (void) cudafilters::take_release_error ();
  state_.reset ();
  engine_->close_gpu ();
  engine_ = nullptr;
  const cudaError_t err = cudafilters::take_release_error ();
  if (err != cudaSuccess)
    GST_WARNING ("freeing the element's GPU memory failed: %s (%s)",
        cudaGetErrorName (err), cudaGetErrorString (err));
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
  GST_DEBUG ("staging and device memory for %dx%d frames from system memory",
      GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info));
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
GstCudaFiltersGpu::adopt (GstCudaContext * theirs, std::string & why)
{
  GstCudaFiltersEngine & engine = *engine_;
  close ();
  context_.adopt (theirs);
  std::string not_blocking;
  if (!create_state (engine, why, not_blocking))
    return false;
  if (!not_blocking.empty ())
    GST_WARNING ("cuda-wait=blocking could not be applied: %s", not_blocking.c_str ());
  return true;
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

namespace {

bool
is_cuda_memory (GstMemory * mem)
{
#ifdef HAVE_GST_CUDA
  return gst_is_cuda_memory (mem);
#else
  (void) mem;
  return false;
#endif
}

bool
is_cuda_memory (GstBuffer * buffer)
{
  return is_cuda_memory (gst_buffer_peek_memory (buffer, 0));
}

}  // namespace

GstFlowReturn
GstCudaFiltersGpu::place (const GstCudaFiltersFrameRequest & r,
    GstCudaFiltersHostLease & lease, GstCudaFiltersPlacement & at,
    GstBuffer ** out) const
{
  at = GstCudaFiltersPlacement ();
  /* A frame filtered in place has no output: one-plane filters make it. */
  g_return_val_if_fail (!(r.one_plane && r.out), GST_FLOW_ERROR);
  std::optional<GstCudaFiltersCudaPinner> pinner;
  if (state_)
    pinner.emplace (context_);
  /* In place: the input is leased first, once (a lease counts a sighting),
   * and is filtered in its own buffer where it turns out page-locked. */
  bool in_leased = false;
  if (r.one_plane && r.in && state_ && may_filter_in_place (r.in, *r.info,
          r.cuda_caps, r.video_meta_downstream)) {
    at.in_path = lease.use (r.in, *pinner);
    in_leased = true;
    at.in_place = at.in_path == GstCudaFiltersHostPath::kPinned;
  }
  GstBuffer *outbuf = at.in_place ? nullptr : r.out;
  if (!at.in_place && !outbuf && r.make_output) {
    const GstFlowReturn ret = r.make_output (out);
    if (ret != GST_FLOW_OK)
      return ret;
    outbuf = *out;
  }
  GstBuffer *const in = r.in;

  /* CUDA memory in CUDA caps is mapped for the device; frames in
   * system-memory caps are mapped on the host, whatever memory carries
   * them (GstCudaMemory downloads itself), and so is a frame of which only
   * one side is CUDA memory. */
  if (state_ && r.cuda_caps && (!in || is_cuda_memory (in)) &&
      (!outbuf || is_cuda_memory (outbuf))) {
    at.in_device = in != nullptr;
    at.out_device = outbuf != nullptr;
    at.other_device = in && on_other_device (in);
    if (in)
      at.in_stream = GstCudaFiltersStreams::stream_of (in);
    if (outbuf)
      at.out_users = GstCudaFiltersStreams::stream_of (outbuf);
    /* Queued where the streams order the frame's producer and consumers,
     * and nothing needs the result on the host: not the levels, not
     * another device's copy, not the 1.22 comparison point (host_sync). */
    if (!options_.host_sync) {
      at.queue_input = at.in_stream && !at.other_device;
      at.queue_output = at.out_users && !r.levels_due &&
          at.out_users == state_->streams.output_stream (outbuf);
    }
  }
  if (!state_)
    return GST_FLOW_OK;

  /* Host memory: page-locked where it lies when it comes back, held until
   * the frame is done (gstcudafiltershostmemory.h). */
  if (in && !at.in_device && !in_leased)
    at.in_path = lease.use (in, *pinner);
  if (outbuf && !at.out_device)
    at.out_path = lease.use (outbuf, *pinner);
  /* A one-plane filter's frame in host memory streams its planes where they
   * lie and carries the others by DMA only while it is the device's one host
   * frame in flight: alone, these are the faster; beside others the
   * copy engines bound the frames and the host's copies carry more
   * (cudafilters::HostRoute). */
  if (r.one_plane && (!at.in_device || !at.out_device)) {
    const bool alone = lease.travel_alone (state_->host_frames_in_flight);
    at.host = cudafilters::HostRoute {alone, alone};
  }
  return GST_FLOW_OK;
}

void
GstCudaFiltersGpu::filter_host (const GstCudaFiltersPlacement & at,
    cudafilters::GpuPlaneFilter & filter, const GstCudaFiltersFrame & in,
    GstCudaFiltersFrame & out, cudafilters::FrameLevels * levels)
{
  const Current scope (context_);
  State & s = *state_;
  out.carried_from (in, s.carried);
  s.runner.process_host (filter, in.luma (), out.luma_mut (), s.carried,
      levels, at.host);
}

/* Whether @buf holds its frame as @info lays it out: no video meta, or one
 * with @info's offsets and strides. */
static bool
laid_out_as (GstBuffer * buf, const GstVideoInfo & info)
{
  const GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  if (!meta)
    return true;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); ++p)
    if (meta->offset[p] != GST_VIDEO_INFO_PLANE_OFFSET (&info, p) ||
        meta->stride[p] != GST_VIDEO_INFO_PLANE_STRIDE (&info, p))
      return false;
  return true;
}

bool
GstCudaFiltersGpu::may_filter_in_place (GstBuffer * in,
    const GstVideoInfo & info, bool cuda_caps,
    bool video_meta_downstream) const
{
  if (!state_ || cuda_caps || GST_VIDEO_INFO_N_PLANES (&info) < 2)
    return false;
  if (!gst_buffer_is_writable (in) || !gst_buffer_is_all_memory_writable (in))
    return false;
  for (guint i = 0; i < gst_buffer_n_memory (in); ++i) {
    GstMemory *mem = gst_buffer_peek_memory (in, i);
    /* Read-only memory mapped for writing becomes a copy. */
    if (is_cuda_memory (mem) || GST_MEMORY_IS_READONLY (mem))
      return false;
  }
  /* Downstream that does not read video meta reads the default layout. */
  return video_meta_downstream || laid_out_as (in, info);
}

void
GstCudaFiltersGpu::filter_host_in_place (cudafilters::GpuPlaneFilter & filter,
    GstCudaFiltersFrame & frame, cudafilters::FrameLevels * levels)
{
  const Current scope (context_);
  State & s = *state_;
  s.carried.clear ();
  s.runner.process_host (filter, frame.luma (), frame.luma_mut (), s.carried,
      levels);
}

void
GstCudaFiltersGpu::filter_device (const GstCudaFiltersPlacement & at,
    cudafilters::GpuPlaneFilter & filter, const GstCudaFiltersFrame & in,
    GstCudaFiltersFrame & out, GstBuffer * inbuf, GstBuffer * outbuf,
    cudafilters::FrameLevels * levels)
{
  const Current scope (context_);
  State & s = *state_;

  cudafilters::CarriedPlanes & carried = s.carried;
  out.carried_from (in, carried);
  cudafilters::ConstPlane src = in.luma ();
  const cudafilters::Plane dst = out.luma_mut ();
  if (at.other_device) {
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

  if (!at.queued ()) {
    GstCudaFiltersStreams::wait_for_producer (inbuf);
    s.runner.process_device (filter, src, dst, carried, levels, at.out_users);
    GstCudaFiltersStreams::mark_finished (outbuf);
    return;
  }
  /* On the input's stream, so that its producer's next writes come after
   * our reads; the output's stream, when another, is linked both ways. */
  s.streams.keep_alive (inbuf);
  if (at.in_stream != at.out_users)
    s.runner.order_after (at.out_users, at.in_stream);
  s.runner.enqueue_device (filter, src, dst, carried, at.in_stream);
  if (at.in_stream != at.out_users)
    s.runner.order_after (at.in_stream, at.out_users);
  /* A fault of an earlier frame shows now at the latest: this frame is not
   * pushed. */
  s.runner.check_queued_work ();
}

void
GstCudaFiltersGpu::filter_frame (const GstCudaFiltersPlacement & at,
    cudafilters::GpuWindowFilter & filter,
    const cudafilters::FramePlanes & src,
    const cudafilters::FramePlanesOut & dst, GstBuffer * inbuf,
    GstBuffer * outbuf, cudafilters::FrameLevels * levels)
{
  /* Host frames are uploaded into the runner's one slot anyway, and
   * another device's frame is copied to ours: both go through it. Host to
   * host, one wait covers the upload and the output. */
  if (!at.in_device && !at.out_device) {
    const Current scope (context_);
    state_->windows ().filter_host (filter, src, dst, levels);
    return;
  }
  if (!at.in_device || !at.out_device || at.other_device) {
    window_push (at, src, inbuf);
    window_settle ();
    window_output (at, filter, dst, outbuf, levels);
    return;
  }
  const Current scope (context_);
  cudafilters::GpuWindowRunner & runner = state_->windows ();
  if (!at.queue_input)
    GstCudaFiltersStreams::wait_for_producer (inbuf);
  runner.filter_device (filter, src, at.queue_input ? at.in_stream : nullptr,
      dst, at.out_users, at.queued (), levels);
  if (at.queued ())
    runner.check_queued_work ();
  else
    GstCudaFiltersStreams::mark_finished (outbuf);
}

void
GstCudaFiltersGpu::window_reset (int radius)
{
  if (!state_)
    return;
  const Current scope (context_);
  state_->windows ().reset (radius);
}

bool
GstCudaFiltersGpu::window_ready (bool draining) const
{
  return state_->window_runner && state_->window_runner->ready (draining);
}

void
GstCudaFiltersGpu::window_drop_next ()
{
  state_->windows ().drop_next ();
}

void
GstCudaFiltersGpu::window_push (const GstCudaFiltersPlacement & at,
    const cudafilters::FramePlanes & planes, GstBuffer * in)
{
  const Current scope (context_);
  cudafilters::GpuWindowRunner & runner = state_->windows ();
  if (!at.in_device) {
    runner.push_host (planes);
    return;
  }
  if (at.queue_input) {
    runner.push_device (planes, at.in_stream);
    return;
  }
  /* Without a stream to queue the copy on, our own copies it once its
   * producer's work is done. The host waits for the copy of another
   * device's frame now, and for our device's at window_settle (), where
   * the wait for the output has mostly covered it. */
  GstCudaFiltersStreams::wait_for_producer (in);
  if (at.other_device) {
    runner.push_device (planes, nullptr);
    return;
  }
  runner.push_device_unsettled (planes);
}

void
GstCudaFiltersGpu::window_settle ()
{
  /* Mostly the output's wait has covered the copy: then the context is
   * not made current for nothing. */
  if (!state_ || !state_->window_runner ||
      state_->window_runner->push_settled ())
    return;
  const Current scope (context_);
  state_->window_runner->settle_push ();
}

void
GstCudaFiltersGpu::window_output (const GstCudaFiltersPlacement & at,
    cudafilters::GpuWindowFilter & filter,
    const cudafilters::FramePlanesOut & dst, GstBuffer * outbuf,
    cudafilters::FrameLevels * levels)
{
  const Current scope (context_);
  cudafilters::GpuWindowRunner & runner = state_->windows ();
  if (!at.out_device) {
    runner.output_host (filter, dst, levels);
    return;
  }
  runner.output_device (filter, dst, at.out_users, at.queue_output, levels);
  if (at.queue_output)
    runner.check_queued_work ();
  else
    GstCudaFiltersStreams::mark_finished (outbuf);
}
