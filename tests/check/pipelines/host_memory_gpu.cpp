/* System memory that comes back (gstcudafiltershostmemory.h): a source that
 * cycles a pool of buffers has them page-locked where they lie from their
 * second frame on, memory seen once stays pageable, a registration ends
 * with the memory that owns the bytes, and no more than the cap stays
 * registered. Every output is compared with the CPU backend's, pixel for
 * pixel. Exits 77 (skipped) where no GPU is usable.
 *
 * The registry serves the whole process: this binary runs with a cap of
 * kCapFrames frames (CUDAFILTERS_HOST_REGISTRY_BYTES, set in main). */
#include "test_common.h"

#include <cuda_runtime.h>

#include <set>
#include <vector>

using namespace test;

namespace {

/* Large enough that malloc maps each frame on pages of its own. */
constexpr int kWidth = 640, kHeight = 480;
constexpr int kFrameBytes = kWidth * kHeight;
constexpr int kCapFrames = 3;

/* Whether @p lies in page-locked (registered) host memory. */
bool
page_locked (const void *p)
{
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes (&attr, p) != cudaSuccess) {
    (void) cudaGetLastError ();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

const guint8 *
data_of (GstBuffer * buf)
{
  GstMapInfo map;
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  const guint8 *data = map.data;
  gst_buffer_unmap (buf, &map);
  return data;
}

GstVideoInfo
gray_info ()
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, kWidth, kHeight);
  return info;
}

std::string
gray_caps ()
{
  return video_caps (GST_VIDEO_FORMAT_GRAY8, kWidth, kHeight);
}

/* A harness of @launch for GRAY8 frames in system memory. */
GstHarness *
gray_harness (const std::string & launch)
{
  GstHarness *h = new_harness (launch);
  gst_harness_set_src_caps_str (h, gray_caps ().c_str ());
  gst_harness_set_sink_caps_str (h, gray_caps ().c_str ());
  return h;
}

/* What the CPU backend makes of @img. */
Image
cpu_reference (const char *factory_and_props, const Image & img)
{
  std::mt19937 rng (1);
  const PlanarFrame in = frame_with_luma (rng, GST_VIDEO_FORMAT_GRAY8, img);
  return push_pull_frame ((std::string (factory_and_props) + " backend=cpu")
      .c_str (), in).planes[0];
}

/* A pool of @n GRAY8 buffers in system memory, as a source cycles them. */
GstBufferPool *
system_pool (guint n)
{
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstCaps *caps = gst_caps_from_string (gray_caps ().c_str ());
  gst_buffer_pool_config_set_params (config, caps, kFrameBytes, n, n);
  gst_caps_unref (caps);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  return pool;
}

GstBuffer *
acquire_with (GstBufferPool * pool, const Image & img)
{
  GstBuffer *buf = NULL;
  fail_unless (gst_buffer_pool_acquire_buffer (pool, &buf, NULL) ==
      GST_FLOW_OK);
  fail_unless (gst_buffer_fill (buf, 0, img.pixels.data (), kFrameBytes) ==
      (gsize) kFrameBytes);
  return buf;
}

/* A frame of @fmt with every plane random. */
PlanarFrame
random_frame (std::mt19937 & rng, GstVideoFormat fmt, int w, int h, int lo,
    int hi)
{
  PlanarFrame f;
  gst_video_info_set_format (&f.info, fmt, w, h);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&f.info); ++p) {
    const Image shape = plane_shape (f.info, p);
    f.planes.push_back (random_image (rng, shape.width, shape.height, lo, hi));
  }
  return f;
}

/* A pool of @n buffers of @info from GStreamer's own video pool (another
 * allocator's memory than the harness's), with video meta and padding on
 * every side: plane strides and offsets are not the default ones. */
GstBufferPool *
padded_video_pool (const GstVideoInfo & info, guint n)
{
  GstBufferPool *pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstCaps *caps = gst_video_info_to_caps (&info);
  gst_buffer_pool_config_set_params (config, caps, info.size, n, n);
  gst_caps_unref (caps);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
  GstVideoAlignment align;
  gst_video_alignment_reset (&align);
  align.padding_top = 2;
  align.padding_bottom = 6;
  align.padding_left = 16;
  align.padding_right = 48;
  gst_buffer_pool_config_set_video_alignment (config, &align);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  return pool;
}

void
assert_frames_equal (const PlanarFrame & got, const PlanarFrame & want,
    const std::string & what)
{
  fail_unless_equals_int ((int) got.planes.size (), (int) want.planes.size ());
  for (size_t p = 0; p < want.planes.size (); ++p)
    assert_images_equal (got.planes[p], want.planes[p],
        (what + ", plane " + std::to_string (p)).c_str ());
}

/* Every memory of @buf lies in page-locked memory. */
bool
all_page_locked (GstBuffer * buf)
{
  bool locked = gst_buffer_n_memory (buf) > 0;
  for (guint i = 0; i < gst_buffer_n_memory (buf); ++i) {
    GstMapInfo map;
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
    locked = locked && page_locked (map.data) &&
        page_locked (map.data + map.size - 1);
    gst_memory_unmap (mem, &map);
  }
  return locked;
}

}  // namespace

/* Frames of every kind of layout, in buffers of GStreamer's video pool with
 * video meta and padding, cycled: page-locked from their second sight, and
 * every output plane bit-identical to the CPU backend's. */
GST_START_TEST (test_formats_with_video_meta)
{
  const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_GRAY8,
    GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_RGBA,
    GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_P010_10LE };
  const char *filters[] = { "cudahisteq", "cudasharpen amount=1.2" };
  /* Three padded frames of any of these fit under the cap (main). */
  constexpr int w = 162, h = 122, n = 3;
  for (const char *filter : filters)
    for (GstVideoFormat fmt : formats) {
      const std::string what = std::string (filter) + ", " +
          gst_video_format_to_string (fmt);
      std::mt19937 rng (8105 + (int) fmt);
      std::vector<PlanarFrame> frames, want;
      for (int i = 0; i < n; ++i) {
        frames.push_back (random_frame (rng, fmt, w, h, 20 * i, 200 + 20 * i));
        want.push_back (push_pull_frame ((std::string (filter) +
                    " backend=cpu").c_str (), frames.back ()));
      }
      GstHarness *hn = new_harness (std::string (filter) + " backend=cuda");
      gst_harness_set_src_caps_str (hn, video_caps (fmt, w, h).c_str ());
      GstBufferPool *pool = padded_video_pool (frames[0].info, n);
      for (int round = 0; round < 3; ++round)
        for (int i = 0; i < n; ++i) {
          GstBuffer *in = NULL;
          fail_unless (gst_buffer_pool_acquire_buffer (pool, &in, NULL) ==
              GST_FLOW_OK);
          fail_unless (gst_buffer_get_video_meta (in) != NULL);
          write_frame (in, frames[i]);
          gst_buffer_ref (in);
          GstBuffer *out = gst_harness_push_and_pull (hn, in);
          fail_unless (out != NULL);
          assert_frames_equal (frame_from_buffer (out, frames[i].info),
              want[i], what);
          gst_buffer_unref (out);
          if (round > 0)
            fail_unless (all_page_locked (in), "%s: memory seen %d times is "
                "not page-locked", what.c_str (), round + 1);
          gst_buffer_unref (in);
        }
      gst_harness_teardown (hn);
      gst_buffer_pool_set_active (pool, FALSE);
      gst_object_unref (pool);
    }
}
GST_END_TEST;

/* A frame with planes to carry, in a buffer no one else holds (a source's
 * pool buffer pushed on), is filtered in place once its memory is
 * page-locked (its second sight): the buffer that leaves is the one that
 * came, its luma filtered as the CPU backend does and its other planes as
 * they were, and its metas those an output buffer would get (a crop meta,
 * which GstBaseTransform does not copy, goes either way). At its first
 * sight (pageable), or in a buffer someone else holds, or whose memory
 * another buffer shares, a frame is filtered into a buffer of the
 * element's, and its own is left as it was. So is a padded frame where
 * downstream does not read video meta. Gray frames, with nothing to
 * carry, are not filtered in place. */
GST_START_TEST (test_writable_frames_filtered_in_place)
{
  const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_NV12,
    GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_GRAY8 };
  const char *filters[] = { "cudahisteq", "cudasharpen amount=1.2",
    "cudaclahe" };
  constexpr int w = 162, h = 122, n = 3;
  for (int meta_downstream = 1; meta_downstream >= 0; --meta_downstream)
    for (const char *filter : filters)
      for (GstVideoFormat fmt : formats) {
        const std::string what = std::string (filter) + ", " +
            gst_video_format_to_string (fmt) + (meta_downstream ?
            ", downstream reads video meta" : ", downstream without video meta");
        const bool carries = fmt != GST_VIDEO_FORMAT_GRAY8;
        std::mt19937 rng (977 + (int) fmt);
        std::vector<PlanarFrame> frames, want;
        for (int i = 0; i < n; ++i) {
          frames.push_back (random_frame (rng, fmt, w, h, 10 + 20 * i,
                  180 + 20 * i));
          want.push_back (push_pull_frame ((std::string (filter) +
                      " backend=cpu").c_str (), frames.back ()));
        }
        GstHarness *hn = new_harness (std::string (filter) + " backend=cuda");
        if (meta_downstream)
          gst_harness_add_propose_allocation_meta (hn, GST_VIDEO_META_API_TYPE,
              NULL);
        gst_harness_set_src_caps_str (hn, video_caps (fmt, w, h).c_str ());
        GstBufferPool *pool = padded_video_pool (frames[0].info, n);
        /* Rounds 0 (first sight), 1 and 3: writable buffers; 2: one held
         * by the test too; 4: one whose memory a copy shares (last: the
         * pool drops a buffer that comes back with its memory shared). */
        for (int round = 0; round < 5; ++round)
          for (int i = 0; i < n; ++i) {
            GstBuffer *in = NULL;
            fail_unless (gst_buffer_pool_acquire_buffer (pool, &in, NULL) ==
                GST_FLOW_OK);
            write_frame (in, frames[i]);
            GstVideoCropMeta *crop = gst_buffer_add_video_crop_meta (in);
            crop->x = 2;
            crop->width = 100;
            GstBuffer *held = NULL;
            if (round == 2)
              held = gst_buffer_ref (in);
            else if (round == 4)
              held = gst_buffer_copy (in);
            const GstBuffer *sent = in;
            GstBuffer *out = gst_harness_push_and_pull (hn, in);
            fail_unless (out != NULL);
            const std::string at = what + ", round " + std::to_string (round);
            assert_frames_equal (frame_from_buffer (out, frames[i].info),
                want[i], at);
            const bool in_place = carries && meta_downstream &&
                (round == 1 || round == 3);
            fail_unless (out == sent ? in_place : !in_place, "%s: %s",
                at.c_str (), in_place ? "not filtered in place" :
                "filtered in place");
            if (in_place)
              fail_unless (all_page_locked (out), "%s: memory seen twice is "
                  "not page-locked", at.c_str ());
            fail_unless (gst_buffer_get_video_crop_meta (out) == NULL,
                "%s: the crop meta left with the frame", at.c_str ());
            if (held) {
              /* The source's frame is untouched. */
              assert_frames_equal (frame_from_buffer (held, frames[i].info),
                  frames[i], at + ", the frame held");
              gst_buffer_unref (held);
            }
            gst_buffer_unref (out);
          }
        gst_harness_teardown (hn);
        gst_buffer_pool_set_active (pool, FALSE);
        gst_object_unref (pool);
      }
}
GST_END_TEST;

/* cudanlm with a temporal window (frames held across pushes) on buffers
 * cycled from a pool: page-locked from their second sight, and the output
 * the same as for the same frames in fresh memory each time (staged). */
GST_START_TEST (test_temporal_window_on_recurring_memory)
{
  constexpr int w = 320, h = 240, n = 3, total = 9;
  const std::string launch = "cudanlm temporal-radius=1 backend=cuda";
  std::mt19937 rng (8106);
  std::vector<PlanarFrame> frames;
  for (int i = 0; i < total; ++i)
    frames.push_back (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
            random_image (rng, w, h)));
  auto run = [&] (bool recurring) {
    GstHarness *hn = new_harness (launch);
    gst_harness_set_src_caps_str (hn,
        video_caps (GST_VIDEO_FORMAT_NV12, w, h).c_str ());
    GstBufferPool *pool = padded_video_pool (frames[0].info, n);
    for (int i = 0; i < total; ++i) {
      GstBuffer *in = NULL;
      if (recurring)
        fail_unless (gst_buffer_pool_acquire_buffer (pool, &in, NULL) ==
            GST_FLOW_OK);
      else
        in = gst_buffer_new_allocate (NULL, frames[i].info.size, NULL);
      write_frame (in, frames[i]);
      GST_BUFFER_PTS (in) = i * GST_SECOND / 30;
      gst_buffer_ref (in);
      fail_unless_equals_int (gst_harness_push (hn, in), GST_FLOW_OK);
      if (recurring && i >= n)
        fail_unless (all_page_locked (in), "memory seen twice is not "
            "page-locked");
      gst_buffer_unref (in);
    }
    fail_unless (gst_harness_push_event (hn, gst_event_new_eos ()));
    std::vector<PlanarFrame> outs;
    for (int i = 0; i < total; ++i) {
      GstBuffer *out = gst_harness_pull (hn);
      fail_unless (out != NULL);
      outs.push_back (frame_from_buffer (out, frames[0].info));
      gst_buffer_unref (out);
    }
    gst_harness_teardown (hn);
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
    return outs;
  };
  const std::vector<PlanarFrame> staged = run (false);
  const std::vector<PlanarFrame> pinned = run (true);
  for (int i = 0; i < total; ++i)
    assert_frames_equal (pinned[i], staged[i],
        "frame " + std::to_string (i));
}
GST_END_TEST;

struct Arena
{
  std::vector<guint8> bytes;
  bool freed = false;
  bool locked_when_freed = false;
};

static void
arena_free (gpointer p)
{
  Arena *a = static_cast<Arena *> (p);
  a->freed = true;
  a->locked_when_freed = page_locked (a->bytes.data ());
}

/* Memory freed, and a new one made at the same address: it starts unseen
 * (not page-locked at its first frame), and its frames are right. */
GST_START_TEST (test_reused_address_starts_unseen)
{
  std::mt19937 rng (8107);
  Arena a;
  a.bytes.resize (kFrameBytes);
  GstHarness *h = gray_harness ("cudahisteq backend=cuda");
  for (int life = 0; life < 2; ++life) {
    const Image img = random_image (rng, kWidth, kHeight, 30 * life, 255);
    const Image want = cpu_reference ("cudahisteq", img);
    memcpy (a.bytes.data (), img.pixels.data (), kFrameBytes);
    a.freed = false;
    GstBuffer *in = gst_buffer_new_wrapped_full ((GstMemoryFlags) 0,
        a.bytes.data (), kFrameBytes, 0, kFrameBytes, &a, arena_free);
    fail_if (page_locked (a.bytes.data ()), "life %d: a stale registration "
        "outlived the memory", life);
    for (int i = 0; i < 3; ++i) {
      GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
      fail_unless (out != NULL);
      assert_images_equal (frame_from_buffer (out, gray_info ()).planes[0],
          want, "reused address");
      gst_buffer_unref (out);
      fail_unless (page_locked (a.bytes.data ()) == (i > 0), "life %d, "
          "sight %d: page-locked %d", life, i + 1,
          (int) page_locked (a.bytes.data ()));
    }
    gst_buffer_unref (in);
    fail_unless (a.freed);
    fail_if (a.locked_when_freed, "the bytes were freed while registered");
  }
  gst_harness_teardown (h);
}
GST_END_TEST;


/* Three buffers cycled for four rounds: pageable in the first, page-locked
 * from the second on, and every output right. */
GST_START_TEST (test_recurring_memory_is_registered)
{
  const char *filters[] = { "cudahisteq", "cudasharpen amount=1.5" };
  for (const char *filter : filters) {
    std::mt19937 rng (8101);
    std::vector<Image> frames;
    std::vector<Image> want;
    for (int i = 0; i < 3; ++i) {
      frames.push_back (random_image (rng, kWidth, kHeight, 10 + 20 * i, 240));
      want.push_back (cpu_reference (filter, frames.back ()));
    }
    GstHarness *h = gray_harness (std::string (filter) + " backend=cuda");
    GstBufferPool *pool = system_pool (3);
    for (int round = 0; round < 4; ++round) {
      std::set<const guint8 *> seen;
      for (int i = 0; i < 3; ++i) {
        GstBuffer *in = acquire_with (pool, frames[i]);
        const guint8 *data = data_of (in);
        seen.insert (data);
        GstBuffer *out = gst_harness_push_and_pull (h, in);
        fail_unless (out != NULL);
        assert_images_equal (frame_from_buffer (out,
                gray_info ()).planes[0],
            want[i], filter);
        gst_buffer_unref (out);
        /* The frame is back in the pool: its memory is the pool's. */
        if (round == 0)
          fail_if (page_locked (data), "%s: memory seen once was "
              "registered", filter);
        else
          fail_unless (page_locked (data), "%s: memory seen %d times is "
              "still pageable", filter, round + 1);
      }
      fail_unless_equals_int ((int) seen.size (), 3);
    }
    gst_harness_teardown (h);
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
}
GST_END_TEST;

/* Memory given once per frame (a source that allocates every frame) is
 * never registered. */
GST_START_TEST (test_memory_seen_once_stays_pageable)
{
  std::mt19937 rng (8102);
  GstHarness *h = gray_harness ("cudahisteq backend=cuda");
  for (int i = 0; i < 6; ++i) {
    const Image img = random_image (rng, kWidth, kHeight);
    GstBuffer *in = buffer_from_frame (frame_with_luma (rng,
            GST_VIDEO_FORMAT_GRAY8, img));
    gst_buffer_ref (in);
    GstBuffer *out = gst_harness_push_and_pull (h, in);
    fail_unless (out != NULL);
    fail_if (page_locked (data_of (in)), "memory seen once was registered");
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

struct WrappedBytes
{
  guint8 *data;
  bool locked_when_freed;
  bool freed;
};

static void
free_wrapped (gpointer p)
{
  WrappedBytes *w = static_cast<WrappedBytes *> (p);
  /* The registry's destroy notify runs before the memory's own. */
  w->locked_when_freed = page_locked (w->data);
  g_free (w->data);
  w->freed = true;
}

/* A registration ends with the memory that owns the bytes, before the
 * bytes are freed. */
GST_START_TEST (test_registration_ends_with_memory)
{
  std::mt19937 rng (8103);
  const Image img = random_image (rng, kWidth, kHeight);
  const Image want = cpu_reference ("cudahisteq", img);
  WrappedBytes w{static_cast<guint8 *> (g_malloc (kFrameBytes)), true, false};
  memcpy (w.data, img.pixels.data (), kFrameBytes);
  GstBuffer *in = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY,
      w.data, kFrameBytes, 0, kFrameBytes, &w, free_wrapped);
  GstHarness *h = gray_harness ("cudahisteq backend=cuda");
  for (int i = 0; i < 3; ++i) {
    GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    fail_unless (out != NULL);
    assert_images_equal (frame_from_buffer (out,
            gray_info ()).planes[0], want,
        "wrapped memory");
    gst_buffer_unref (out);
  }
  fail_unless (page_locked (w.data), "wrapped memory seen three times is "
      "still pageable");
  gst_harness_teardown (h);
  gst_buffer_unref (in);
  fail_unless (w.freed);
  fail_if (w.locked_when_freed, "the bytes were freed while registered");
}
GST_END_TEST;

/* More buffers than the cap holds, cycled: never more than the cap
 * registered, the least recently used released first, outputs right. */
GST_START_TEST (test_registrations_are_capped)
{
  std::mt19937 rng (8104);
  const int n = kCapFrames + 2;
  std::vector<Image> frames;
  std::vector<Image> want;
  for (int i = 0; i < n; ++i) {
    frames.push_back (random_image (rng, kWidth, kHeight, 5 * i, 250));
    want.push_back (cpu_reference ("cudahisteq", frames.back ()));
  }
  GstHarness *h = gray_harness ("cudahisteq backend=cuda");
  GstBufferPool *pool = system_pool (n);
  std::set<const guint8 *> all;
  int most = 0;
  for (int round = 0; round < 4; ++round)
    for (int i = 0; i < n; ++i) {
      GstBuffer *in = acquire_with (pool, frames[i]);
      all.insert (data_of (in));
      GstBuffer *out = gst_harness_push_and_pull (h, in);
      fail_unless (out != NULL);
      assert_images_equal (frame_from_buffer (out,
              gray_info ()).planes[0], want[i],
          "capped");
      gst_buffer_unref (out);
      int locked = 0;
      for (const guint8 *d : all)
        locked += page_locked (d) ? 1 : 0;
      fail_unless (locked <= kCapFrames, "%d frames registered, cap %d",
          locked, kCapFrames);
      most = std::max (most, locked);
    }
  fail_unless_equals_int ((int) all.size (), n);
  fail_unless_equals_int (most, kCapFrames);
  gst_harness_teardown (h);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
}
GST_END_TEST;

/* Another element's allocator: plain host memory of a type of its own,
 * whose mapping the plugin cannot know to be stable. */
struct ForeignMemory
{
  GstMemory mem;
  guint8 *data;
};
struct ForeignAllocator
{
  GstAllocator parent;
};
struct ForeignAllocatorClass
{
  GstAllocatorClass parent_class;
};
G_DEFINE_TYPE (ForeignAllocator, foreign_allocator, GST_TYPE_ALLOCATOR);

static GstMemory *
foreign_alloc (GstAllocator * allocator, gsize size, GstAllocationParams *)
{
  ForeignMemory *m = g_new0 (ForeignMemory, 1);
  m->data = static_cast<guint8 *> (g_malloc (size));
  gst_memory_init (GST_MEMORY_CAST (m), (GstMemoryFlags) 0, allocator, NULL,
      size, 0, 0, size);
  return GST_MEMORY_CAST (m);
}

static void
foreign_free (GstAllocator *, GstMemory * mem)
{
  ForeignMemory *m = reinterpret_cast<ForeignMemory *> (mem);
  g_free (m->data);
  g_free (m);
}

static gpointer
foreign_map (GstMemory * mem, gsize, GstMapFlags)
{
  return reinterpret_cast<ForeignMemory *> (mem)->data;
}

static void
foreign_unmap (GstMemory *)
{
}

static void
foreign_allocator_class_init (ForeignAllocatorClass * klass)
{
  GstAllocatorClass *a = GST_ALLOCATOR_CLASS (klass);
  a->alloc = foreign_alloc;
  a->free = foreign_free;
}

static void
foreign_allocator_init (ForeignAllocator * self)
{
  GstAllocator *a = GST_ALLOCATOR_CAST (self);
  a->mem_type = "ForeignTestMemory";
  a->mem_map = foreign_map;
  a->mem_unmap = foreign_unmap;
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

/* Frames in another allocator's memory, cycled: right every time, and
 * staged (never registered: its mapping is not known to last). */
GST_START_TEST (test_other_allocators_memory_is_staged)
{
  std::mt19937 rng (8108);
  GstAllocator *allocator =
      GST_ALLOCATOR (g_object_new (foreign_allocator_get_type (), NULL));
  std::vector<Image> frames, want;
  std::vector<GstBuffer *> bufs;
  for (int i = 0; i < 3; ++i) {
    frames.push_back (random_image (rng, kWidth, kHeight, 10 * i, 250));
    want.push_back (cpu_reference ("cudasharpen", frames.back ()));
    GstBuffer *b = gst_buffer_new ();
    gst_buffer_append_memory (b, gst_allocator_alloc (allocator, kFrameBytes,
            NULL));
    fail_unless (gst_buffer_fill (b, 0, frames.back ().pixels.data (),
            kFrameBytes) == (gsize) kFrameBytes);
    bufs.push_back (b);
  }
  GstHarness *h = gray_harness ("cudasharpen backend=cuda");
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 3; ++i) {
      GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (bufs[i]));
      fail_unless (out != NULL);
      assert_images_equal (frame_from_buffer (out, gray_info ()).planes[0],
          want[i], "another allocator's memory");
      gst_buffer_unref (out);
      fail_if (page_locked (data_of (bufs[i])), "another allocator's memory "
          "was registered");
    }
  gst_harness_teardown (h);
  for (GstBuffer *b : bufs)
    gst_buffer_unref (b);
  gst_object_unref (allocator);
}
GST_END_TEST;

static Suite *
host_memory_gpu_suite (void)
{
  Suite *s = suite_create ("host-memory-gpu");
  TCase *tc = tcase_create ("gpu");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_recurring_memory_is_registered);
  tcase_add_test (tc, test_memory_seen_once_stays_pageable);
  tcase_add_test (tc, test_registration_ends_with_memory);
  tcase_add_test (tc, test_registrations_are_capped);
  tcase_add_test (tc, test_formats_with_video_meta);
  tcase_add_test (tc, test_writable_frames_filtered_in_place);
  tcase_add_test (tc, test_temporal_window_on_recurring_memory);
  tcase_add_test (tc, test_reused_address_starts_unseen);
  tcase_add_test (tc, test_other_allocators_memory_is_staged);
  return s;
}

int
main (int argc, char **argv)
{
  /* Read once, when the registry first serves a frame. */
  g_setenv ("CUDAFILTERS_HOST_REGISTRY_BYTES",
      std::to_string (kCapFrames * 2 * 4096 + kCapFrames * kFrameBytes)
      .c_str (), TRUE);
  return test::run_gpu_suite (argc, argv, host_memory_gpu_suite,
      "host-memory-gpu");
}
