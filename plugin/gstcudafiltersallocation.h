/* Buffer pools for the GPU path. Output frames come from a pool of pinned
 * host memory (system memory: the download lands in them directly) or of
 * CUDA memory of the element's context, whose stream is downstream's or the
 * element's own (gstcudafiltersstreams.h); upstream is offered the same. */
#pragma once

#include <gst/gst.h>

#include "gstcudafiltersgpu.h"

enum class GstCudaFiltersPool
{
  kDecided,         /* the query holds our pool */
  kFailed,          /* an element error was posted */
  kDefault,         /* the base class's pool will do */
};

/* decide_allocation on the GPU path (@cuda_caps: CUDA memory negotiated). */
GstCudaFiltersPool gst_cuda_filters_decide_pool (GstElement * element,
    GstQuery * query, GstCudaFiltersGpu & gpu, bool cuda_caps);

/* propose_allocation on the GPU path, after the base class's. */
gboolean gst_cuda_filters_propose_pool (GstQuery * query,
    GstCudaFiltersGpu & gpu, bool cuda_caps);
