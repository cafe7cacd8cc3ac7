#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersstreams.h"

#ifdef HAVE_GST_CUDA_STREAM
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudamemory.h>
#endif

#ifdef HAVE_GST_CUDA_STREAM

namespace {

GstCudaStream *
memory_stream (GstBuffer * buffer)
{
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  if (!gst_is_cuda_memory (mem))
    return nullptr;
  return gst_cuda_memory_get_stream (GST_CUDA_MEMORY_CAST (mem));
}

cudaStream_t
handle (GstCudaStream * stream)
{
  return reinterpret_cast < cudaStream_t > (gst_cuda_stream_get_handle (stream));
}

}  // namespace

struct GstCudaFiltersStreams::Impl
{
  explicit Impl (GstCudaContext * ctx)
      : context (ctx), own (gst_cuda_stream_new (ctx)),
        chosen (own ? gst_cuda_stream_ref (own) : nullptr) {}
  ~Impl () {
    gst_clear_cuda_stream (&previous_work);
    gst_clear_cuda_stream (&last_work);
    gst_clear_cuda_stream (&chosen);
    gst_clear_cuda_stream (&own);
  }
  Impl (const Impl &) = delete;
  Impl & operator= (const Impl &) = delete;

  GstCudaContext *context;
  /* Ours; null if it could not be created (frames are then waited for). */
  GstCudaStream *own;
  /* The one our pools carry: downstream's or ours. */
  GstCudaStream *chosen;
  /* The one the last frame was queued on, and the one before, kept alive
   * until the runner has moved on from them (keep_alive). */
  GstCudaStream *last_work = nullptr;
  GstCudaStream *previous_work = nullptr;
};

GstCudaFiltersStreams::GstCudaFiltersStreams (const GstCudaFiltersContext &
    context)
    : impl_ (std::make_unique < Impl > (context.gst_context ()))
{
}

GstCudaFiltersStreams::~GstCudaFiltersStreams () = default;

void
GstCudaFiltersStreams::decide (GstStructure * config)
{
  GstCudaStream *theirs = gst_buffer_pool_config_get_cuda_stream (config);
  gst_clear_cuda_stream (&impl_->chosen);
  if (theirs && theirs->context == impl_->context) {
    impl_->chosen = theirs;
    return;
  }
  gst_clear_cuda_stream (&theirs);
  if (impl_->own) {
    impl_->chosen = gst_cuda_stream_ref (impl_->own);
    gst_buffer_pool_config_set_cuda_stream (config, impl_->own);
  }
}

void
GstCudaFiltersStreams::offer (GstStructure * config) const
{
  if (impl_->chosen)
    gst_buffer_pool_config_set_cuda_stream (config, impl_->chosen);
}

void
GstCudaFiltersStreams::keep_alive (GstBuffer * in)
{
  GstCudaStream *work = memory_stream (in);
  if (work == impl_->last_work)
    return;
  gst_clear_cuda_stream (&impl_->previous_work);
  impl_->previous_work = impl_->last_work;
  impl_->last_work = work ? gst_cuda_stream_ref (work) : nullptr;
}

void
GstCudaFiltersStreams::drop ()
{
  impl_.reset ();
}

cudaStream_t
GstCudaFiltersStreams::stream_of (GstBuffer * buffer)
{
  GstCudaStream *stream = memory_stream (buffer);
  return stream ? handle (stream) : nullptr;
}

cudaStream_t
GstCudaFiltersStreams::output_stream (GstBuffer * out) const
{
  GstCudaStream *stream = memory_stream (out);
  return stream && stream == impl_->chosen ? handle (stream) : nullptr;
}

void
GstCudaFiltersStreams::wait_for_producer (GstBuffer * in)
{
  GstMemory *mem = gst_buffer_peek_memory (in, 0);
  if (gst_is_cuda_memory (mem))
    gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (mem));
}

void
GstCudaFiltersStreams::mark_finished (GstBuffer * out)
{
  GstMemory *mem = gst_buffer_peek_memory (out, 0);
  if (gst_is_cuda_memory (mem))
    GST_MEMORY_FLAG_UNSET (mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);
}

#else /* GStreamer 1.22 (memory has no stream), or no GStreamer CUDA library. */

struct GstCudaFiltersStreams::Impl
{
};

GstCudaFiltersStreams::GstCudaFiltersStreams (const GstCudaFiltersContext &)
{
}

GstCudaFiltersStreams::~GstCudaFiltersStreams () = default;

void
GstCudaFiltersStreams::decide (GstStructure *)
{
}

void
GstCudaFiltersStreams::offer (GstStructure *) const
{
}

void
GstCudaFiltersStreams::keep_alive (GstBuffer *)
{
}

void
GstCudaFiltersStreams::drop ()
{
}

cudaStream_t
GstCudaFiltersStreams::stream_of (GstBuffer *)
{
  return nullptr;
}

cudaStream_t
GstCudaFiltersStreams::output_stream (GstBuffer *) const
{
  return nullptr;
}

void
GstCudaFiltersStreams::wait_for_producer (GstBuffer *)
{
}

void
GstCudaFiltersStreams::mark_finished (GstBuffer *)
{
}

#endif
