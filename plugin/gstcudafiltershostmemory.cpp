#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltershostmemory.h"
#include "gstcudafiltersenvironment.h"

#include <new>

GST_DEBUG_CATEGORY_STATIC (gst_cuda_filters_host_memory_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_host_memory_debug

namespace {

/* What stays pinned at most, unless CUDAFILTERS_HOST_REGISTRY_BYTES says
 * otherwise: 340 1080p NV12 frames, or 85 4K ones. */
constexpr size_t kDefaultCapBytes = size_t (1) << 30;

enum class Sight
{
  kSeen,     /* once, or again while the cap left no room */
  kPinning,  /* by one element now, outside the registry's lock */
  kPinned,
  kRefused,  /* by the pinner, or mapped at another address each time */
  kEvicted,  /* unpinned for room under the cap: staged from now on, so
              * that more recurring memory than the cap never thrashes */
};

GQuark
entry_quark ()
{
  static const GQuark q =
      g_quark_from_static_string ("GstCudaFiltersHostEntry");
  return q;
}

void
init_debug_category ()
{
  static std::once_flag once;
  std::call_once (once, [] {
        GST_DEBUG_CATEGORY_INIT (gst_cuda_filters_host_memory_debug,
            "cudafiltershostmemory", 0,
            "system memory page-locked where it lies");
      });
}

}  // namespace

/* The registry's record of one root memory, owned by the memory's qdata. */
struct GstCudaFiltersHostEntry
{
  explicit GstCudaFiltersHostEntry (GstCudaFiltersHostRegistry & r)
      : registry (r) {}
  GstCudaFiltersHostRegistry & registry;
  Sight sight = Sight::kSeen;
  std::unique_ptr<GstCudaFiltersHostPinner::Pin> pin;
  /* The range pinned: the memory's mapping when it was. */
  const guint8 *data = nullptr;
  size_t bytes = 0;
  /* Frames using the pin now: it is not undone while they do. */
  int in_use = 0;
  /* Its place in the registry's list, while pinned. */
  std::list<GstCudaFiltersHostEntry *>::iterator place;
};

GstCudaFiltersHostRegistry::GstCudaFiltersHostRegistry (size_t cap_bytes)
    : cap_ (cap_bytes)
{
  init_debug_category ();
}

GstCudaFiltersHostRegistry &
GstCudaFiltersHostRegistry::process ()
{
  /* Constructed once, never destroyed: a memory freed after static
   * destructors have run (a pool a global owns) still finds its registry. */
  alignas (GstCudaFiltersHostRegistry) static unsigned char
      storage[sizeof (GstCudaFiltersHostRegistry)];
  static GstCudaFiltersHostRegistry *const registry =
      ::new (storage) GstCudaFiltersHostRegistry (
          GstCudaFiltersEnvironment::host_registry_bytes (kDefaultCapBytes));
  return *registry;
}

GstCudaFiltersHostRegistry::State
GstCudaFiltersHostRegistry::state () const
{
  std::lock_guard<std::mutex> l (lock_);
  State s;
  s.pinned_bytes = bytes_;
  s.pins = lru_.size ();
  s.cap_bytes = cap_;
  return s;
}

std::unique_ptr<GstCudaFiltersHostPinner::Pin>
GstCudaFiltersHostRegistry::unlist (GstCudaFiltersHostEntry * e)
{
  if (e->sight == Sight::kPinned) {
    lru_.erase (e->place);
    bytes_ -= e->bytes;
  }
  return std::move (e->pin);
}

/* The memory is being freed: its pin goes first, then the bytes. */
void
GstCudaFiltersHostRegistry::entry_free (gpointer data)
{
  std::unique_ptr<GstCudaFiltersHostEntry> e (
      static_cast<GstCudaFiltersHostEntry *> (data));
  std::unique_ptr<GstCudaFiltersHostPinner::Pin> pin;
  {
    std::lock_guard<std::mutex> l (e->registry.lock_);
    pin = e->registry.unlist (e.get ());
  }
  if (pin)
    GST_DEBUG ("unpinning %p (%" G_GSIZE_FORMAT " bytes): its memory is "
        "freed", e->data, e->bytes);
}

GstCudaFiltersHostPath
GstCudaFiltersHostLease::use (GstBuffer * buffer,
    const GstCudaFiltersHostPinner & pinner)
{
  GstCudaFiltersHostRegistry & reg = registry_;
  GstCudaFiltersHostPath path = GstCudaFiltersHostPath::kNone;
  auto note = [&path] (bool pinned) {
    if (!pinned)
      path = GstCudaFiltersHostPath::kStaged;
    else if (path == GstCudaFiltersHostPath::kNone)
      path = GstCudaFiltersHostPath::kPinned;
  };
  for (guint i = 0; i < gst_buffer_n_memory (buffer); ++i) {
    GstMemory *root = gst_buffer_peek_memory (buffer, i);
    while (root->parent)
      root = root->parent;
    const GstCudaFiltersHostPinner::Kind kind = pinner.classify (root);
    if (kind != GstCudaFiltersHostPinner::Kind::kPinnable) {
      note (kind == GstCudaFiltersHostPinner::Kind::kPageLocked);
      continue;
    }
    bool held = false;
    for (const auto & h : held_)
      held = held || h.first == root;
    if (held) {
      note (true);
      continue;
    }

    GstMapInfo map;
    if (!gst_memory_map (root, &map, GST_MAP_READ)) {
      note (false);
      continue;
    }
    guint8 *const data = map.data;
    const size_t bytes = map.maxsize;
    gst_memory_unmap (root, &map);
    if (bytes == 0)
      continue;
    if (reg.cap_ == 0) {
      note (false);
      continue;
    }

    GstCudaFiltersHostEntry *e = nullptr;
    {
      std::lock_guard<std::mutex> l (reg.lock_);
      /* Entries are made under the lock, so no two elements make one for
       * the same memory, and freed only with the memory, which the
       * caller's buffer keeps alive. */
      e = static_cast<GstCudaFiltersHostEntry *> (gst_mini_object_get_qdata
          (GST_MINI_OBJECT (root), entry_quark ()));
      if (!e) {
        auto fresh = std::make_unique<GstCudaFiltersHostEntry> (reg);
        gst_mini_object_set_qdata (GST_MINI_OBJECT (root), entry_quark (),
            fresh.release (), GstCudaFiltersHostRegistry::entry_free);
        note (false);
        continue;
      }
      if (e->sight == Sight::kPinned && e->data != data) {
        /* A memory mapped at another address each time: no pin holds. */
        if (e->in_use == 0) {
          reg.unlist (e);       /* undone under the lock: see below */
          e->sight = Sight::kRefused;
        }
        note (false);
        continue;
      }
      if (e->sight == Sight::kPinned) {
        reg.lru_.splice (reg.lru_.end (), reg.lru_, e->place);
        ++e->in_use;
        held_.emplace_back (gst_memory_ref (root), e);
        note (true);
        continue;
      }
      if (e->sight != Sight::kSeen || bytes > reg.cap_) {
        note (false);
        continue;
      }
      /* Second sight: room under the cap, from the least recently used
       * pins no frame is using. They are undone under the lock, which
       * holds back a thread that frees their memory meanwhile: its bytes
       * must not go while still pinned. (Rare: each memory is evicted at
       * most once.) */
      for (auto it = reg.lru_.begin (); it != reg.lru_.end () &&
          reg.bytes_ + bytes > reg.cap_;) {
        GstCudaFiltersHostEntry *victim = *it++;
        if (victim->in_use == 0) {
          reg.unlist (victim);
          victim->sight = Sight::kEvicted;
          GST_DEBUG ("unpinning %p (%" G_GSIZE_FORMAT " bytes): least "
              "recently used past the cap of %" G_GSIZE_FORMAT " bytes",
              victim->data, victim->bytes, reg.cap_);
        }
      }
      if (reg.bytes_ + bytes > reg.cap_) {
        note (false);
        continue;
      }
      reg.bytes_ += bytes;      /* reserved while pinning */
      e->sight = Sight::kPinning;
      ++e->in_use;
    }

    std::string why;
    std::unique_ptr<GstCudaFiltersHostPinner::Pin> pin =
        pinner.pin (data, bytes, why);
    std::lock_guard<std::mutex> l (reg.lock_);
    if (!pin) {
      reg.bytes_ -= bytes;
      e->sight = Sight::kRefused;
      --e->in_use;
      GST_INFO ("system memory %p (%" G_GSIZE_FORMAT " bytes) stays "
          "pageable, staged: %s", data, bytes, why.c_str ());
      note (false);
      continue;
    }
    e->pin = std::move (pin);
    e->data = data;
    e->bytes = bytes;
    e->sight = Sight::kPinned;
    e->place = reg.lru_.insert (reg.lru_.end (), e);
    held_.emplace_back (gst_memory_ref (root), e);
    GST_INFO ("pinned system memory %p (%" G_GSIZE_FORMAT " bytes) at its "
        "second sight: %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " bytes "
        "pinned", data, bytes, reg.bytes_, reg.cap_);
    note (true);
  }
  return path;
}

bool
GstCudaFiltersHostLease::travel_alone (std::atomic<int> & in_flight)
{
  g_return_val_if_fail (in_flight_ == nullptr, false);
  in_flight_ = &in_flight;
  return in_flight.fetch_add (1) == 0;
}

GstCudaFiltersHostLease::~GstCudaFiltersHostLease ()
{
  if (in_flight_)
    in_flight_->fetch_sub (1);
  {
    std::lock_guard<std::mutex> l (registry_.lock_);
    for (const auto & h : held_)
      --h.second->in_use;
  }
  /* Outside the lock: the last reference frees the memory, whose entry
   * takes the lock. */
  for (const auto & h : held_)
    gst_memory_unref (h.first);
}
