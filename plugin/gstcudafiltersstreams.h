/* The CUDA streams a frame in CUDA memory is queued on, so that elements
 * push frames downstream without waiting for them on the host.
 *
 * From GStreamer 1.24 on, GstCudaMemory carries the stream its producer
 * queued its work on, and GST_CUDA_MEMORY_TRANSFER_NEED_SYNC says that work
 * may still be running: a consumer on the same stream just queues after it,
 * a consumer on another stream (or on the host) waits first, as
 * gst_cuda_memory_sync() and every CPU map do.
 *
 * The elements put one stream into the buffer pools on both pads:
 * downstream's when its pool carries one, else their own. A chain such as
 * `cudaupload ! cudahisteq ! cudanlm ! cudadownload` thus runs on a single
 * stream, and only the element that needs the frames on the host waits.
 *
 * A frame whose memory is on another stream than the output's (a decoder's,
 * say) is queued on the input's stream, so that the producer's next writes
 * into that memory come after our reads, and the two streams are linked by
 * events: our writes wait for the work queued on the output's stream (its
 * consumers' reads of the buffer we reuse), and the output's stream waits
 * for our writes. Memory without a stream gives no such order, and its
 * frames are waited for; so are all frames with GStreamer 1.22, and
 * without GStreamer's CUDA library there is no CUDA memory at all. */
#pragma once

#include <gst/gst.h>

#include "gstcudafilterscontext.h"

#include <cuda_runtime_api.h>

#include <memory>

class GstCudaFiltersStreams
{
public:
  /* Creates the element's own stream in @context (a current context). */
  explicit GstCudaFiltersStreams (const GstCudaFiltersContext & context);
  ~GstCudaFiltersStreams ();
  GstCudaFiltersStreams (const GstCudaFiltersStreams &) = delete;
  GstCudaFiltersStreams & operator= (const GstCudaFiltersStreams &) = delete;

  /* Output pool @config (from decide_allocation): adopts the stream that
   * downstream put in it, if of the same context, else puts ours in. The
   * caller waits for the frames queued so far first. */
  void decide (GstStructure * config);

  /* A pool @config that we propose upstream: its memory gets the stream of
   * our output. */
  void offer (GstStructure * config) const;

  /* A frame is about to be queued on the stream of @in's memory: keeps
   * that stream alive, and the one before it until the frame after has
   * been queued (the runner waits for the last stream's frames when it
   * moves to the next one, on a stream it must still be able to use), or
   * the element stops. Call with the context current. */
  void keep_alive (GstBuffer * in);

  /* Drops every stream reference now, where the element's GPU state is
   * abandoned (its context cannot be made current). */
  void drop ();

  /* The stream @buffer's memory carries: its producer queued its writes
   * there, and its consumers queue their reads there. Whole-frame filters
   * (gstcudafiltersbase.h) queue the copy of an input after its producer's
   * work on it, and every write into an output waits for the work queued on
   * it (the reads of the buffer's earlier contents). Null where memory
   * carries no stream: the copy then waits for the producer on the host, and
   * the consumers waited for their own reads. */
  static cudaStream_t stream_of (GstBuffer * buffer);

  /* The stream @out's consumers will wait for, when it is the one our
   * pools carry; null otherwise (the frame is then waited for). */
  cudaStream_t output_stream (GstBuffer * out) const;

  /* Before the host-waiting path reads @in on another stream: waits for its
   * producer's work if it may still be running. */
  static void wait_for_producer (GstBuffer * in);

  /* After the host-waiting path has written @out and waited: nothing is
   * left for its consumers to wait for. */
  static void mark_finished (GstBuffer * out);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
