// Runs a GpuWindowFilter over a stream of frames (temporal filters): keeps
// the frames its windows need on the device, in 2 r + 1 slots reused from
// frame to frame, decides when each frame is filtered, and moves frames in
// host memory in and out on one stream. With radius r, frame n is filtered
// once frame n + r has arrived, or once the stream ends (draining), from
// the frames n - r .. n + r held since the last reset: near the start and
// end of a stream the window is clipped to the frames that exist. Device
// memory grows only when a frame is larger than any before.
#pragma once

#include "frame_planes.h"
#include "gpu_window_filter.h"
#include "plane_levels.h"
#include "runner_options.h"

#include <cuda_runtime.h>

#include <memory>

namespace cudafilters {

class GpuWindowRunner {
 public:
  // Creates the stream in the CUDA context current on the calling thread.
  explicit GpuWindowRunner(const RunnerOptions &options = {});
  ~GpuWindowRunner();
  GpuWindowRunner(const GpuWindowRunner &) = delete;
  GpuWindowRunner &operator=(const GpuWindowRunner &) = delete;

  // Forgets the frames held (after waiting for the work on them); windows
  // of 2 radius + 1 frames from now on, radius 0 to 3
  // (std::invalid_argument otherwise). Until the first reset, windows of
  // one frame, as after reset(0).
  void reset(int radius);
  // Whether a frame waits to be filtered, and whether one can be filtered
  // now (draining: no more frames will come before a reset).
  bool waiting() const;
  bool ready(bool draining) const;
  // Moves past the next frame without filtering it (its output could not
  // be written): as after filtering it, frames no later window needs are
  // released. std::logic_error when no frame waits.
  void drop_next();

  // Takes a frame of host planes into the history; the planes may be
  // reused once this returns.
  void push_host(const FramePlanes &src);

  // Takes a frame of device planes into the history. With `stream` (of the
  // current context, the planes in memory the current device reads
  // directly), the copy is queued there, after the work queued on it so far
  // (its producer's), and the runner's later work waits for it on the GPU:
  // the frame's memory must not be reused before the stream has run the
  // copy.
  // Without, the runner's own stream copies it and the host waits; the
  // planes may then be device memory of another context or device (with
  // unified addressing, as on every 64-bit platform CUDA supports).
  void push_device(const FramePlanes &src, cudaStream_t stream);

  // As push_device without a stream, for planes the current device reads
  // directly, but the host does not wait for the copy here: src's memory
  // must stay unchanged until settle_push() returns. A host wait for an
  // output (output_host, output_device without `queue`) covers the copy
  // too, and settle_push() then returns at once: a frame pushed and
  // filtered costs one host wait instead of two.
  void push_device_unsettled(const FramePlanes &src);
  // Waits on the host for the copy of push_device_unsettled, if no host
  // wait has covered it since; push_settled() says whether one has (then
  // settle_push() needs no current context).
  void settle_push();
  bool push_settled() const;

  // Filters the next frame (ready(...) must hold; std::logic_error when no
  // frame waits) into host planes
  // and returns once they are written. With `levels`, the histograms of the
  // frame's input and output luma are counted too.
  void output_host(GpuWindowFilter &filter, const FramePlanesOut &dst,
                   FrameLevels *levels = nullptr);

  // The same into device planes. With `dst_users`, a stream of the current
  // context on which work may still read dst's earlier contents (its
  // consumers'), the writes wait for that work on the GPU. With `queue`
  // (which needs dst_users and no levels), `dst_users` then waits for the
  // writes on the GPU and the host does not; otherwise the host waits.
  void output_device(GpuWindowFilter &filter, const FramePlanesOut &dst, cudaStream_t dst_users,
                     bool queue, FrameLevels *levels = nullptr);

  // A window of one frame (radius 0, no frame held): filters the host
  // planes src into the host planes dst and returns once dst is written;
  // src may be reused then. As push_host then output_host, with one host
  // wait for the whole frame instead of one for its upload and one for its
  // output (std::logic_error with a radius or a frame held).
  void filter_host(GpuWindowFilter &filter, const FramePlanes &src, const FramePlanesOut &dst,
                   FrameLevels *levels = nullptr);

  // A window of one frame (radius 0), read where it lies: filters the
  // device planes src into the device planes dst, with no copy and without
  // touching the frames held. With `src_stream`, a stream of the current
  // context on which src's producer queued its writes, the reads wait for
  // that work on the GPU (otherwise the caller has waited for it), and with
  // `queue` the stream's later work waits for the reads. `dst_users`,
  // `queue` and `levels` as in output_device.
  void filter_device(GpuWindowFilter &filter, const FramePlanes &src, cudaStream_t src_stream,
                     const FramePlanesOut &dst, cudaStream_t dst_users, bool queue,
                     FrameLevels *levels = nullptr);

  // Waits on the host for every frame queued so far.
  void synchronize();

  // Throws CudaError if work queued earlier has already failed, without
  // waiting for the work still running (see cudafilters::check_queued_work).
  void check_queued_work();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters
