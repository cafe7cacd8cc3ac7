/* The registry of system memory pinned where it lies
 * (plugin/gstcudafiltershostmemory.h), with a pinner that records what is
 * pinned instead of calling the driver: it runs without a GPU, and under
 * valgrind with the cpu suite (scripts/check-memory.sh). What the GPU makes
 * of pinned memory is tested in host-memory-gpu. */
#include "gstcudafiltershostmemory.h"

#include <gst/check/gstcheck.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr gsize kBytes = 64 * 1024;

/* Records the ranges pinned now; refuses where told to. */
class FakePinner final : public GstCudaFiltersHostPinner
{
public:
  class FakePin final : public Pin
  {
  public:
    FakePin (const FakePinner & owner, const guint8 * data)
        : owner_ (owner), data_ (data) {}
    ~FakePin () override {
      std::lock_guard<std::mutex> l (owner_.lock_);
      owner_.pinned_.erase (data_);
    }

  private:
    const FakePinner & owner_;
    const guint8 *data_;
  };

  Kind classify (GstMemory *) const override { return kind_; }
  void set_kind (Kind k) { kind_ = k; }

  std::unique_ptr<Pin> pin (guint8 * data, size_t bytes,
      std::string & why) const override {
    std::lock_guard<std::mutex> l (lock_);
    ++calls_;
    if (refuse_) {
      why = "refused by the test";
      return nullptr;
    }
    if (pinned_.count (data) != 0)
      pinned_twice_ = true;
    pinned_[data] = bytes;
    return std::make_unique<FakePin> (*this, data);
  }

  bool pinned (const void *data) const {
    std::lock_guard<std::mutex> l (lock_);
    return pinned_.count (static_cast<const guint8 *> (data)) != 0;
  }
  size_t count () const {
    std::lock_guard<std::mutex> l (lock_);
    return pinned_.size ();
  }
  int calls () const {
    std::lock_guard<std::mutex> l (lock_);
    return calls_;
  }
  void refuse (bool r) { refuse_ = r; }
  /* Checked by every test when its pinner goes. */
  ~FakePinner () override { fail_if (pinned_twice_, "a memory was pinned twice"); }

private:
  mutable std::mutex lock_;
  mutable std::map<const guint8 *, size_t> pinned_;
  mutable int calls_ = 0;
  mutable bool pinned_twice_ = false;
  bool refuse_ = false;
  Kind kind_ = Kind::kPinnable;
};

/* Bytes the test owns, wrapped in a GstMemory whose free says whether the
 * bytes were still pinned at that moment. */
struct Arena
{
  std::vector<guint8> bytes = std::vector<guint8> (kBytes);
  const FakePinner *pinner = nullptr;
  bool freed = false;
  bool pinned_when_freed = false;
};

void
arena_free (gpointer p)
{
  Arena *a = static_cast<Arena *> (p);
  a->freed = true;
  a->pinned_when_freed = a->pinner->pinned (a->bytes.data ());
}

GstMemory *
wrap (Arena & a, const FakePinner & pinner)
{
  a.pinner = &pinner;
  a.freed = false;
  return gst_memory_new_wrapped ((GstMemoryFlags) 0, a.bytes.data (), kBytes,
      0, kBytes, &a, arena_free);
}

GstBuffer *
buffer_of (GstMemory * mem)
{
  GstBuffer *buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, mem);
  return buf;
}

/* One frame's use of @buf: the path it took. */
GstCudaFiltersHostPath
use_once (GstCudaFiltersHostRegistry & reg, const FakePinner & pinner,
    GstBuffer * buf)
{
  GstCudaFiltersHostLease lease (reg);
  return lease.use (buf, pinner);
}

const GstCudaFiltersHostPath kPinned = GstCudaFiltersHostPath::kPinned;
const GstCudaFiltersHostPath kStaged = GstCudaFiltersHostPath::kStaged;

}  // namespace

/* Staged at first sight, pinned from the second on, one pin a memory. */
GST_START_TEST (test_pinned_at_second_sight)
{
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (16 * kBytes);
  Arena a;
  GstBuffer *buf = buffer_of (wrap (a, pinner));
  fail_unless (use_once (reg, pinner, buf) == kStaged);
  fail_if (pinner.pinned (a.bytes.data ()));
  for (int i = 0; i < 3; ++i) {
    fail_unless (use_once (reg, pinner, buf) == kPinned);
    fail_unless (pinner.pinned (a.bytes.data ()));
  }
  fail_unless_equals_int (pinner.calls (), 1);
  fail_unless_equals_int ((int) reg.state ().pins, 1);
  fail_unless_equals_uint64 (reg.state ().pinned_bytes, kBytes);
  gst_buffer_unref (buf);
}
GST_END_TEST;

/* A frame's lease counts it among the frames in flight of its context
 * until it ends: the route takes the paths of a frame alone only for the
 * one that finds no other in flight. */
GST_START_TEST (test_leases_count_frames_in_flight)
{
  GstCudaFiltersHostRegistry reg (16 * kBytes);
  std::atomic<int> in_flight (0), other_context (0);
  {
    GstCudaFiltersHostLease first (reg);
    fail_unless (first.travel_alone (in_flight), "the first frame is alone");
    fail_unless_equals_int (in_flight.load (), 1);
    {
      GstCudaFiltersHostLease second (reg);
      fail_if (second.travel_alone (in_flight), "a second frame is alone");
      GstCudaFiltersHostLease elsewhere (reg);
      fail_unless (elsewhere.travel_alone (other_context),
          "a frame of another context is not alone");
      fail_unless_equals_int (in_flight.load (), 2);
    }
    fail_unless_equals_int (in_flight.load (), 1);
    fail_unless_equals_int (other_context.load (), 0);
  }
  fail_unless_equals_int (in_flight.load (), 0);
  GstCudaFiltersHostLease later (reg);
  fail_unless (later.travel_alone (in_flight), "alone once the others ended");
}
GST_END_TEST;

/* The pin is undone when the memory is freed, before its bytes go. */
GST_START_TEST (test_unpinned_before_bytes_are_freed)
{
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (16 * kBytes);
  Arena a;
  GstBuffer *buf = buffer_of (wrap (a, pinner));
  use_once (reg, pinner, buf);
  use_once (reg, pinner, buf);
  fail_unless (pinner.pinned (a.bytes.data ()));
  gst_buffer_unref (buf);
  fail_unless (a.freed);
  fail_if (a.pinned_when_freed, "the bytes were freed while pinned");
  fail_unless_equals_int ((int) pinner.count (), 0);
  fail_unless_equals_int ((int) reg.state ().pins, 0);
  fail_unless_equals_uint64 (reg.state ().pinned_bytes, 0);
}
GST_END_TEST;

/* A new memory at the address of a freed one starts unseen: no stale pin,
 * and it is pinned anew only at its own second sight. */
GST_START_TEST (test_reused_address_starts_unseen)
{
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (16 * kBytes);
  Arena a;
  GstBuffer *first = buffer_of (wrap (a, pinner));
  use_once (reg, pinner, first);
  use_once (reg, pinner, first);
  gst_buffer_unref (first);
  fail_unless (a.freed);

  GstBuffer *again = buffer_of (wrap (a, pinner));
  fail_unless (use_once (reg, pinner, again) == kStaged);
  fail_if (pinner.pinned (a.bytes.data ()), "a stale pin was reused");
  fail_unless (use_once (reg, pinner, again) == kPinned);
  fail_unless_equals_int (pinner.calls (), 2);
  gst_buffer_unref (again);
  fail_if (a.pinned_when_freed);
}
GST_END_TEST;

/* Buffers that share a memory, and sub-memories of one memory, count as
 * that memory: one pin. */
GST_START_TEST (test_one_pin_per_memory_block)
{
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (16 * kBytes);
  Arena a;
  GstMemory *root = wrap (a, pinner);
  GstBuffer *whole = buffer_of (root);
  GstBuffer *copy = gst_buffer_copy (whole);    /* shares the memory */
  /* Two planes, each a part of the same block. */
  GstBuffer *planes = gst_buffer_new ();
  gst_buffer_append_memory (planes, gst_memory_share (root, 0, kBytes / 2));
  gst_buffer_append_memory (planes, gst_memory_share (root, kBytes / 2, -1));

  fail_unless (use_once (reg, pinner, whole) == kStaged);
  fail_unless (use_once (reg, pinner, copy) == kPinned);
  fail_unless (use_once (reg, pinner, planes) == kPinned);
  {
    GstCudaFiltersHostLease lease (reg);
    fail_unless (lease.use (planes, pinner) == kPinned);
    fail_unless (lease.use (whole, pinner) == kPinned);
  }
  fail_unless_equals_int (pinner.calls (), 1);
  fail_unless_equals_int ((int) pinner.count (), 1);
  fail_unless_equals_uint64 (reg.state ().pinned_bytes, kBytes);
  gst_buffer_unref (planes);
  gst_buffer_unref (copy);
  fail_unless (pinner.pinned (a.bytes.data ()));
  gst_buffer_unref (whole);
  fail_unless (a.freed);
  fail_if (a.pinned_when_freed);
}
GST_END_TEST;

/* A frame is pinned only where every one of its memories is. */
GST_START_TEST (test_frame_of_several_memories)
{
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (16 * kBytes);
  Arena luma, chroma, fresh;
  GstBuffer *buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, wrap (luma, pinner));
  gst_buffer_append_memory (buf, wrap (chroma, pinner));
  fail_unless (use_once (reg, pinner, buf) == kStaged);
  fail_unless (use_once (reg, pinner, buf) == kPinned);
  fail_unless_equals_int ((int) pinner.count (), 2);
  /* A new chroma memory: staged until it too comes back. */
  gst_buffer_replace_memory (buf, 1, wrap (fresh, pinner));
  fail_unless (chroma.freed && !chroma.pinned_when_freed);
  fail_unless (use_once (reg, pinner, buf) == kStaged);
  fail_unless (use_once (reg, pinner, buf) == kPinned);
  gst_buffer_unref (buf);
  fail_unless_equals_int ((int) pinner.count (), 0);
}
GST_END_TEST;

/* Never more than the cap: the least recently used pin no frame holds is
 * undone for a new one, and stays undone (more recurring memory than the
 * cap does not pin and unpin every frame). */
GST_START_TEST (test_cap_least_recently_used_first)
{
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (2 * kBytes);
  Arena a[3];
  GstBuffer *buf[3];
  for (int i = 0; i < 3; ++i)
    buf[i] = buffer_of (wrap (a[i], pinner));
  for (int i = 0; i < 3; ++i)
    use_once (reg, pinner, buf[i]);
  /* Second sights of 0 and 1: pinned; of 2: 0 is the least recently used. */
  fail_unless (use_once (reg, pinner, buf[0]) == kPinned);
  fail_unless (use_once (reg, pinner, buf[1]) == kPinned);
  fail_unless (use_once (reg, pinner, buf[2]) == kPinned);
  fail_if (pinner.pinned (a[0].bytes.data ()));
  fail_unless (pinner.pinned (a[1].bytes.data ()));
  fail_unless (pinner.pinned (a[2].bytes.data ()));
  for (int round = 0; round < 4; ++round)
    for (int i = 0; i < 3; ++i) {
      const GstCudaFiltersHostPath p = use_once (reg, pinner, buf[i]);
      fail_unless (p == (i == 0 ? kStaged : kPinned));
      fail_unless (reg.state ().pinned_bytes <= 2 * kBytes);
    }
  fail_unless_equals_int (pinner.calls (), 3);
  for (GstBuffer *b : buf)
    gst_buffer_unref (b);
  fail_unless_equals_int ((int) pinner.count (), 0);
}
GST_END_TEST;

/* A pin a frame holds is not undone for another: that one is staged. */
GST_START_TEST (test_pins_in_use_stay)
{
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (kBytes);
  Arena a, b;
  GstBuffer *ba = buffer_of (wrap (a, pinner));
  GstBuffer *bb = buffer_of (wrap (b, pinner));
  use_once (reg, pinner, ba);
  use_once (reg, pinner, bb);
  {
    GstCudaFiltersHostLease holding (reg);
    fail_unless (holding.use (ba, pinner) == kPinned);
    fail_unless (use_once (reg, pinner, bb) == kStaged);
    fail_unless (pinner.pinned (a.bytes.data ()));
    /* The lease keeps the memory: dropped by its buffer, it lives on. */
    gst_buffer_unref (ba);
    fail_if (a.freed);
  }
  fail_unless (a.freed);
  fail_if (a.pinned_when_freed);
  /* Room now: b is pinned at its next sight. */
  fail_unless (use_once (reg, pinner, bb) == kPinned);
  gst_buffer_unref (bb);
}
GST_END_TEST;

/* Memory the pinner refuses is staged, and not offered again. Nothing is
 * pinned with a cap of 0. */
GST_START_TEST (test_refused_and_turned_off)
{
  FakePinner pinner;
  pinner.refuse (true);
  GstCudaFiltersHostRegistry reg (16 * kBytes);
  Arena a;
  GstBuffer *buf = buffer_of (wrap (a, pinner));
  for (int i = 0; i < 5; ++i)
    fail_unless (use_once (reg, pinner, buf) == kStaged);
  fail_unless_equals_int (pinner.calls (), 1);
  fail_unless_equals_uint64 (reg.state ().pinned_bytes, 0);
  gst_buffer_unref (buf);

  FakePinner willing;
  GstCudaFiltersHostRegistry off (0);
  Arena c;
  GstBuffer *other = buffer_of (wrap (c, willing));
  for (int i = 0; i < 5; ++i)
    fail_unless (use_once (off, willing, other) == kStaged);
  fail_unless_equals_int (willing.calls (), 0);
  gst_buffer_unref (other);
}
GST_END_TEST;

/* Memory the pinner does not pin (another allocator's, whose mapping may
 * change) is staged at every sight; memory page-locked already is not
 * staged, and neither is pinned again. */
GST_START_TEST (test_memory_the_pinner_leaves_alone)
{
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (16 * kBytes);
  Arena a;
  GstBuffer *buf = buffer_of (wrap (a, pinner));
  pinner.set_kind (GstCudaFiltersHostPinner::Kind::kOther);
  for (int i = 0; i < 4; ++i)
    fail_unless (use_once (reg, pinner, buf) == kStaged);
  pinner.set_kind (GstCudaFiltersHostPinner::Kind::kPageLocked);
  for (int i = 0; i < 4; ++i)
    fail_unless (use_once (reg, pinner, buf) == kPinned);
  fail_unless_equals_int (pinner.calls (), 0);
  fail_unless_equals_int ((int) reg.state ().pins, 0);
  gst_buffer_unref (buf);
}
GST_END_TEST;

/* Elements on several threads cycling the same memories, with buffers
 * freed and new ones made on the way: the cap holds at every step, no
 * memory is pinned twice (the pinner's destructor checks), and none is freed
 * while pinned. */
GST_START_TEST (test_threads_share_the_registry)
{
  constexpr int kMemories = 6, kThreads = 4, kRounds = 300;
  FakePinner pinner;
  GstCudaFiltersHostRegistry reg (3 * kBytes);
  std::vector<Arena> arenas (kMemories * 2);
  std::mutex lock;
  std::vector<GstBuffer *> bufs;
  for (int i = 0; i < kMemories; ++i)
    bufs.push_back (buffer_of (wrap (arenas[i], pinner)));
  std::atomic<bool> over_cap { false };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back ([&, t] {
          for (int r = 0; r < kRounds; ++r) {
            GstBuffer *buf;
            {
              std::lock_guard<std::mutex> l (lock);
              buf = gst_buffer_ref (bufs[(r + t) % kMemories]);
            }
            use_once (reg, pinner, buf);
            if (reg.state ().pinned_bytes > 3 * kBytes)
              over_cap = true;
            gst_buffer_unref (buf);
            if (t == 0 && r % 50 == 49) {
              /* The source replaces one memory by a new one. */
              const int slot = (r / 50) % kMemories;
              std::lock_guard<std::mutex> l (lock);
              Arena & spare = arenas[kMemories + slot];
              if (spare.pinner == nullptr) {
                gst_buffer_unref (bufs[slot]);
                bufs[slot] = buffer_of (wrap (spare, pinner));
              }
            }
          }
        });
  for (auto & th : threads)
    th.join ();
  fail_if (over_cap.load (), "more than the cap was pinned");
  for (GstBuffer *b : bufs)
    gst_buffer_unref (b);
  for (size_t i = 0; i < arenas.size (); ++i)
    fail_if (arenas[i].pinner && (!arenas[i].freed ||
            arenas[i].pinned_when_freed), "memory %d: %s", (int) i,
        arenas[i].freed ? "freed while pinned" : "never freed");
  fail_unless_equals_int ((int) pinner.count (), 0);
  fail_unless_equals_int ((int) reg.state ().pins, 0);
}
GST_END_TEST;

static Suite *
host_registry_suite (void)
{
  Suite *s = suite_create ("host-registry");
  TCase *tc = tcase_create ("general");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_pinned_at_second_sight);
  tcase_add_test (tc, test_unpinned_before_bytes_are_freed);
  tcase_add_test (tc, test_reused_address_starts_unseen);
  tcase_add_test (tc, test_one_pin_per_memory_block);
  tcase_add_test (tc, test_frame_of_several_memories);
  tcase_add_test (tc, test_cap_least_recently_used_first);
  tcase_add_test (tc, test_pins_in_use_stay);
  tcase_add_test (tc, test_refused_and_turned_off);
  tcase_add_test (tc, test_memory_the_pinner_leaves_alone);
  tcase_add_test (tc, test_threads_share_the_registry);
  tcase_add_test (tc, test_leases_count_frames_in_flight);
  return s;
}

GST_CHECK_MAIN (host_registry);
