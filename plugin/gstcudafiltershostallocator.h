/* Page-locked (pinned) host memory in an element's CUDA context, which
 * frames move to and from the GPU in at full PCIe speed with no staging
 * copy: allocated (a GstAllocator using cudaHostAllocPortable, whose pools
 * the elements output into and offer upstream in allocation queries), or
 * registered where it lies (the pinner the process's registry of memory
 * that comes back uses, gstcudafiltershostmemory.h). */
#pragma once

#include <gst/gst.h>

#include "gstcudafilterscontext.h"
#include "gstcudafiltershostmemory.h"

#include <memory>
#include <string>

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

/* Registers system memory with the driver (cudaHostRegister) in @context,
 * and undoes it in that context on whichever thread frees the memory. */
class GstCudaFiltersCudaPinner final : public GstCudaFiltersHostPinner
{
public:
  explicit GstCudaFiltersCudaPinner (const GstCudaFiltersContext & context)
      : context_ (context) {}
  Kind classify (GstMemory * root) const override;
  std::unique_ptr<Pin> pin (guint8 * data, size_t bytes,
      std::string & why) const override;

private:
  const GstCudaFiltersContext & context_;
};
