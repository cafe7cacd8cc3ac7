/* A GstAllocator of page-locked (pinned) host memory, allocated in a
 * GstCudaContext with cudaHostAllocPortable. Frames in such memory move to and
 * from the GPU at full PCIe speed with no staging copy; the elements use it for
 * their output pools and offer it upstream in allocation queries. */
#pragma once

#include <gst/cuda/gstcudacontext.h>
#include <gst/gst.h>

#define GST_TYPE_CUDA_FILTERS_HOST_ALLOCATOR (gst_cuda_filters_host_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaFiltersHostAllocator,
    gst_cuda_filters_host_allocator, GST, CUDA_FILTERS_HOST_ALLOCATOR,
    GstAllocator)

GstAllocator *gst_cuda_filters_host_allocator_new (GstCudaContext * context);

/* A video buffer pool of @caps whose buffers live in pinned host memory. */
GstBufferPool *gst_cuda_filters_host_pool_new (GstCudaContext * context,
    GstCaps * caps, guint min_buffers, guint max_buffers);
