/* The CUDA context an element runs its engines in.
 *
 * With GStreamer's CUDA library (gstreamer-cuda-1.0, GStreamer 1.22 and
 * newer; HAVE_GST_CUDA): a GstCudaContext, shared with neighbouring CUDA
 * elements (nvcodec) through the context query and messages, and the one
 * frames in CUDA memory belong to.
 *
 * Without it (GStreamer 1.20, NVIDIA JetPack): the CUDA runtime's primary
 * context of the chosen device. The elements then take frames in system
 * memory only. */
#pragma once

/* The class's members depend on HAVE_GST_CUDA: every file that includes
 * this one must see the same answer, or they disagree on its layout. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#endif

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

class GstCudaFiltersContext
{
public:
  GstCudaFiltersContext () = default;
  ~GstCudaFiltersContext ();
  GstCudaFiltersContext (const GstCudaFiltersContext &) = delete;
  GstCudaFiltersContext & operator= (const GstCudaFiltersContext &) = delete;

  /* Loads the CUDA driver (plugin_init, once per process); false without
   * one. driver_loaded () says how that went. */
  static bool load_driver ();
  static bool driver_loaded () { return driver_loaded_; }

  /* Opens the context of device @device_id (-1: any) for @element: shared
   * with its neighbours where GStreamer's CUDA library is there. */
  bool open (GstElement * element, gint device_id, std::string & why);
  /* The same context as @other (which must be open), held on its own. */
  void share (const GstCudaFiltersContext & other);
  /* Whether the open context still works: a fault in any kernel of it (of
   * any element sharing it) makes every later call fail. Says why not. */
  bool usable (std::string & why) const;
  /* Replaces the open context by a new one on its device, offered to the
   * neighbours (have-context); false, with why, where that is impossible. */
  bool renew (GstElement * element, std::string & why);
  void close ();
  bool is_open () const;

  /* Makes the context current on the calling thread, and restores what was
   * current. */
  bool push () const;
  void pop () const;

  /* The frames in host memory that the elements on the open context's
   * device are moving now, counted by their leases
   * (GstCudaFiltersHostLease): a frame's route takes the paths that are
   * fastest alone only while it is the one (GstCudaFiltersGpu::place).
   * One count per device, whatever context the elements use. */
  std::atomic<int> & host_frames_in_flight () const;

  /* The element's context query and set_context, where contexts are
   * shared; false / nothing otherwise. */
  bool handle_query (GstElement * element, GstQuery * query) const;
  void handle_set_context (GstElement * element, GstContext * context,
      gint device_id);

#ifdef HAVE_GST_CUDA
  GstCudaContext *gst_context () const { return context_; }
  /* Takes @other (another element's context) as ours. */
  void adopt (GstCudaContext * other);
#endif

private:
  static bool driver_loaded_;
#ifdef HAVE_GST_CUDA
  /* Written by the element's own threads (open, adopt, renew, close) and
   * by set_context; read by context queries from any thread, which take
   * their reference under swap_ so that a swap cannot free the context
   * under them. */
  mutable std::mutex swap_;
  GstCudaContext *context_ = nullptr;
#else
  gint device_ = -1;
#endif
};

/* How a thread that waits for the GPU in the element's CUDA context waits:
 * the cuda-wait property. The context is shared (decoders, other elements,
 * the application), so its scheduling is theirs too. */
typedef enum
{
  /* The context schedules blocking synchronisation
   * (CU_CTX_SCHED_BLOCKING_SYNC) while an element that asks for it uses it:
   * a thread that waits sleeps until the GPU's interrupt. */
  GST_CUDA_FILTERS_CUDA_WAIT_BLOCKING,
  /* The context's scheduling is left as it is: one that GStreamer creates
   * spins while a thread waits, where it has fewer contexts than cores. */
  GST_CUDA_FILTERS_CUDA_WAIT_KEEP,
} GstCudaFiltersCudaWait;

GType gst_cuda_filters_cuda_wait_get_type (void);
#define GST_TYPE_CUDA_FILTERS_CUDA_WAIT (gst_cuda_filters_cuda_wait_get_type ())

/* Blocking synchronisation in the current CUDA context for as long as a
 * hold on it lives. Holds on one context count: the first switches its
 * scheduling (unless it blocks already), the last gives it back the flags
 * it had, unless someone changed them meanwhile. Made and destroyed with
 * that context current. */
class GstCudaFiltersBlockingWaits
{
public:
  /* A hold on the current context; null, with why, where its scheduling
   * cannot be changed (a driver older than CUDA 12.1's). */
  static std::unique_ptr<GstCudaFiltersBlockingWaits> hold (std::string & why);
  ~GstCudaFiltersBlockingWaits ();
  GstCudaFiltersBlockingWaits (const GstCudaFiltersBlockingWaits &) = delete;
  GstCudaFiltersBlockingWaits & operator= (const GstCudaFiltersBlockingWaits &) =
      delete;

private:
  explicit GstCudaFiltersBlockingWaits (void *context) : context_ (context) {}
  void *context_;  /* the CUcontext held */
};

/* Makes a context current for the lifetime of the scope. */
class GstCudaFiltersScopedContext
{
public:
  explicit GstCudaFiltersScopedContext (const GstCudaFiltersContext & context)
      : context_ (context), pushed_ (context.is_open () && context.push ()) {}
  ~GstCudaFiltersScopedContext () {
    if (pushed_)
      context_.pop ();
  }
  GstCudaFiltersScopedContext (const GstCudaFiltersScopedContext &) = delete;
  GstCudaFiltersScopedContext & operator= (const GstCudaFiltersScopedContext &) =
      delete;
  bool pushed () const { return pushed_; }

private:
  const GstCudaFiltersContext & context_;
  bool pushed_;
};
