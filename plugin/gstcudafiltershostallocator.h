/* A GstAllocator of page-locked (pinned) host memory, allocated in the
 * element's CUDA context with cudaHostAllocPortable. Frames in such memory move to and
 * from the GPU at full PCIe speed with no staging copy; the elements use it for
 * their output pools and offer it upstream in allocation queries. */
#pragma once

#include <gst/gst.h>

#include "gstcudafilterscontext.h"

#define GST_TYPE_CUDA_FILTERS_HOST_ALLOCATOR (gst_cuda_filters_host_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaFiltersHostAllocator,
    gst_cuda_filters_host_allocator, GST, CUDA_FILTERS_HOST_ALLOCATOR,
    GstAllocator)

GstAllocator *gst_cuda_filters_host_allocator_new (
    const GstCudaFiltersContext & context);

/* A video buffer pool of @caps whose buffers live in pinned host memory. */
GstBufferPool *gst_cuda_filters_host_pool_new (
    const GstCudaFiltersContext & context, GstCaps * caps, guint min_buffers,
    guint max_buffers);
