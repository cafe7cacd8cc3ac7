/* Long runs of every element: state cycles of a whole pipeline and a soak
 * of one instance, outputs checked on the way, memory that must not grow.
 * Built twice from this file: `soak` on the CPU backend (everywhere, CI
 * included) and `soak-gpu` on the CUDA backend, which also watches the
 * device's free memory; it runs alone, since another test allocating on the
 * GPU meanwhile would look like a leak, and exits 77 (skipped) without a
 * GPU.
 *
 * Every run counts the GStreamer objects (buffers, memories, pools, caps,
 * events, elements) made and freed over the loop with the leaks tracer: one
 * left over per frame or cycle fails it in any mode. The long runs (1000
 * state cycles, 100k frames) also check resident and device memory. The
 * everyday gpu suite and CUDAFILTERS_TEST_QUICK=1 (valgrind,
 * AddressSanitizer, compute-sanitizer) run them shorter (CUDAFILTERS_TEST_FULL
 * for the long ones) and skip the memory readings, which those tools move
 * (they keep freed memory in quarantine) and which are too coarse for a
 * short run; the tools find leaks of plain memory themselves. */
#include "elements.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>

using namespace test;

/* Resident set size of this process, in bytes. */
static size_t
resident_bytes ()
{
  long pages = 0, resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");
  fail_unless (f != nullptr);
  fail_unless_equals_int (fscanf (f, "%ld %ld", &pages, &resident), 2);
  fclose (f);
  return size_t (resident) * size_t (sysconf (_SC_PAGESIZE));
}

/* Growth allowed between an early and a late sample of a long run. A leak of
 * one buffer or one pool per frame or cycle exceeds it several times. */
static const size_t kAllowedGrowth = 8u << 20;

/* The long runs, with memory readings: the cpu suite (outside the memory
 * checkers) and gpu-full. */
static bool
long_run ()
{
  return !quick () && full ();
}

/* GStreamer's leaks tracer (the coretracers plugin), which main () turns
 * on. */
static GstTracer *
leaks_tracer ()
{
  GstTracer *found = nullptr;
  GList *tracers = gst_tracing_get_active_tracers ();
  for (GList *l = tracers; l; l = l->next)
    if (!found && g_str_equal (G_OBJECT_TYPE_NAME (l->data), "GstLeaksTracer"))
      found = GST_TRACER (gst_object_ref (l->data));
  g_list_free_full (tracers, gst_object_unref);
  fail_unless (found != nullptr, "GStreamer's leaks tracer is not active "
      "(GST_TRACERS=leaks, from the coretracers plugin): the soak cannot count "
      "objects");
  return found;
}

/* Counts the GStreamer objects made and freed from start () on, with the
 * leaks tracer's activity tracking. Its checkpoints empty its record of the
 * objects made and freed, which would otherwise grow with every frame:
 * update () takes one (every few hundred frames or cycles), left () the
 * last. (GStreamer 1.22's list of live objects, the other way to count,
 * unrefs objects it holds no reference to.) */
class ObjectCount {
 public:
  ObjectCount () : tracer_ (leaks_tracer ()) {}
  ~ObjectCount () {
    g_signal_emit_by_name (tracer_, "activity-stop-tracking");
    gst_object_unref (tracer_);
  }
  /* Starts anew. (GStreamer 1.22's tracer never releases its lock when
   * tracking starts twice: stopped first.) */
  void start () {
    g_signal_emit_by_name (tracer_, "activity-stop-tracking");
    g_signal_emit_by_name (tracer_, "activity-start-tracking");
    left_ = 0;
    started_ = true;
  }
  void update () {
    if (!started_)
      return;
    GstStructure *checkpoint = nullptr;
    g_signal_emit_by_name (tracer_, "activity-get-checkpoint", &checkpoint);
    fail_unless (checkpoint != nullptr);
    left_ += int (gst_value_list_get_size (gst_structure_get_value
            (checkpoint, "objects-created-list")));
    left_ -= int (gst_value_list_get_size (gst_structure_get_value
            (checkpoint, "objects-removed-list")));
    gst_structure_free (checkpoint);
  }
  /* Objects made since start () and not freed. */
  int left () {
    update ();
    return left_;
  }
 private:
  GstTracer *tracer_;
  int left_ = 0;
  bool started_ = false;
};

/* Objects a loop may leave behind however long it runs (a pool grown by a
 * buffer, a context cached): a leak of one per frame or cycle is hundreds. */
static const int kAllowedObjects = 16;

/* NULL -> PLAYING -> NULL with a frame each time, 1000 times: every run ends
 * in EOS and memory does not grow. On the GPU the pipeline shares one CUDA
 * context, as applications do. */
GST_START_TEST (test_state_cycles_do_not_grow)
{
  /* Under the memory checkers 40 cycles: a leak of one object a cycle is
   * still twice kAllowedObjects. */
  const int cycles = long_run ()? 1000 : quick ()? 40 : 200;
  ObjectCount objects;
  for (const ElementCase & e : kElements) {
    const std::string launch = "videotestsrc num-buffers=2 pattern=ball ! "
        "video/x-raw,format=NV12,width=96,height=64 ! " + launch_of (e) +
        " ! fakesink";
    GstElement *pipeline = gst_parse_launch (launch.c_str (), NULL);
    fail_unless (pipeline != NULL);
#ifdef HAVE_GST_CUDA
    GstCudaContext *ctx = TEST_GPU ? gst_cuda_context_new (0) : nullptr;
    if (ctx) {
      share_cuda_context (pipeline, ctx);
    }
#endif
    GstBus *bus = gst_element_get_bus (pipeline);
    size_t early = 0;
    size_t early_free = 0, late_free = 0, total = 0;
    /* The test's own CUDA runtime (cudaMemGetInfo below) creates a primary
     * context on first use, tens of MB of host memory: start it before the
     * first measurement so that it is not counted as growth. */
    if (TEST_GPU)
      fail_unless_equals_int (cudaFree (nullptr), 0);
    for (int i = 0; i < cycles; ++i) {
      fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
          GST_STATE_CHANGE_FAILURE);
      GstMessage *m = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
          (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
      fail_unless (m != NULL, "%s: cycle %d did not end", e.factory, i);
      fail_unless (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS,
          "%s: cycle %d ended in an error", e.factory, i);
      gst_message_unref (m);
      fail_unless (gst_element_set_state (pipeline, GST_STATE_NULL) ==
          GST_STATE_CHANGE_SUCCESS);
      if (i % 20 == 0)
        objects.update ();
      if (i == cycles / 10) {
        objects.start ();
        early = resident_bytes ();
        if (TEST_GPU)
          fail_unless_equals_int (cudaMemGetInfo (&early_free, &total), 0);
      }
    }
    const int left = objects.left ();
    fail_unless (left <= kAllowedObjects, "%s: %d GStreamer objects left over "
        "from %d state cycles", e.factory, left, cycles - cycles / 10 - 1);
    if (long_run ()) {
      const size_t late = resident_bytes ();
      fail_unless (late < early + kAllowedGrowth, "%s: resident memory grew "
          "from %zu to %zu bytes over %d state cycles", e.factory, early, late,
          cycles);
    }
    if (TEST_GPU && long_run ()) {
      fail_unless_equals_int (cudaMemGetInfo (&late_free, &total), 0);
      fail_unless (late_free + kAllowedGrowth > early_free, "%s: free device "
          "memory fell from %zu to %zu", e.factory, early_free, late_free);
    }
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (pipeline);
    release_bus (bus);
#ifdef HAVE_GST_CUDA
    if (ctx)
      gst_object_unref (ctx);
#endif
  }
}
GST_END_TEST;

/* 100k frames through one instance: outputs stay right (checked every
 * 1000th frame) and memory stays flat. */
GST_START_TEST (test_soak_keeps_memory_flat)
{
  /* Under the memory checkers 400 frames, each 100th checked. */
  const int frames = long_run ()? 100000 : quick ()? 400 : 10000;
  const int check_every = quick ()? 100 : 1000;
  const int w = 48, h = 32;
  std::mt19937 rng (28);
  for (const ElementCase & e : kElements) {
    std::vector < Image > inputs;
    for (int i = 0; i < 4; ++i)
      inputs.push_back (random_image (rng, w, h, 10 * i, 100 + 40 * i));
    BusHarness c (launch_of (e));
    gst_harness_set_src_caps_str (c.h, gray_caps (w, h).c_str ());
    ObjectCount objects;
    size_t early = 0;
    for (int i = 0; i < frames; ++i) {
      const Image & in = inputs[i % inputs.size ()];
      if (i % check_every == 0) {
        assert_luma_filtered (e, push_pull (c.h, in), in, "during the soak");
      } else {
        GstBuffer *out = gst_harness_push_and_pull (c.h, buffer_from_image (in));
        fail_unless (out != NULL, "%s: no output for frame %d", e.factory, i);
        gst_buffer_unref (out);
      }
      if (i % 500 == 0)
        objects.update ();
      if (i == frames / 10) {
        objects.start ();
        early = resident_bytes ();
      }
    }
    const int left = objects.left ();
    fail_unless (left <= kAllowedObjects, "%s: %d GStreamer objects left over "
        "from %d frames", e.factory, left, frames - frames / 10 - 1);
    const size_t late = resident_bytes ();
    fail_unless (!long_run () || late < early + kAllowedGrowth, "%s: resident "
        "memory grew from %zu to %zu bytes over %d frames", e.factory, early,
        late, frames);
    fail_unless_equals_int (c.count (GST_MESSAGE_ERROR), 0);
  }
}
GST_END_TEST;

static Suite *
soak_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("soak"));
  TCase *load = tcase_create ("load");
  tcase_set_timeout (load, 1200);
  suite_add_tcase (s, load);
  tcase_add_test (load, test_state_cycles_do_not_grow);
  tcase_add_test (load, test_soak_keeps_memory_flat);
  return s;
}

int
main (int argc, char **argv)
{
  /* Counts objects (ObjectCount); a tracer list given by the caller stays. */
  g_setenv ("GST_TRACERS", "leaks", FALSE);
  return run_suite (argc, argv, soak_suite, TEST_SUITE_NAME ("soak"));
}
