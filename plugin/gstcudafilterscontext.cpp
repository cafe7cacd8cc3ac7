#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafilterscontext.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#else
#include <cuda_runtime.h>
#endif

GstCudaFiltersContext::~GstCudaFiltersContext ()
{
  close ();
}

#ifdef HAVE_GST_CUDA

bool
GstCudaFiltersContext::load_driver ()
{
  return gst_cuda_load_library ();
}

bool
GstCudaFiltersContext::open (GstElement * element, gint device_id,
    std::string & why)
{
  if (gst_cuda_ensure_element_context (element, device_id, &context_))
    return true;
  why = device_id < 0 ? std::string ("no CUDA device could be opened")
      : "CUDA device " + std::to_string (device_id) + " could not be opened";
  return false;
}

void
GstCudaFiltersContext::share (const GstCudaFiltersContext & other)
{
  adopt (other.context_);
}

void
GstCudaFiltersContext::close ()
{
  gst_clear_object (&context_);
}

bool
GstCudaFiltersContext::is_open () const
{
  return context_ != nullptr;
}

bool
GstCudaFiltersContext::push () const
{
  return gst_cuda_context_push (context_);
}

void
GstCudaFiltersContext::pop () const
{
  gst_cuda_context_pop (nullptr);
}

bool
GstCudaFiltersContext::handle_query (GstElement * element, GstQuery * query)
    const
{
  return gst_cuda_handle_context_query (element, query, context_);
}

void
GstCudaFiltersContext::handle_set_context (GstElement * element,
    GstContext * context, gint device_id)
{
  gst_cuda_handle_set_context (element, context, device_id, &context_);
}

void
GstCudaFiltersContext::adopt (GstCudaContext * other)
{
  close ();
  context_ = GST_CUDA_CONTEXT (gst_object_ref (other));
}

#else /* The CUDA runtime's primary context. */

bool
GstCudaFiltersContext::load_driver ()
{
  int count = 0;
  const bool ok = cudaGetDeviceCount (&count) == cudaSuccess && count > 0;
  (void) cudaGetLastError ();
  return ok;
}

bool
GstCudaFiltersContext::open (GstElement *, gint device_id, std::string & why)
{
  const gint device = device_id < 0 ? 0 : device_id;
  int count = 0;
  if (cudaGetDeviceCount (&count) != cudaSuccess || device >= count ||
      cudaSetDevice (device) != cudaSuccess || cudaFree (nullptr) != cudaSuccess) {
    (void) cudaGetLastError ();
    why = "CUDA device " + std::to_string (device) + " could not be opened";
    return false;
  }
  device_ = device;
  return true;
}

void
GstCudaFiltersContext::share (const GstCudaFiltersContext & other)
{
  device_ = other.device_;
}

void
GstCudaFiltersContext::close ()
{
  device_ = -1;
}

bool
GstCudaFiltersContext::is_open () const
{
  return device_ >= 0;
}

bool
GstCudaFiltersContext::push () const
{
  /* The runtime's context of the device is made current by selecting the
   * device; nothing to restore: every CUDA call of this plugin selects it. */
  return cudaSetDevice (device_) == cudaSuccess;
}

void
GstCudaFiltersContext::pop () const
{
}

bool
GstCudaFiltersContext::handle_query (GstElement *, GstQuery *) const
{
  return false;
}

void
GstCudaFiltersContext::handle_set_context (GstElement *, GstContext *, gint)
{
}

#endif
