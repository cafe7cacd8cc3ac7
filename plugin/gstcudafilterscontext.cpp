#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafilterscontext.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif
#include <cuda_runtime.h>

#include <utility>

bool GstCudaFiltersContext::driver_loaded_ = false;

GstCudaFiltersContext::~GstCudaFiltersContext ()
{
  close ();
}

bool
GstCudaFiltersContext::usable (std::string & why) const
{
  if (!push ()) {
    why = "the CUDA context could not be made current";
    return false;
  }
  /* Returns at once: "not ready" while work runs, the fault once one
   * happened. */
  const cudaError_t state = cudaStreamQuery (nullptr);
  (void) cudaGetLastError ();
  pop ();
  if (state == cudaSuccess || state == cudaErrorNotReady)
    return true;
  why = std::string (cudaGetErrorName (state)) + ": " + cudaGetErrorString (state);
  return false;
}

#ifdef HAVE_GST_CUDA

bool
GstCudaFiltersContext::load_driver ()
{
  driver_loaded_ = gst_cuda_load_library ();
  return driver_loaded_;
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
  GstCudaContext *old = nullptr;
  {
    std::lock_guard<std::mutex> lock (swap_);
    std::swap (old, context_);
  }
  gst_clear_object (&old);
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
  GstCudaContext *ours = nullptr;
  {
    std::lock_guard<std::mutex> lock (swap_);
    if (context_)
      ours = GST_CUDA_CONTEXT (gst_object_ref (context_));
  }
  const bool answered = gst_cuda_handle_context_query (element, query, ours);
  gst_clear_object (&ours);
  return answered;
}

void
GstCudaFiltersContext::handle_set_context (GstElement * element,
    GstContext * context, gint device_id)
{
  std::lock_guard<std::mutex> lock (swap_);
  gst_cuda_handle_set_context (element, context, device_id, &context_);
}

void
GstCudaFiltersContext::adopt (GstCudaContext * other)
{
  GstCudaContext *old = GST_CUDA_CONTEXT (gst_object_ref (other));
  {
    std::lock_guard<std::mutex> lock (swap_);
    std::swap (old, context_);
  }
  gst_clear_object (&old);
}

bool
GstCudaFiltersContext::renew (GstElement * element, std::string & why)
{
  guint device = 0;
  g_object_get (context_, "cuda-device-id", &device, nullptr);
  GstCudaContext *fresh = gst_cuda_context_new (device);
  if (!fresh) {
    why = "no new CUDA context could be created on device " +
        std::to_string (device);
    return false;
  }
  adopt (fresh);
  gst_object_unref (fresh);
  gst_element_post_message (element,
      gst_message_new_have_context (GST_OBJECT (element),
          gst_context_new_cuda_context (context_)));
  return true;
}

#else /* The CUDA runtime's primary context. */

bool
GstCudaFiltersContext::load_driver ()
{
  int count = 0;
  driver_loaded_ = cudaGetDeviceCount (&count) == cudaSuccess && count > 0;
  (void) cudaGetLastError ();
  return driver_loaded_;
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

bool
GstCudaFiltersContext::renew (GstElement *, std::string & why)
{
  /* The runtime's context of a device is the process's: only a reset of
   * the device, which other users of it would not survive, clears it. */
  why = "the CUDA runtime's context of device " + std::to_string (device_) +
      " stays unusable until the application restarts";
  return false;
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
