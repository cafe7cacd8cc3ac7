#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafilterscontext.h"
#include "gstcudafiltersproperties.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <map>
#include <utility>

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_filters_base_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_base_debug

bool GstCudaFiltersContext::driver_loaded_ = false;

GST_CUDA_FILTERS_DEFINE_ENUM_TYPE (GstCudaFiltersCudaWait,
    gst_cuda_filters_cuda_wait,
    {GST_CUDA_FILTERS_CUDA_WAIT_BLOCKING,
        "Threads waiting for the GPU in the element's CUDA context sleep until "
          "its interrupt: the context schedules blocking synchronisation while "
          "the element uses it", "blocking"},
    {GST_CUDA_FILTERS_CUDA_WAIT_KEEP,
        "The CUDA context's scheduling is left as it is", "keep"});

namespace {

/* The driver calls that read and set a context's flags, through the
 * runtime (the plugin does not link the driver library); null where the
 * driver lacks them. */
struct ContextFlagCalls
{
  PFN_cuCtxGetCurrent_v4000 get_current = nullptr;
  PFN_cuCtxGetFlags_v7000 get_flags = nullptr;
  PFN_cuCtxSetFlags_v12010 set_flags = nullptr;
};

template < typename Fn > bool
driver_call (const char *name, unsigned version, Fn & fn)
{
  void *p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t err = cudaGetDriverEntryPointByVersion (name, &p, version,
      cudaEnableDefault, &found);
#else
  (void) version;
  const cudaError_t err = cudaGetDriverEntryPoint (name, &p, cudaEnableDefault,
      &found);
#endif
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || !p) {
    (void) cudaGetLastError ();
    return false;
  }
  fn = reinterpret_cast < Fn > (p);
  return true;
}

const ContextFlagCalls *
context_flag_calls ()
{
  static const ContextFlagCalls calls =[] {
    ContextFlagCalls c;
    if (!driver_call ("cuCtxGetCurrent", 4000, c.get_current) ||
        !driver_call ("cuCtxGetFlags", 7000, c.get_flags) ||
        !driver_call ("cuCtxSetFlags", 12010, c.set_flags))
      c = ContextFlagCalls {};
    return c;
  }();
  return calls.set_flags ? &calls : nullptr;
}

/* The contexts held: their flags before the first hold, the flags the
 * first hold left, and how many holds. */
struct HeldContext
{
  unsigned int before;
  unsigned int set;
  int holds;
};

std::mutex held_lock;
std::map < CUcontext, HeldContext > held_contexts;

}  // namespace

std::unique_ptr<GstCudaFiltersBlockingWaits>
GstCudaFiltersBlockingWaits::hold (std::string & why)
{
  const ContextFlagCalls *calls = context_flag_calls ();
  if (!calls) {
    why = "the CUDA driver cannot change a context's scheduling "
        "(cuCtxSetFlags needs CUDA 12.1 or newer)";
    return nullptr;
  }
  CUcontext context = nullptr;
  if (calls->get_current (&context) != CUDA_SUCCESS || !context) {
    why = "no CUDA context is current";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock (held_lock);
  auto it = held_contexts.find (context);
  if (it == held_contexts.end ()) {
    unsigned int flags = 0;
    if (calls->get_flags (&flags) != CUDA_SUCCESS) {
      why = "cuCtxGetFlags failed";
      return nullptr;
    }
    const unsigned int blocking = (flags & ~unsigned (CU_CTX_SCHED_MASK)) |
        CU_CTX_SCHED_BLOCKING_SYNC;
    if (blocking != flags) {
      const CUresult res = calls->set_flags (blocking);
      if (res != CUDA_SUCCESS) {
        why = "cuCtxSetFlags failed (CUresult " + std::to_string (int (res)) + ")";
        return nullptr;
      }
      GST_INFO ("CUDA context %p: scheduling switched from flags 0x%x to "
          "blocking synchronisation (0x%x)", (void *) context, flags, blocking);
    }
    it = held_contexts.emplace (context, HeldContext {flags, blocking, 0}).first;
  }
  ++it->second.holds;
  return std::unique_ptr<GstCudaFiltersBlockingWaits> (
      new GstCudaFiltersBlockingWaits (context));
}

GstCudaFiltersBlockingWaits::~GstCudaFiltersBlockingWaits ()
{
  const ContextFlagCalls *calls = context_flag_calls ();
  CUcontext context = static_cast < CUcontext > (context_);
  std::lock_guard<std::mutex> lock (held_lock);
  auto it = held_contexts.find (context);
  if (it == held_contexts.end () || --it->second.holds > 0)
    return;
  const HeldContext held = it->second;
  held_contexts.erase (it);
  CUcontext current = nullptr;
  unsigned int flags = 0;
  /* Flags changed by someone else since are theirs to keep. */
  if (held.before == held.set || calls->get_current (&current) != CUDA_SUCCESS ||
      current != context || calls->get_flags (&flags) != CUDA_SUCCESS ||
      flags != held.set)
    return;
  if (calls->set_flags (held.before) == CUDA_SUCCESS)
    GST_INFO ("CUDA context %p: scheduling flags 0x%x given back", (void *) context,
        held.before);
}

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

/* One count per device, for every context on it: the copy engines and the
 * bus that decide a host frame's route are the device's, whichever context
 * (separate pipelines each make their own) moves the frame. */
static std::atomic<int> &
gst_cuda_filters_host_frames_on_device (gint device)
{
  static std::atomic<int> counts[64];
  return counts[(guint) device % 64];
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

std::atomic<int> &
GstCudaFiltersContext::host_frames_in_flight () const
{
  guint device = 0;
  g_object_get (context_, "cuda-device-id", &device, nullptr);
  return gst_cuda_filters_host_frames_on_device ((gint) device);
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

std::atomic<int> &
GstCudaFiltersContext::host_frames_in_flight () const
{
  return gst_cuda_filters_host_frames_on_device (device_);
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
