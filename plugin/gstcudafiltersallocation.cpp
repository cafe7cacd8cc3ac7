#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersallocation.h"

#include <gst/video/video.h>

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#endif

#include "gstcudafiltershostallocator.h"

namespace {

/* Puts @pool of buffers of @size in the query's first place. */
void
set_pool (GstQuery * query, GstBufferPool * pool, gsize size, guint min,
    guint max)
{
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
}

#ifdef HAVE_GST_CUDA
/* Configures @pool for @caps; with @decide, its stream becomes ours
 * (see GstCudaFiltersStreams), otherwise it gets the one we use. */
gboolean
configure_cuda_pool (GstBufferPool * pool, GstCudaFiltersStreams & streams,
    bool decide, GstCaps * caps, gsize size, guint min, guint max)
{
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (decide)
    streams.decide (config);
  else
    streams.offer (config);
  if (gst_buffer_pool_set_config (pool, config))
    return TRUE;
  /* A pool that adjusted the configuration refuses it and keeps the
   * adjusted one, which is then taken. */
  return gst_buffer_pool_set_config (pool, gst_buffer_pool_get_config (pool));
}

/* CUDA caps: keep downstream's pool if it is a CUDA pool of our context,
 * otherwise use one of ours. */
GstCudaFiltersPool
decide_cuda_pool (GstElement * element, GstQuery * query,
    GstCudaFiltersGpu & gpu, GstCaps * caps, const GstVideoInfo & info,
    guint min, guint max)
{
  GstCudaContext *ours = gpu.context ().gst_context ();
  GstBufferPool *pool = nullptr;
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, nullptr, nullptr,
        nullptr);
  if (pool && (!GST_IS_CUDA_BUFFER_POOL (pool) ||
          GST_CUDA_BUFFER_POOL (pool)->context != ours))
    gst_clear_object (&pool);
  if (!pool)
    pool = gst_cuda_buffer_pool_new (ours);

  /* Frames queued on the stream we leave finish before the next one is
   * queued on another. */
  try {
    gpu.finish ();
  } catch (const std::exception & e) {
    gpu.report_error (element, e);
    gst_object_unref (pool);
    return GstCudaFiltersPool::kFailed;
  }

  const gsize size = GST_VIDEO_INFO_SIZE (&info);
  if (!configure_cuda_pool (pool, gpu.streams (), true, caps, size, min, max)) {
    GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS, (nullptr),
        ("could not configure a CUDA buffer pool"));
    gst_object_unref (pool);
    return GstCudaFiltersPool::kFailed;
  }
  set_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return GstCudaFiltersPool::kDecided;
}
#endif

}  // namespace

GstCudaFiltersPool
gst_cuda_filters_decide_pool (GstElement * element, GstQuery * query,
    GstCudaFiltersGpu & gpu, bool cuda_caps)
{
  GstCaps *caps = nullptr;
  gst_query_parse_allocation (query, &caps, nullptr);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return GstCudaFiltersPool::kFailed;

  guint min = 0, max = 0;
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, nullptr, nullptr, &min, &max);

#ifdef HAVE_GST_CUDA
  if (cuda_caps)
    return decide_cuda_pool (element, query, gpu, caps, info, min, max);
#else
  (void) cuda_caps;
#endif

  GstBufferPool *pool = gst_cuda_filters_host_pool_new (gpu.context (), caps,
      min, max);
  if (!pool) {
    GST_WARNING_OBJECT (element, "no pinned output pool, using the default");
    return GstCudaFiltersPool::kDefault;
  }
  GstAllocator *allocator = gst_cuda_filters_host_allocator_new (gpu.context ());
  GstAllocationParams params;
  gst_allocation_params_init (&params);

  set_pool (query, pool, GST_VIDEO_INFO_SIZE (&info), min, max);
  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_set_nth_allocation_param (query, 0, allocator, &params);
  else
    gst_query_add_allocation_param (query, allocator, &params);

  gst_object_unref (allocator);
  gst_object_unref (pool);
  return GstCudaFiltersPool::kDecided;
}

gboolean
gst_cuda_filters_propose_pool (GstQuery * query, GstCudaFiltersGpu & gpu,
    bool cuda_caps)
{
  GstCaps *caps = nullptr;
  gboolean need_pool = FALSE;
  gst_query_parse_allocation (query, &caps, &need_pool);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  const gsize size = GST_VIDEO_INFO_SIZE (&info);

#ifdef HAVE_GST_CUDA
  if (cuda_caps) {
    if (need_pool) {
      GstBufferPool *pool =
          gst_cuda_buffer_pool_new (gpu.context ().gst_context ());
      if (configure_cuda_pool (pool, gpu.streams (), false, caps, size, 0, 0))
        gst_query_add_allocation_pool (query, pool, size, 0, 0);
      gst_object_unref (pool);
    }
    return TRUE;
  }
#else
  (void) cuda_caps;
#endif

  if (need_pool) {
    GstBufferPool *pool = gst_cuda_filters_host_pool_new (gpu.context (), caps,
        0, 0);
    if (pool) {
      gst_query_add_allocation_pool (query, pool, size, 0, 0);
      gst_object_unref (pool);
    }
  }
  GstAllocator *allocator = gst_cuda_filters_host_allocator_new (gpu.context ());
  gst_query_add_allocation_param (query, allocator, nullptr);
  gst_object_unref (allocator);
  return TRUE;
}
