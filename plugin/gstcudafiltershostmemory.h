/* System memory that comes back, page-locked where it lies.
 *
 * Sources that cycle a fixed set of buffers (a camera's or a software
 * decoder's pool, appsrc with a pool, videotestsrc behind an element that
 * drops the allocation query) hand the element the same memory frame after
 * frame. Page-locked where it lies (cudaHostRegister), such memory is
 * copied to and from the device directly, as the element's own page-locked
 * pool is, instead of through staging by the host's threads.
 *
 * A registry keeps the record:
 * - a memory is pinned the second time it is seen (memory seen once, as
 *   from a source that allocates every frame, is never pinned: pinning
 *   costs several frames' copies);
 * - a pin lives as long as the GstMemory that owns the bytes (qdata on the
 *   root memory, whose destroy notify undoes it before the bytes are
 *   freed), never by address alone: memory freed and allocated again at the
 *   same address starts over as unseen;
 * - one pin per root memory, however many buffers or sub-memories share it;
 * - what stays pinned is capped (bytes): past the cap the least recently
 *   used pin that no frame is using is undone;
 * - memory the pinner refuses (page-locked already, read-only, memory the
 *   driver cannot lock) is remembered as refused and goes through staging.
 *
 * The registry knows nothing of CUDA: the pinner it is handed does the
 * pinning (gstcudafiltersgpu.cpp: cudaHostRegister in the element's
 * context; the tests: a fake that records what is pinned). Debug category
 * `cudafiltershostmemory`: INFO for each memory pinned or refused, DEBUG
 * for each pin undone. */
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

struct GstCudaFiltersHostEntry;

/* Pins host memory for the device. */
class GstCudaFiltersHostPinner
{
public:
  /* A pinned range: undone when destroyed. */
  class Pin
  {
  public:
    virtual ~Pin () = default;
  };

  /* What a root memory is to the pinner. */
  enum class Kind
  {
    kPageLocked,  /* page-locked already, or not host memory: as it is */
    kPinnable,    /* pinned where it comes back */
    kOther,       /* pageable, never pinned: staged */
  };

  virtual ~GstCudaFiltersHostPinner () = default;
  virtual Kind classify (GstMemory * root) const = 0;
  /* Pins @bytes from @data, or returns null and says why not. */
  virtual std::unique_ptr<Pin> pin (guint8 * data, size_t bytes,
      std::string & why) const = 0;
};

class GstCudaFiltersHostRegistry
{
public:
  /* At most @cap_bytes pinned at once; 0: nothing is ever pinned. */
  explicit GstCudaFiltersHostRegistry (size_t cap_bytes);
  /* Every memory it saw must be gone first. */
  ~GstCudaFiltersHostRegistry () = default;
  GstCudaFiltersHostRegistry (const GstCudaFiltersHostRegistry &) = delete;
  GstCudaFiltersHostRegistry & operator= (const GstCudaFiltersHostRegistry &)
      = delete;

  /* The process's registry: capped at CUDAFILTERS_HOST_REGISTRY_BYTES
   * (read once; default 1 GiB, 0 turns pinning off); never destroyed, so
   * that memory freed at exit still finds it. */
  static GstCudaFiltersHostRegistry & process ();

  struct State
  {
    size_t pinned_bytes = 0;
    size_t pins = 0;
    size_t cap_bytes = 0;
  };
  State state () const;

private:
  friend class GstCudaFiltersHostLease;
  friend struct GstCudaFiltersHostEntry;
  /* Takes @e off the list, and hands back its pin, to be undone outside
   * the lock. */
  std::unique_ptr<GstCudaFiltersHostPinner::Pin> unlist (
      GstCudaFiltersHostEntry * e);
  static void entry_free (gpointer data);

  mutable std::mutex lock_;
  /* Pinned entries, least recently used first. */
  std::list<GstCudaFiltersHostEntry *> lru_;
  size_t bytes_ = 0;
  const size_t cap_;
};

/* How a frame's host memory is copied. */
enum class GstCudaFiltersHostPath
{
  kNone,      /* no host memory in the lease */
  kPinned,    /* all of it pinned here, or page-locked already */
  kStaged,    /* some of it pageable: staged by the host's threads */
};

/* The pins a frame's copies use: none of them is undone until the lease
 * ends, after the frame's transfers. */
class GstCudaFiltersHostLease
{
public:
  explicit GstCudaFiltersHostLease (GstCudaFiltersHostRegistry & registry =
      GstCudaFiltersHostRegistry::process ()) : registry_ (registry) {}
  ~GstCudaFiltersHostLease ();
  GstCudaFiltersHostLease (const GstCudaFiltersHostLease &) = delete;
  GstCudaFiltersHostLease & operator= (const GstCudaFiltersHostLease &) =
      delete;

  /* Every memory of @buffer: pinned by @pinner at its second sight where
   * the cap allows, and held for this lease where pinned. Returns how the
   * buffer's memory will be copied. */
  GstCudaFiltersHostPath use (GstBuffer * buffer,
      const GstCudaFiltersHostPinner & pinner);
  /* Counts the frame among @in_flight (the frames in host memory that
   * elements move to and from one device now) until the lease ends; whether
   * it is the only one. Once per lease. */
  bool travel_alone (std::atomic<int> & in_flight);

private:
  GstCudaFiltersHostRegistry & registry_;
  std::atomic<int> *in_flight_ = nullptr;
  /* Root memories held (a reference each) with their entries. */
  std::vector<std::pair<GstMemory *, GstCudaFiltersHostEntry *>> held_;
};
