/* How input frames become output frames: two strategies behind one
 * interface, chosen by the engine's kind (and radius) when the element
 * starts.
 *
 * One frame in, one out: each input frame gives one output frame at once.
 * A plane engine (cudafilters::CpuPlaneFilter / GpuPlaneFilter) filters its
 * first (luma or gray) plane and the others are carried over; a window
 * engine of radius 0 filters the whole frame where it lies (device frames
 * are read in place, not copied into a window first).
 *
 * Whole frames in windows (CpuWindowFilter / GpuWindowFilter) of radius
 * r > 0: frame n leaves once frame n + r has arrived, with the timestamps,
 * duration, flags and metas it came with. The flow reports r frames of
 * latency, filters the last r frames at EOS, and at a caps change, a new
 * segment, a DISCONT buffer or a move to another CUDA context filters the
 * frames it holds from the frames before the break only (never across it);
 * a flush drops them. Other serialized events (tags, gaps, a new stream,
 * custom ones) wait behind the frames held, so that the stream keeps its
 * order. The frames held stay on the GPU (or in host memory on
 * the CPU path), in 2 r + 1 slots reused from frame to frame. */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <optional>
#include <memory>

#include "gstcudafiltersengine.h"
#include "gstcudafiltersgpu.h"
#include "gstcudafiltersstats.h"

/* The element's streaming state that a flow works with; owned by the
 * element, which sets it before the first frame. */
struct GstCudaFiltersStreaming
{
  explicit GstCudaFiltersStreaming (const cudafilters::RunnerOptions & options)
      : runner_options (options) {}

  /* What the CPU path's runners are given (the GPU's have their own). */
  const cudafilters::RunnerOptions runner_options;
  GstBaseTransform *trans = nullptr;
  /* The negotiated frames (under the object lock for other threads); finfo
   * null until the first caps. */
  GstVideoInfo info = {};
  /* video/x-raw(memory:CUDAMemory) negotiated: frames stay on the GPU. */
  bool cuda_caps = false;
  /* Downstream reads GstVideoMeta (its allocation query; streaming
   * thread): a buffer filtered in place may keep upstream's layout. */
  bool downstream_video_meta = false;
  /* Open where the element runs on the GPU. */
  GstCudaFiltersGpu *gpu = nullptr;
  GstCudaFiltersStats stats;
  /* Under the object lock. */
  GstCudaFiltersStats::Settings stats_settings;
  /* Moves on at each change of the engine's settings; under the object
   * lock. */
  guint64 settings_version = 0;
  /* The next frame starts a new history (set from flushing threads too). */
  std::atomic<bool> restart_history { true };

  /* How the frames' host memory was copied last: an INFO line says when
   * that changes (pinned where it lies, or staged). Streaming thread. */
  std::pair<GstCudaFiltersHostPath, GstCudaFiltersHostPath> host_paths {
  GstCudaFiltersHostPath::kNone, GstCudaFiltersHostPath::kNone};
  /* Whether the last frame was filtered in place: an INFO line says when
   * that changes. Streaming thread. */
  bool in_place = false;
  /* The element's qos property as it was before a window of held frames
   * turned QoS off (a frame held cannot be dropped); set while it is off. */
  std::optional<bool> qos_before_window;

  bool on_gpu () const { return gpu && gpu->is_open (); }
  /* Whether the frame of @buf posts its statistics. */
  bool statistics_due (GstBuffer * buf);
  /* The frame's input and output took @paths. */
  void note_host_paths (
      std::pair<GstCudaFiltersHostPath, GstCudaFiltersHostPath> paths);
  /* The frame was filtered in place, or not. */
  void note_in_place (bool now);
};

class GstCudaFiltersFlow
{
public:
  virtual ~GstCudaFiltersFlow () = default;

  /* @in (owned; null when nothing was queued) enters; *@out is set to the
   * frame that leaves, or null. */
  virtual GstFlowReturn generate (GstBuffer * in, GstBuffer ** out) = 0;
  /* A break in the stream: the frames held leave downstream. */
  virtual GstFlowReturn drain () { return GST_FLOW_OK; }
  /* Forgets the frames held (a flush, new frames). */
  virtual void reset () {}
  virtual bool holds_frames () const { return false; }
  /* A serialized event that must not overtake the frames held: taken
   * (true) to go downstream once they have left, or false for the element
   * to pass it on now. */
  virtual bool hold_event (GstEvent *) { return false; }
  /* The latency the flow adds; from any thread, under the object lock,
   * which guards the caps and durations the streaming thread sets. */
  virtual GstClockTime latency () const { return 0; }
};

/* The flow of @engine's kind, in @stream. */
std::unique_ptr<GstCudaFiltersFlow> gst_cuda_filters_flow_new (
    GstCudaFiltersStreaming & stream, GstCudaFiltersEngine & engine);
