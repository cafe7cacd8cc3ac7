/* The GPU side of an element: its CUDA context, its streams, the runners
 * that move frames through the engine, and where each frame is queued. It
 * knows nothing of pads or caps negotiation: the element hands it mapped
 * frames (the counterpart of nvcodec's GstCudaConverter).
 *
 * Every call makes the context current for its duration and throws
 * cudafilters::CudaError (or std::exception) on failure; the element turns
 * that into an element error (report_error, once until the next open). */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "gstcudafilterscontext.h"
#include "gstcudafiltersengine.h"
#include "gstcudafiltersenvironment.h"
#include "gstcudafiltersframe.h"
#include "gstcudafiltershostmemory.h"
#include "gstcudafiltersstreams.h"

#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/plane_levels.h>

/* How one frame goes through the GPU, the whole route: decided for each
 * frame in one place, GstCudaFiltersGpu::place (), from its buffers, the
 * context their memory lives in, the caps, whether the frame's levels are
 * due, and the other frames in host memory in flight. The flows, the calls
 * below and the runners only carry it out. */
struct GstCudaFiltersPlacement
{
  /* The frame's input and output are mapped as CUDA device memory;
   * otherwise as host memory. */
  bool in_device = false;
  bool out_device = false;
  /* The input is another device's memory: its planes are copied to ours
   * first, after its producer's work, with the host waiting. */
  bool other_device = false;
  /* The stream the input's producer queued its writes on, and the one the
   * output's consumers queue their reads on (null: none). */
  cudaStream_t in_stream = nullptr;
  cudaStream_t out_users = nullptr;
  /* The input is read on in_stream, after its producer, without a host
   * wait. */
  bool queue_input = false;
  /* The output is left for its consumers on out_users, without a host
   * wait. */
  bool queue_output = false;
  /* One-plane filters queue a frame only where both hold. */
  bool queued () const { return queue_input && queue_output; }

  /* Frames in host memory. The frame is filtered in its own buffer, which
   * is page-locked: there is no output buffer. */
  bool in_place = false;
  /* How the input's and the output's host memory is copied: pinned where
   * it lies (page-locked already, or registered), or staged (kNone: on the
   * device, absent, or the GPU is not open). */
  GstCudaFiltersHostPath in_path = GstCudaFiltersHostPath::kNone;
  GstCudaFiltersHostPath out_path = GstCudaFiltersHostPath::kNone;
  /* What the runner may do besides copies: stream the planes where they
   * lie and carry the others by DMA, only for a frame alone in flight on
   * its device. */
  cudafilters::HostRoute host;
};

/* What a frame's route is decided from, besides the buffers' memory. */
struct GstCudaFiltersFrameRequest
{
  /* The input and the output; either may be null (the window flows place
   * their input and output apart). */
  GstBuffer *in = nullptr;
  GstBuffer *out = nullptr;
  /* Makes the output where the route needs one and @out is null. */
  std::function<GstFlowReturn (GstBuffer **)> make_output;
  /* The negotiated frames, in CUDA memory caps or not. */
  const GstVideoInfo *info = nullptr;
  bool cuda_caps = false;
  /* The frame's statistics are due. */
  bool levels_due = false;
  /* A one-plane filter: the frame may be filtered in place, and is counted
   * among the host frames in flight. */
  bool one_plane = false;
  /* Downstream reads GstVideoMeta: a frame filtered in place may keep
   * upstream's layout. */
  bool video_meta_downstream = false;
};

class GstCudaFiltersGpu
{
public:
  explicit GstCudaFiltersGpu (const GstCudaFiltersEnvironment & environment);
  ~GstCudaFiltersGpu ();
  GstCudaFiltersGpu (const GstCudaFiltersGpu &) = delete;
  GstCudaFiltersGpu & operator= (const GstCudaFiltersGpu &) = delete;

  /* Brings up the GPU for @engine: the context of @device_id (-1: any),
   * shared with @element's neighbours, a new one where the one shared is
   * lost to a fault; streams, runner and the engine's GPU side. On failure
   * leaves nothing behind and says why. @replaced says why a lost shared
   * context was replaced, @not_blocking why @wait could not be applied. A
   * context set on the element before (set_context) is used. @wait holds
   * for every context the element runs in until close. */
  bool open (GstElement * element, gint device_id,
      GstCudaFiltersEngine & engine, GstCudaFiltersCudaWait wait,
      std::string & why, std::string & replaced, std::string & not_blocking);
  /* Frees everything in the context and drops it. */
  void close ();
  bool is_open () const { return state_ != nullptr; }

  GstCudaFiltersContext & context () { return context_; }
  GstCudaFiltersStreams & streams ();

  /* Waits for every frame queued; throws if one failed. */
  void finish ();
  /* Posts @e on @element as an element error, once until the next open. */
  void report_error (GstElement * element, const std::exception & e);

  /* Staging and device memory for frames of @info from system memory, set
   * aside when such caps are set so that the first frames do not wait for
   * it; frames in CUDA memory need none. */
  void reserve (const GstVideoInfo & info);

#ifdef HAVE_GST_CUDA
  /* Upstream's context that @buffer's CUDA memory lives in, when it is
   * another than ours on the device @wanted names (-1: any): the element
   * moves there (adopt), as nvcodec's filters do. */
  GstCudaContext *context_to_adopt (GstBuffer * buffer, gint wanted) const;
  /* Moves the GPU state into @theirs; false, with why, on failure. */
  bool adopt (GstCudaContext * theirs, std::string & why);
#endif

  /* The route of the frame @r asks for, into @at: the one function that
   * decides it. Makes the output (r.make_output, into *@out) where the
   * frame is not filtered in place. The system memory the frame reads or
   * writes on the host is page-locked where it lies when it comes back,
   * and held in @lease until the frame is done, with the frame's place
   * among the host frames in flight (gstcudafiltershostmemory.h). Host
   * memory, waited for, where the GPU is not open (the CPU path). Returns
   * the failure of make_output. */
  GstFlowReturn place (const GstCudaFiltersFrameRequest & r,
      GstCudaFiltersHostLease & lease, GstCudaFiltersPlacement & at,
      GstBuffer ** out) const;

  /* One-plane filters. Host frames: the kernels read and write pinned
   * frames directly where the filter allows it, otherwise upload, filter,
   * download; the other planes are carried meanwhile, by DMA where both
   * sides are pinned. */
  void filter_host (const GstCudaFiltersPlacement & at,
      cudafilters::GpuPlaneFilter & filter, const GstCudaFiltersFrame & in,
      GstCudaFiltersFrame & out, cudafilters::FrameLevels * levels);
  /* One-plane filters, a host frame in place: its first plane copied to
   * the device, filtered and copied back; the other planes untouched. */
  void filter_host_in_place (cudafilters::GpuPlaneFilter & filter,
      GstCudaFiltersFrame & frame, cudafilters::FrameLevels * levels);
  /* Frames in CUDA memory, placed @at: the filter runs on the mapped device
   * planes and carries the others, queued or waited for. */
  void filter_device (const GstCudaFiltersPlacement & at,
      cudafilters::GpuPlaneFilter & filter, const GstCudaFiltersFrame & in,
      GstCudaFiltersFrame & out, GstBuffer * inbuf, GstBuffer * outbuf,
      cudafilters::FrameLevels * levels);

  /* A whole-frame filter of radius 0: the frame @src (host or device
   * planes of @inbuf, placed @at) filtered into @dst, read where it lies
   * when on the device. */
  void filter_frame (const GstCudaFiltersPlacement & at,
      cudafilters::GpuWindowFilter & filter,
      const cudafilters::FramePlanes & src,
      const cudafilters::FramePlanesOut & dst, GstBuffer * inbuf,
      GstBuffer * outbuf, cudafilters::FrameLevels * levels);

  /* Whole-frame filters: the window of frames held on the device, of
   * 2 @radius + 1 frames from now on (created with the first reset). */
  void window_reset (int radius);
  /* Whether the next frame can be filtered (@draining: with the frames
   * after it that there are). */
  bool window_ready (bool draining) const;
  void window_drop_next ();
  /* Copies the frame of @in (host or device planes, placed @at) into the
   * window. @in's memory may still be read until window_settle () returns. */
  void window_push (const GstCudaFiltersPlacement & at,
      const cudafilters::FramePlanes & planes, GstBuffer * in);
  /* Waits for the copy of the last frame pushed, where no wait since has
   * covered it. */
  void window_settle ();
  /* Filters the next frame into @dst: host planes, or device planes of
   * @outbuf, placed @at. */
  void window_output (const GstCudaFiltersPlacement & at,
      cudafilters::GpuWindowFilter & filter,
      const cudafilters::FramePlanesOut & dst, GstBuffer * outbuf,
      cudafilters::FrameLevels * levels);

private:
  struct State;

  /* Whether @buffer is CUDA memory of another context than ours that we did
   * not adopt: another device's. */
  bool on_other_device (GstBuffer * buffer) const;

  /* Whether a one-plane filter may filter the frame of @in (frames of
   * @info, in @cuda_caps) in place: a frame with planes to carry, in
   * system memory that is not CUDA memory nor read-only, in a buffer the
   * element may write (no one else holds it or its memory), laid out as
   * @info lays it out unless @video_meta_downstream (downstream reads the
   * buffer's GstVideoMeta). It is, where the memory is page-locked too:
   * its carried planes then stay where they are, with no copy. */
  bool may_filter_in_place (GstBuffer * in, const GstVideoInfo & info,
      bool cuda_caps, bool video_meta_downstream) const;

  /* Frees the streams, runners and the engine's GPU side; keeps the
   * context. */
  void release_state ();
  /* Streams, runners and the engine's GPU side in the open context, and its
   * scheduling as wait_ asks; @not_blocking says why that could not be. */
  bool create_state (GstCudaFiltersEngine & engine, std::string & why,
      std::string & not_blocking);

  GstCudaFiltersEnvironment options_;
  GstCudaFiltersCudaWait wait_ = GST_CUDA_FILTERS_CUDA_WAIT_BLOCKING;
  GstCudaFiltersContext context_;
  std::unique_ptr<State> state_;
  GstCudaFiltersEngine *engine_ = nullptr;
  bool error_posted_ = false;
};
