#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltershostallocator.h"

#include <cuda_runtime.h>
#include <gst/video/video.h>
#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

#include <cudafilters/cuda_memory.h>

#include <cstring>
#include <new>
#include <stdexcept>

GST_DEBUG_CATEGORY_STATIC (gst_cuda_filters_host_allocator_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_host_allocator_debug

#define HOST_MEMORY_NAME "CudaFiltersPinnedHost"

struct _GstCudaFiltersHostAllocator
{
  GstAllocator parent;
  /* Constructed in _init (), destroyed in finalize. */
  GstCudaFiltersContext context;
};

/* A memory block; sub-memories made by share() point into their parent's
 * block and own nothing. */
struct HostMemory
{
  GstMemory mem;
  guint8 *data;
};

G_DEFINE_TYPE (GstCudaFiltersHostAllocator, gst_cuda_filters_host_allocator,
    GST_TYPE_ALLOCATOR);

static GstMemory *
host_memory_new (GstAllocator * allocator, GstMemory * parent, guint8 * data,
    GstMemoryFlags flags, gsize maxsize, gsize align, gsize offset, gsize size)
{
  HostMemory *m = g_new0 (HostMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (m), flags, allocator, parent, maxsize,
      align, offset, size);
  m->data = data;
  return GST_MEMORY_CAST (m);
}

static GstMemory *
gst_cuda_filters_host_allocator_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  GstCudaFiltersHostAllocator *self = GST_CUDA_FILTERS_HOST_ALLOCATOR (allocator);
  const gsize maxsize = size + params->prefix + params->padding;
  void *ptr = nullptr;

  /* cudaHostAlloc returns page-aligned memory, more than any alignment a
   * GstAllocationParams asks for. */
  if (!self->context.push ()) {
    GST_ERROR_OBJECT (self, "could not make the CUDA context current");
    return nullptr;
  }
  cudaError_t err = cudaHostAlloc (&ptr, maxsize, cudaHostAllocPortable);
  self->context.pop ();
  if (err != cudaSuccess) {
    GST_ERROR_OBJECT (self, "cudaHostAlloc of %" G_GSIZE_FORMAT " bytes failed: %s",
        maxsize, cudaGetErrorString (err));
    return nullptr;
  }

  guint8 *data = static_cast < guint8 * >(ptr);
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    memset (data, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset (data + params->prefix + size, 0, params->padding);

  return host_memory_new (allocator, nullptr, data, params->flags, maxsize,
      params->align, params->prefix, size);
}

static void
gst_cuda_filters_host_allocator_free (GstAllocator * allocator, GstMemory * mem)
{
  GstCudaFiltersHostAllocator *self = GST_CUDA_FILTERS_HOST_ALLOCATOR (allocator);
  HostMemory *m = reinterpret_cast < HostMemory * >(mem);

  if (!mem->parent) {
    /* Memory can outlive the element: the allocator keeps the context. */
    if (self->context.push ()) {
      cudaError_t err = cudaFreeHost (m->data);
      if (err != cudaSuccess)
        GST_WARNING_OBJECT (self, "cudaFreeHost failed: %s",
            cudaGetErrorString (err));
      self->context.pop ();
    } else {
      GST_WARNING_OBJECT (self, "could not make the CUDA context current; "
          "leaking %" G_GSIZE_FORMAT " bytes of pinned memory", mem->maxsize);
    }
  }
  g_free (m);
}

static gpointer
host_memory_map (GstMemory * mem, gsize, GstMapFlags)
{
  return reinterpret_cast < HostMemory * >(mem)->data;
}

static void
host_memory_unmap (GstMemory *)
{
}

static GstMemory *
host_memory_share (GstMemory * mem, gssize offset, gssize size)
{
  GstMemory *parent = mem->parent ? mem->parent : mem;

  if (size == -1)
    size = mem->size - offset;
  return host_memory_new (mem->allocator, parent,
      reinterpret_cast < HostMemory * >(mem)->data,
      (GstMemoryFlags) (GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY),
      mem->maxsize, mem->align, mem->offset + offset, size);
}

static void
gst_cuda_filters_host_allocator_finalize (GObject * object)
{
  GstCudaFiltersHostAllocator *self = GST_CUDA_FILTERS_HOST_ALLOCATOR (object);

  self->context.~GstCudaFiltersContext ();
  G_OBJECT_CLASS (gst_cuda_filters_host_allocator_parent_class)->finalize (object);
}

static void
gst_cuda_filters_host_allocator_class_init (GstCudaFiltersHostAllocatorClass * klass)
{
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = gst_cuda_filters_host_allocator_finalize;
  allocator_class->alloc = gst_cuda_filters_host_allocator_alloc;
  allocator_class->free = gst_cuda_filters_host_allocator_free;

  GST_DEBUG_CATEGORY_INIT (gst_cuda_filters_host_allocator_debug,
      "cudafiltershostallocator", 0, "Pinned host memory allocator");
}

static void
gst_cuda_filters_host_allocator_init (GstCudaFiltersHostAllocator * self)
{
  GstAllocator *alloc = GST_ALLOCATOR (self);

  new (&self->context) GstCudaFiltersContext ();
  alloc->mem_type = HOST_MEMORY_NAME;
  alloc->mem_map = host_memory_map;
  alloc->mem_unmap = host_memory_unmap;
  alloc->mem_share = host_memory_share;
  /* No GST_ALLOCATOR_FLAG_CUSTOM_ALLOC: to anyone mapping it this is plain
   * host memory, and upstream elements should use it. */
}

GstAllocator *
gst_cuda_filters_host_allocator_new (const GstCudaFiltersContext & context)
{
  GstCudaFiltersHostAllocator *self = GST_CUDA_FILTERS_HOST_ALLOCATOR (
      g_object_new (GST_TYPE_CUDA_FILTERS_HOST_ALLOCATOR, nullptr));
  gst_object_ref_sink (self);
  self->context.share (context);
  return GST_ALLOCATOR (self);
}

GstBufferPool *
gst_cuda_filters_host_pool_new (const GstCudaFiltersContext & context,
    GstCaps * caps, guint min_buffers, guint max_buffers)
{
  GstVideoInfo info;
  if (!gst_video_info_from_caps (&info, caps))
    return nullptr;

  GstAllocator *allocator = gst_cuda_filters_host_allocator_new (context);
  GstBufferPool *pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info),
      min_buffers, max_buffers);
  gst_buffer_pool_config_set_allocator (config, allocator, nullptr);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_object_unref (allocator);
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return nullptr;
  }
  return pool;
}

namespace {

/* Host memory registered with the driver in an element's context, and
 * unregistered with that context current. */
class CudaPin final : public GstCudaFiltersHostPinner::Pin
{
public:
  /* Throws where the context cannot be made current or the driver
   * refuses. */
  CudaPin (const GstCudaFiltersContext & context, guint8 * data,
      size_t bytes) {
    context_.share (context);
    GstCudaFiltersScopedContext current (context_);
    if (!current.pushed ())
      throw std::runtime_error ("the element's CUDA context could not be "
          "made current to page-lock system memory");
    range_ = cudafilters::HostRegistration (data, bytes);
  }
  ~CudaPin () override {
    /* The registration is portable: any context may end it, though the
     * element's should be the one current. */
    GstCudaFiltersScopedContext current (context_);
    if (!current.pushed ())
      GST_WARNING ("the element's CUDA context could not be made current "
          "to unregister page-locked memory");
    range_.reset ();
    const cudaError_t e = cudafilters::take_release_error ();
    if (e != cudaSuccess)
      GST_WARNING ("cudaHostUnregister failed: %s", cudaGetErrorString (e));
  }

private:
  GstCudaFiltersContext context_;
  cudafilters::HostRegistration range_;
};

}  // namespace

/* Pinned: memory whose one mapping lasts as long as the memory does,
 * the system memory allocator's (pools, appsrc, wrapped memory) and
 * file-descriptor memory (shared memory, dmabuf), which GStreamer maps
 * once. A registration is made on the address a map returns and must
 * not outlive the pages behind it: memory that another allocator maps
 * anew on each map (GL, VA, an element's own) could come back at the
 * same address with other pages, and the device would read the old
 * ones, so it is staged. The element's own memory is page-locked, and
 * CUDA memory downloads itself. */
GstCudaFiltersHostPinner::Kind
GstCudaFiltersCudaPinner::classify (GstMemory * root) const
{
  if (root->allocator && GST_IS_CUDA_FILTERS_HOST_ALLOCATOR (root->allocator))
    return Kind::kPageLocked;
#ifdef HAVE_GST_CUDA
  if (gst_is_cuda_memory (root))
    return Kind::kPageLocked;
#endif
  if (GST_MEMORY_FLAG_IS_SET (root, GST_MEMORY_FLAG_NOT_MAPPABLE))
    return Kind::kOther;
  if (gst_memory_is_type (root, GST_ALLOCATOR_SYSMEM) ||
      gst_memory_is_type (root, "fd") || gst_memory_is_type (root, "dmabuf"))
    return Kind::kPinnable;
  return Kind::kOther;
}

std::unique_ptr<GstCudaFiltersHostPinner::Pin>
GstCudaFiltersCudaPinner::pin (guint8 * data, size_t bytes,
    std::string & why) const
{
  try {
    return std::make_unique<CudaPin> (context_, data, bytes);
  } catch (const std::exception & e) {
    why = e.what ();
    return nullptr;
  }
}
