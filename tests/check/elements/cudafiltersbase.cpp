/* What the base class (GstCudaFiltersBase) gives every element, checked on
 * all four alike: bad input (short buffers, video metas), tiny frames,
 * caps refused, changes mid-stream, the shared properties, the history's
 * restarts (DISCONT, new segments, flushes and seeks, new caps), the
 * statistics messages, the GPU's presence and absence, and on the GPU
 * running out of device memory and device faults. Built twice from this
 * file: `cudafiltersbase` runs every case on the CPU backend (everywhere, CI
 * included); `cudafiltersbase-gpu` runs them on the CUDA backend, adds
 * frames in CUDA memory and the GPU faults, and exits 77 (skipped) without
 * a GPU. Load (parallel instances, state cycles, soak):
 * pipelines/concurrent.cpp and pipelines/soak.cpp. */
#include "elements.h"
#include "smoothing.h"

#include "noise_estimate.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include <cuda_runtime.h>

#include <array>
#include <memory>

using namespace test;

/* ---------------------------------------------------------------- input */

/* A buffer smaller than its caps say is an error on the bus, never a read
 * past its end: one byte short, a row of the first plane short, and half
 * the frame (as many bytes as a GRAY8 frame under GRAY16_LE caps). */
GST_START_TEST (test_short_buffers_are_errors)
{
  const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_GRAY8,
    GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_Y444,
    GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_P010_10LE,
    GST_VIDEO_FORMAT_Y444_16LE
  };
  for (const ElementCase & e : kElements)
    for (GstVideoFormat fmt : formats) {
      GstVideoInfo info;
      gst_video_info_set_format (&info, fmt, 64, 48);
      const gsize full = GST_VIDEO_INFO_SIZE (&info);
      for (gsize size : {full - 1, full - GST_VIDEO_INFO_PLANE_STRIDE (&info, 0),
              full / 2}) {
        BusHarness c (launch_of (e));
        gst_harness_set_src_caps_str (c.h, video_caps (fmt, 64, 48).c_str ());
        GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
        gst_buffer_memset (buf, 0, 7, size);
        fail_unless_equals_int (gst_harness_push (c.h, buf), GST_FLOW_ERROR);
        fail_unless_equals_int (c.count (GST_MESSAGE_ERROR), 1);
      }
    }
}
GST_END_TEST;

/* Upstream may lay planes out as it likes and say so in a GstVideoMeta:
 * odd strides, unaligned plane starts, gaps between planes. The output must
 * equal that of the same frame in the default layout. */
static GstBuffer *
buffer_with_odd_layout (const PlanarFrame & f)
{
  const guint n = GST_VIDEO_INFO_N_PLANES (&f.info);
  gsize offsets[GST_VIDEO_MAX_PLANES] = { 0 };
  gint strides[GST_VIDEO_MAX_PLANES] = { 0 };
  gsize at = 5;                 /* the first plane starts unaligned */
  for (guint p = 0; p < n; ++p) {
    offsets[p] = at;
    strides[p] = f.planes[p].width + 37 + 2 * p;
    at += gsize (strides[p]) * f.planes[p].height + 11;
  }
  GstBuffer *buf = gst_buffer_new_allocate (NULL, at, NULL);
  GstMapInfo map;
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  memset (map.data, 0xEE, map.size);
  for (guint p = 0; p < n; ++p)
    for (int y = 0; y < f.planes[p].height; ++y)
      memcpy (map.data + offsets[p] + gsize (y) * strides[p],
          &f.planes[p].pixels[gsize (y) * f.planes[p].width],
          f.planes[p].width);
  gst_buffer_unmap (buf, &map);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_INFO_FORMAT (&f.info), GST_VIDEO_INFO_WIDTH (&f.info),
      GST_VIDEO_INFO_HEIGHT (&f.info), n, offsets, strides);
  return buf;
}

GST_START_TEST (test_video_meta_strides_and_offsets)
{
  std::mt19937 rng (21);
  const int sizes[][2] = { {33, 17}, {64, 48} };
  for (const ElementCase & e : kElements)
    for (GstVideoFormat fmt : kFormats)
      for (const auto & sz : sizes) {
        PlanarFrame in = frame_with_luma (rng, fmt,
            random_image (rng, sz[0], sz[1], 30, 160));
        GstHarness *h = new_harness (launch_of (e));
        gst_harness_set_src_caps_str (h, video_caps (fmt, sz[0],
                sz[1]).c_str ());
        GstBuffer *out = gst_harness_push_and_pull (h,
            buffer_with_odd_layout (in));
        fail_unless (out != NULL);
        PlanarFrame got = frame_from_buffer (out, in.info);
        gst_buffer_unref (out);
        gst_harness_teardown (h);

        const std::string what = std::string (e.factory) + " " +
            gst_video_format_to_string (fmt) + " with a video meta";
        assert_luma_filtered (e, got.planes[0], in.planes[0], what.c_str ());
        assert_chroma_carried (got, in);
      }
}
GST_END_TEST;

/* A video meta that describes more than its buffer holds, or other frames
 * than the caps, is a stream error naming the plane, never a read past the
 * end of the memory (nor a GLib critical from gst_video_frame_map). */
enum class BadMeta { kStrideTooLong, kLastPlaneTooLate, kNegativeStride,
  kStrideShorterThanRow, kOtherFormat, kSmallerThanCaps };

static GstBuffer *
buffer_with_bad_meta (GstVideoFormat fmt, int w, int h, BadMeta bad)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, fmt, w, h);
  const gsize size = GST_VIDEO_INFO_SIZE (&info);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_memset (buf, 0, 90, size);
  gsize offsets[GST_VIDEO_MAX_PLANES];
  gint strides[GST_VIDEO_MAX_PLANES];
  const guint n = GST_VIDEO_INFO_N_PLANES (&info);
  for (guint p = 0; p < n; ++p) {
    offsets[p] = GST_VIDEO_INFO_PLANE_OFFSET (&info, p);
    strides[p] = GST_VIDEO_INFO_PLANE_STRIDE (&info, p);
  }
  GstVideoFormat meta_format = fmt;
  int meta_w = w, meta_h = h;
  switch (bad) {
    case BadMeta::kStrideTooLong:
      strides[0] *= 4;
      break;
    case BadMeta::kLastPlaneTooLate:
      offsets[n - 1] = size - strides[n - 1];
      break;
    case BadMeta::kNegativeStride:
      strides[0] = -strides[0];
      break;
    case BadMeta::kStrideShorterThanRow:
      strides[0] = 1;
      break;
    case BadMeta::kOtherFormat:
      meta_format = fmt == GST_VIDEO_FORMAT_GRAY8 ? GST_VIDEO_FORMAT_GRAY16_LE :
          GST_VIDEO_FORMAT_GRAY8;
      break;
    case BadMeta::kSmallerThanCaps:
      meta_w = w / 2;
      meta_h = h / 2;
      break;
  }
  GstVideoMeta *meta = gst_buffer_add_video_meta_full (buf,
      GST_VIDEO_FRAME_FLAG_NONE, meta_format, meta_w, meta_h, n, offsets,
      strides);
  /* Another format may have another number of planes. */
  meta->n_planes = n;
  return buf;
}

GST_START_TEST (test_video_meta_larger_than_buffer_is_an_error)
{
  const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_GRAY8,
    GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_P010_10LE
  };
  const BadMeta cases[] = { BadMeta::kStrideTooLong,
    BadMeta::kLastPlaneTooLate, BadMeta::kNegativeStride,
    BadMeta::kStrideShorterThanRow, BadMeta::kOtherFormat,
    BadMeta::kSmallerThanCaps
  };
  for (const ElementCase & e : kElements)
    for (GstVideoFormat fmt : formats)
      for (BadMeta bad : cases) {
        BusHarness c (launch_of (e));
        gst_harness_set_src_caps_str (c.h, video_caps (fmt, 64, 48).c_str ());
        const GstFlowReturn ret = gst_harness_push (c.h,
            buffer_with_bad_meta (fmt, 64, 48, bad));
        const std::string error = c.first_error ();
        fail_unless_equals_int (ret, GST_FLOW_ERROR);
        fail_unless (error.find ("does not hold") != std::string::npos,
            "%s %s meta case %d: %s", e.factory,
            gst_video_format_to_string (fmt), (int) bad, error.c_str ());
        fail_unless_equals_int (gst_harness_buffers_received (c.h), 0);
      }
}
GST_END_TEST;

/* A video meta whose last plane starts past the end of the buffer: the
 * error names the plane and how many bytes the buffer lacks. */
GST_START_TEST (test_video_meta_plane_past_the_buffer_is_named)
{
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12,
          GST_VIDEO_FORMAT_I420}) {
    GstVideoInfo info;
    gst_video_info_set_format (&info, fmt, 64, 48);
    const gsize size = GST_VIDEO_INFO_SIZE (&info);
    const guint last = GST_VIDEO_INFO_N_PLANES (&info) - 1;
    GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
    gsize offsets[GST_VIDEO_MAX_PLANES];
    gint strides[GST_VIDEO_MAX_PLANES];
    for (guint p = 0; p <= last; ++p) {
      offsets[p] = GST_VIDEO_INFO_PLANE_OFFSET (&info, p);
      strides[p] = GST_VIDEO_INFO_PLANE_STRIDE (&info, p);
    }
    offsets[last] = size + 9;
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, fmt, 64,
        48, last + 1, offsets, strides);
    BusHarness c (launch_of (kElements[0]));
    gst_harness_set_src_caps_str (c.h, video_caps (fmt, 64, 48).c_str ());
    fail_unless_equals_int (gst_harness_push (c.h, buf), GST_FLOW_ERROR);
    const std::string error = c.first_error ();
    const std::string want = "plane " + std::to_string (last) + " of its "
        "video meta starts at byte " + std::to_string (size + 9) + ", so the "
        "buffer needs at least " + std::to_string (size + 10) + " bytes but "
        "holds " + std::to_string (size) + " (10 short)";
    fail_unless (error.find (want) != std::string::npos, "%s: %s",
        gst_video_format_to_string (fmt), error.c_str ());
  }
}
GST_END_TEST;

/* A video meta larger than the caps (a decoder's padding rows) is cropped to
 * them: the output is the caps' frame, filtered. */
GST_START_TEST (test_video_meta_with_padding_rows)
{
  std::mt19937 rng (31);
  const int w = 64, h = 48, padded = 64;
  for (const ElementCase & e : kElements) {
    Image img = random_image (rng, w, h, 30, 160);
    GstBuffer *buf = gst_buffer_new_allocate (NULL, gsize (w) * padded, NULL);
    GstMapInfo map;
    fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
    memset (map.data, 255, map.size);
    memcpy (map.data, img.pixels.data (), img.pixels.size ());
    gst_buffer_unmap (buf, &map);
    gst_buffer_add_video_meta (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_FORMAT_GRAY8, w, padded);
    GstHarness *hs = new_harness (launch_of (e));
    gst_harness_set_src_caps_str (hs, gray_caps (w, h).c_str ());
    GstBuffer *out = gst_harness_push_and_pull (hs, buf);
    fail_unless (out != NULL);
    Image got = image_from_buffer (out, w, h);
    gst_buffer_unref (out);
    gst_harness_teardown (hs);
    assert_luma_filtered (e, got, img, "a meta with padding rows");
  }
}
GST_END_TEST;

/* The smallest frames of every format (chroma of 1x1 too). */
GST_START_TEST (test_tiny_frames)
{
  std::mt19937 rng (22);
  const int sizes[][2] = { {1, 1}, {2, 1}, {1, 2}, {3, 3}, {2, 5} };
  for (const ElementCase & e : kElements)
    for (GstVideoFormat fmt : kFormats)
      for (const auto & sz : sizes) {
        PlanarFrame in = frame_with_luma (rng, fmt,
            random_image (rng, sz[0], sz[1]));
        PlanarFrame got = push_pull_frame (launch_of (e).c_str (), in);
        const std::string what = std::string (e.factory) + " " +
            gst_video_format_to_string (fmt) + " tiny";
        assert_luma_filtered (e, got.planes[0], in.planes[0], what.c_str ());
        assert_chroma_carried (got, in);
      }
}
GST_END_TEST;

#if !TEST_GPU
/* Output buffers are the element's own, allocated as downstream's
 * allocation query asks (here an allocator with a 64-byte prefix): the
 * element neither filters in place nor skips the allocation query. On the
 * GPU the pools it decides and proposes are tested instead
 * (test_proposed_pinned_pool, cuda-memory-gpu). */
GST_START_TEST (test_output_allocated_as_downstream_asks)
{
  std::mt19937 rng (23);
  for (const ElementCase & e : kElements) {
    GstHarness *h = new_harness (launch_of (e));
    GstAllocationParams params;
    gst_allocation_params_init (&params);
    params.prefix = 64;
    gst_harness_set_propose_allocator (h, gst_allocator_find (nullptr),
        &params);
    gst_harness_set_src_caps_str (h, gray_caps (64, 48).c_str ());
    for (int i = 0; i < 3; ++i) {
      Image img = random_image (rng, 64, 48);
      GstBuffer *in = buffer_from_image (img);
      GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
      fail_unless (out != nullptr);
      fail_unless (out != in, "%s filtered in place", e.factory);
      fail_unless_equals_int (gst_buffer_peek_memory (out, 0)->offset, 64);
      assert_luma_filtered (e, image_from_buffer (out, 64, 48), img,
          e.factory);
      gst_buffer_unref (out);
      gst_buffer_unref (in);
    }
    gst_harness_teardown (h);
  }
}
GST_END_TEST;
#endif

/* Formats the elements do not handle, and frames larger than they take, are
 * refused at negotiation. */
GST_START_TEST (test_unsupported_caps_are_refused)
{
  const char *refused[] = {
    /* 16-bit RGB and packed 4:4:4 YUV. */
    "video/x-raw,format=RGB16,width=64,height=48,framerate=30/1",
    "video/x-raw,format=AYUV,width=64,height=48,framerate=30/1",
    "video/x-raw,format=GRAY16_BE,width=64,height=48,framerate=30/1",
    "video/x-raw,format=P012_LE,width=64,height=48,framerate=30/1",
    "audio/x-raw,format=S16LE,rate=48000,channels=2,layout=interleaved",
    /* Larger than the pad templates allow (32768 per side). */
    "video/x-raw,format=GRAY8,width=40000,height=40000,framerate=30/1",
    /* GStreamer's CUDA allocator has no GRAY8 or GRAY16 layout. */
    "video/x-raw(memory:CUDAMemory),format=GRAY8,width=64,height=48,framerate=30/1",
    "video/x-raw(memory:CUDAMemory),format=GRAY16_LE,width=64,height=48,framerate=30/1",
    /* ... nor for these packed formats (system memory only). */
    "video/x-raw(memory:CUDAMemory),format=xRGB,width=64,height=48,framerate=30/1",
    "video/x-raw(memory:CUDAMemory),format=YVYU,width=64,height=48,framerate=30/1",
    /* Depths and layouts no element takes: 4:2:2 10-bit, three 10-bit
     * samples in 32-bit words, packed 4:4:4. */
    "video/x-raw,format=I422_10LE,width=64,height=48,framerate=30/1",
    "video/x-raw,format=GRAY10_LE32,width=64,height=48,framerate=30/1",
    "video/x-raw,format=Y412_LE,width=64,height=48,framerate=30/1",
  };
  for (const ElementCase & e : kElements)
    for (const char *caps : refused) {
      BusHarness c (launch_of (e));
      gst_harness_set_src_caps_str (c.h, caps);
      fail_unless_equals_int (gst_harness_push (c.h,
              gst_buffer_new_allocate (NULL, 64 * 48 * 4, NULL)),
          GST_FLOW_NOT_NEGOTIATED);
    }
}
GST_END_TEST;

/* What leaves @pad, in order: "b<n>" for a buffer of PTS n frames, the
 * event's name otherwise (stream-start, caps and segment left out). */
static GstPadProbeReturn
note_order (GstPad *, GstPadProbeInfo * info, gpointer data)
{
  auto *order = static_cast < std::vector < std::string > *>(data);
  if (GstBuffer * b = GST_PAD_PROBE_INFO_BUFFER (info)) {
    if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER)
      order->push_back ("b" + std::to_string (GST_BUFFER_PTS (b) /
              (GST_SECOND / 30)));
  }
  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    GstEvent *e = GST_PAD_PROBE_INFO_EVENT (info);
    const GstEventType t = GST_EVENT_TYPE (e);
    if (t != GST_EVENT_STREAM_START && t != GST_EVENT_CAPS &&
        t != GST_EVENT_SEGMENT)
      order->push_back (GST_EVENT_TYPE_NAME (e));
  }
  return GST_PAD_PROBE_OK;
}

static std::string
joined (const std::vector < std::string > &order)
{
  std::string s;
  for (const std::string & o : order)
    s += (s.empty ()? "" : " ") + o;
  return s;
}

/* Serialized events that reach cudanlm while it holds frames (a temporal
 * window) leave after those frames, as they came; after a flush, the
 * sticky ones (a tag) go with the next frame and the others are dropped
 * with the frames. */
GST_START_TEST (test_events_keep_their_place_behind_held_frames)
{
  std::mt19937 rng (80);
  const Image frame = random_image (rng, 32, 16, 20, 200);
  for (bool flush : {false, true}) {
    BusHarness c (on_backend ("cudanlm", " temporal-radius=1 "
            "auto-strength=false patch-size=3 search-size=5"));
    std::vector < std::string > order;
    GstPad *src = gst_element_get_static_pad (c.h->element, "src");
    gst_pad_add_probe (src, (GstPadProbeType) (GST_PAD_PROBE_TYPE_BUFFER |
            GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM), note_order, &order, NULL);
    gst_object_unref (src);
    gst_harness_set_src_caps_str (c.h, gray_caps (32, 16).c_str ());
    auto push_frame =[&](int n) {
      GstBuffer *b = buffer_from_image (frame);
      GST_BUFFER_PTS (b) = n * (GST_SECOND / 30);
      GST_BUFFER_DURATION (b) = GST_SECOND / 30;
      const GstFlowReturn ret = gst_harness_push (c.h, b);
      fail_unless (ret == GST_FLOW_OK, "flush %d, frame %d: %s after %s",
          int (flush), n, gst_flow_get_name (ret), joined (order).c_str ());
    };
    for (int n = 0; n < 3; ++n)
      push_frame (n);
    fail_unless (gst_harness_push_event (c.h,
            gst_event_new_gap (3 * (GST_SECOND / 30), GST_SECOND / 30)));
    fail_unless (gst_harness_push_event (c.h,
            gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
                gst_structure_new_empty ("marker"))));
    fail_unless (gst_harness_push_event (c.h,
            gst_event_new_tag (gst_tag_list_new (GST_TAG_TITLE, "held",
                    NULL))));
    if (flush) {
      fail_unless (gst_harness_push_event (c.h, gst_event_new_flush_start ()));
      fail_unless (gst_harness_push_event (c.h,
              gst_event_new_flush_stop (FALSE)));
      GstSegment segment;
      gst_segment_init (&segment, GST_FORMAT_TIME);
      fail_unless (gst_harness_push_event (c.h,
              gst_event_new_segment (&segment)));
    }
    push_frame (4);
    push_frame (5);
    fail_unless (gst_harness_push_event (c.h, gst_event_new_eos ()));
    const std::string got = joined (order);
    const char *want = flush ?
        "b0 b1 tag b4 b5 eos" :
        "b0 b1 b2 gap custom-downstream tag b4 b5 eos";
    fail_unless (got == want, "flush %d: %s, expected %s", int (flush),
        got.c_str (), want);
  }
}
GST_END_TEST;

/* Properties an element takes when it starts (GST_PARAM_MUTABLE_READY) are
 * refused while it runs, with one warning that names the value and why,
 * and keep their value; in READY they are taken. cudalowlight refuses
 * once, for its stages. */
GST_START_TEST (test_start_properties_refused_while_running)
{
  struct Case {
    const char *factory, *property, *refused;
  };
  const Case cases[] = {
    {"cudahisteq", "significant-bits", "4"},
    {"cudahisteq", "cuda-wait", "keep"},
    {"cudaclahe", "cuda-device-id", "3"},
    {"cudasharpen", "backend", "auto"},
    {"cudanlm", "temporal-radius", "2"},
    {"cudalowlight", "cuda-wait", "keep"},
    {"cudalowlight", "cuda-device-id", "3"},
  };
  std::mt19937 rng (81);
  const Image frame = random_image (rng, 32, 16, 20, 200);
  for (const Case & k : cases) {
    BusHarness c (on_backend (k.factory));
    gst_harness_set_src_caps_str (c.h, gray_caps (32, 16).c_str ());
    fail_unless_equals_int (gst_harness_push (c.h, buffer_from_image (frame)),
        GST_FLOW_OK);
    GObject *e = G_OBJECT (c.h->element);
    GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        k.property);
    fail_unless (pspec != NULL && (pspec->flags & GST_PARAM_MUTABLE_READY),
        "%s::%s", k.factory, k.property);
    GValue before = G_VALUE_INIT, after = G_VALUE_INIT;
    g_value_init (&before, pspec->value_type);
    g_value_init (&after, pspec->value_type);
    g_object_get_property (e, k.property, &before);
    {
      CapturedWarnings w;
      gst_util_set_object_arg (e, k.property, k.refused);
      fail_unless_equals_int (w.texts.size (), 1);
      const std::string want = std::string ("refusing ") + k.property + "=";
      fail_unless (w.texts[0].find (want) != std::string::npos &&
          w.texts[0].find ("NULL and READY states only") != std::string::npos,
          "%s: %s", k.factory, w.texts[0].c_str ());
    }
    g_object_get_property (e, k.property, &after);
    fail_unless (gst_value_compare (&before, &after) == GST_VALUE_EQUAL,
        "%s::%s changed while running", k.factory, k.property);
    fail_unless (gst_element_set_state (c.h->element, GST_STATE_READY) ==
        GST_STATE_CHANGE_SUCCESS);
    gst_util_set_object_arg (e, k.property, k.refused);
    g_object_get_property (e, k.property, &after);
    fail_if (gst_value_compare (&before, &after) == GST_VALUE_EQUAL,
        "%s::%s refused in READY", k.factory, k.property);
    g_value_unset (&before);
    g_value_unset (&after);
  }
}
GST_END_TEST;

/* cudanlm's chroma-strength on frames without chroma is not used: a
 * warning says so (and that auto-strength went off with it); none on
 * frames with chroma, nor without the property. */
GST_START_TEST (test_unused_chroma_strength_is_reported)
{
  struct Case {
    const char *props, *caps;
    bool warned;
  };
  const Case cases[] = {
    {" chroma-strength=5", "GRAY8", true},
    {" chroma-strength=5", "GRAY16_LE", true},
    {"", "GRAY8", false},
    {" chroma-strength=5", "I420", false},
  };
  for (const Case & k : cases) {
    BusHarness c (on_backend ("cudanlm", std::string (" patch-size=3 "
                "search-size=5") + k.props));
    gst_harness_set_src_caps_str (c.h, (std::string ("video/x-raw,format=") +
            k.caps + ",width=32,height=16,framerate=30/1").c_str ());
    GstVideoInfo info;
    gst_video_info_set_format (&info, gst_video_format_from_string (k.caps),
        32, 16);
    GstBuffer *b = gst_buffer_new_and_alloc (GST_VIDEO_INFO_SIZE (&info));
    gst_buffer_memset (b, 0, 100, GST_VIDEO_INFO_SIZE (&info));
    fail_unless_equals_int (gst_harness_push (c.h, b), GST_FLOW_OK);
    std::string text;
    while (GstMessage * m = gst_bus_pop_filtered (c.bus, GST_MESSAGE_WARNING)) {
      GError *e = nullptr;
      gst_message_parse_warning (m, &e, nullptr);
      text += e->message;
      g_error_free (e);
      gst_message_unref (m);
    }
    const bool warned = text.find ("chroma-strength=5 is not used") !=
        std::string::npos;
    fail_unless (warned == k.warned, "%s on %s: '%s'", k.props, k.caps,
        text.c_str ());
  }
}
GST_END_TEST;

/* Interlaced frames: cudahisteq maps each sample on its own, so it takes
 * them and filters them as progressive ones; the filters that mix
 * neighbouring rows (and so the two fields) refuse them at negotiation,
 * with an error that says why. */
GST_START_TEST (test_interlaced_frames)
{
  std::mt19937 rng (79);
  const Image frame = random_image (rng, 64, 48, 20, 200);
  std::vector < ElementCase > elements (std::begin (kElements),
      std::end (kElements));
  elements.push_back ({"cudalowlight", ""});
  for (const char *mode : {"interleaved", "mixed"})
    for (const ElementCase & e : elements) {
      BusHarness c (launch_of (e));
      gst_harness_set_src_caps_str (c.h, (gray_caps (64, 48) +
              ",interlace-mode=" + mode).c_str ());
      const GstFlowReturn ret = gst_harness_push (c.h,
          buffer_from_image (frame));
      const std::string what = std::string (e.factory) + ", " + mode;
      if (!g_str_equal (e.factory, "cudahisteq")) {
        fail_unless_equals_int (ret, GST_FLOW_NOT_NEGOTIATED);
        const std::string error = c.first_error ();
        fail_unless (error.find ("progressive frames only") !=
            std::string::npos, "%s: %s", what.c_str (), error.c_str ());
        continue;
      }
      fail_unless_equals_int (ret, GST_FLOW_OK);
      GstBuffer *out = gst_harness_pull (c.h);
      assert_luma_filtered (e, image_from_buffer (out, 64, 48), frame,
          what.c_str ());
      gst_buffer_unref (out);
    }
}
GST_END_TEST;

#ifdef HAVE_GST_CUDA
/* From GStreamer 1.24 on, the CUDA allocator gives an odd-height NV21
 * frame one chroma row too few: every element refuses such caps in CUDA
 * memory with an error that says so, instead of reading or writing past
 * the memory. Even heights, NV12, and NV21 in system memory are taken; on
 * 1.22 (another allocator) odd-height NV21 in CUDA memory is taken too. */
GST_START_TEST (test_odd_height_nv21_in_cuda_memory)
{
  guint major, minor, micro, nano;
  gst_version (&major, &minor, &micro, &nano);
  const bool short_allocator = major > 1 || minor >= 24;
  const char *cuda_nv21 = "video/x-raw(memory:CUDAMemory),format=NV21,"
      "width=33,height=19,framerate=30/1";
  for (const ElementCase & e : kElements) {
    for (const char *caps : {"video/x-raw(memory:CUDAMemory),format=NV21,"
            "width=33,height=20,framerate=30/1",
            "video/x-raw(memory:CUDAMemory),format=NV12,width=33,height=19,"
            "framerate=30/1",
            "video/x-raw,format=NV21,width=33,height=19,framerate=30/1"}) {
      BusHarness c (launch_of (e));
      gst_harness_set_src_caps_str (c.h, caps);
      const std::string error = c.first_error ();
      fail_unless (error.empty (), "%s, %s: %s", launch_of (e).c_str (), caps,
          error.c_str ());
    }
    BusHarness c (launch_of (e));
    gst_harness_set_src_caps_str (c.h, cuda_nv21);
    const std::string error = c.first_error ();
    if (short_allocator)
      fail_unless (error.find ("NV21 frames of odd height (33x19)") !=
          std::string::npos, "%s: %s", launch_of (e).c_str (), error.c_str ());
    else
      fail_unless (error.empty (), "%s: %s", launch_of (e).c_str (),
          error.c_str ());
  }
}
GST_END_TEST;
#endif

/* Format and size change several times in one stream; every frame comes
 * out right for its own caps. */
GST_START_TEST (test_format_and_size_changes_mid_stream)
{
  struct Step {
    GstVideoFormat fmt;
    int w, h;
  };
  /* Under the memory checkers the largest frames smaller (cudanlm's
   * reference, the definition, costs minutes there at 320x240). */
  const int w = quick ()? 97 : 320, h = quick ()? 61 : 240;
  const Step steps[] = {
    {GST_VIDEO_FORMAT_GRAY8, 64, 48}, {GST_VIDEO_FORMAT_NV12, 33, 17},
    {GST_VIDEO_FORMAT_I420, w, h}, {GST_VIDEO_FORMAT_Y444, 5, 3},
    {GST_VIDEO_FORMAT_GRAY8, 64, 48}, {GST_VIDEO_FORMAT_NV21, 1, 1},
    {GST_VIDEO_FORMAT_Y42B, 130, 66}, {GST_VIDEO_FORMAT_YV12, w, h},
  };
  std::mt19937 rng (23);
  for (const ElementCase & e : kElements) {
    BusHarness c (launch_of (e));
    for (const Step & s : steps) {
      gst_harness_set_src_caps_str (c.h, video_caps (s.fmt, s.w, s.h).c_str ());
      for (int i = 0; i < 2; ++i) {
        PlanarFrame in = frame_with_luma (rng, s.fmt,
            random_image (rng, s.w, s.h, 10 * i, 120 + 60 * i));
        GstBuffer *out = gst_harness_push_and_pull (c.h,
            buffer_from_frame (in));
        fail_unless (out != NULL);
        PlanarFrame got = frame_from_buffer (out, in.info);
        gst_buffer_unref (out);
        const std::string what = std::string (e.factory) + " after a change to "
            + gst_video_format_to_string (s.fmt) + " " + std::to_string (s.w) +
            "x" + std::to_string (s.h);
        assert_luma_filtered (e, got.planes[0], in.planes[0], what.c_str ());
        assert_chroma_carried (got, in);
      }
    }
    fail_unless_equals_int (c.count (GST_MESSAGE_ERROR), 0);
  }
}
GST_END_TEST;

#if !TEST_GPU
/* The plugin names itself and its origin (the package-origin option), not
 * GStreamer's own site. */
GST_START_TEST (test_plugin_says_where_it_comes_from)
{
  GstPlugin *plugin = gst_registry_find_plugin (gst_registry_get (),
      "cudafilters");
  fail_unless (plugin != NULL);
  fail_unless_equals_string (gst_plugin_get_package (plugin),
      "gst-cuda-filters");
  const gchar *origin = gst_plugin_get_origin (plugin);
  fail_if (g_str_has_prefix (origin, "https://gstreamer.freedesktop.org"),
      "origin %s is GStreamer's", origin);
  fail_unless_equals_string (origin, CUDAFILTERS_TEST_PACKAGE_ORIGIN);
  gst_object_unref (plugin);
}
GST_END_TEST;

/* The properties every element has from the base: their defaults, the
 * values they take, their specs, and the class every element is in. No
 * backend is involved: the cpu build runs it. */
GST_START_TEST (test_properties)
{
  for (const ElementCase & c : kElements) {
    GstElement *e = gst_element_factory_make (c.factory, NULL);
    gint backend = -1, device = 0;
    g_object_get (e, "backend", &backend, "cuda-device-id", &device, NULL);
    fail_unless_equals_int (backend, 0);  /* auto */
    fail_unless_equals_int (device, -1);

    gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
    g_object_set (e, "cuda-device-id", 3, NULL);
    g_object_get (e, "backend", &backend, "cuda-device-id", &device, NULL);
    fail_unless_equals_int (backend, 2);
    fail_unless_equals_int (device, 3);
    gst_util_set_object_arg (G_OBJECT (e), "backend", "cuda");
    g_object_get (e, "backend", &backend, NULL);
    fail_unless_equals_int (backend, 1);

    GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        "cuda-device-id");
    fail_unless_equals_int (G_PARAM_SPEC_INT (pspec)->minimum, -1);
    fail_unless (pspec->flags & GST_PARAM_MUTABLE_READY);
    fail_unless (g_param_spec_get_blurb (pspec) != NULL);
    pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e), "backend");
    fail_unless (g_param_spec_get_blurb (pspec) != NULL);

    assert_hardware_filter_klass (e);
    gst_object_unref (e);
  }
}
GST_END_TEST;

/* Values outside a property's range are refused by GObject with a warning
 * and leave the property as it was. (cudanlm's own refusals: cudanlm.cpp.) */
GST_START_TEST (test_out_of_range_properties_are_refused)
{
  for (const ElementCase & e : kElements) {
    GstElement *el = gst_element_factory_make (e.factory, NULL);
    g_object_set (el, "cuda-device-id", 0, NULL);
    ASSERT_WARNING (g_object_set (el, "cuda-device-id", -2, NULL));
    gint device = -5;
    g_object_get (el, "cuda-device-id", &device, NULL);
    fail_unless_equals_int (device, 0);
    ASSERT_WARNING (g_object_set (el, "backend", 17, NULL));
    gint backend = -1;
    g_object_get (el, "backend", &backend, NULL);
    fail_unless_equals_int (backend, 0);
    gst_object_unref (el);
  }
  GstElement *nlm = gst_element_factory_make ("cudanlm", NULL);
  ASSERT_WARNING (g_object_set (nlm, "strength", -1.0, NULL));
  ASSERT_WARNING (g_object_set (nlm, "noise-sigma", -3.0, NULL));
  gfloat strength = 0;
  g_object_get (nlm, "strength", &strength, NULL);
  fail_unless (strength == 10.0f);
  gst_object_unref (nlm);
}
GST_END_TEST;

#endif

/* --------------------------------------------------------------- stream */

/* Restart triggers, each alone: after frames that fill the history, the
 * next frame maps as if it were the first. Without a trigger it does not
 * (which shows the check can fail). */
enum class Trigger { kNone, kDiscont, kSegment, kFlush, kCaps };

static void
check_restart (const Equalizer & e, Trigger trigger)
{
  const int w = 96, h = 64;
  std::mt19937 rng (10);
  GstHarness *hh = harness_for (e.launch (0.9).c_str (), w, h);
  for (int i = 0; i < 5; ++i)
    push_timed (hh, random_image (rng, w, h, 0, 60 + 30 * i), i);

  switch (trigger) {
    case Trigger::kSegment:
    case Trigger::kFlush:{
      if (trigger == Trigger::kFlush) {
        fail_unless (gst_harness_push_event (hh, gst_event_new_flush_start ()));
        fail_unless (gst_harness_push_event (hh, gst_event_new_flush_stop (TRUE)));
      }
      GstSegment segment;
      gst_segment_init (&segment, GST_FORMAT_TIME);
      fail_unless (gst_harness_push_event (hh, gst_event_new_segment (&segment)));
      break;
    }
    case Trigger::kCaps:
      gst_harness_set_src_caps_str (hh, ("video/x-raw,format=GRAY8,width=96,"
              "height=64,framerate=25/1"));
      break;
    default:
      break;
  }
  const Image next = random_image (rng, w, h, 100, 250);
  const Image got = push_timed (hh, next, 5, trigger == Trigger::kDiscont);
  bool same = got.pixels == e.single (next).pixels;
  fail_unless (same == (trigger != Trigger::kNone), "%s: trigger %d: the "
      "history %s", e.factory, int (trigger), same ? "restarted" :
      "did not restart");
  gst_harness_teardown (hh);
}

GST_START_TEST (test_history_restarts)
{
  for (const Equalizer & e : kEqualizers)
    for (Trigger t : {Trigger::kNone, Trigger::kDiscont, Trigger::kSegment,
            Trigger::kFlush, Trigger::kCaps})
      check_restart (e, t);
}
GST_END_TEST;

/* A temporal window's frames, pushed one by one (noise that grows from
 * frame 6 on), with something done before frame 6 or 4; the luma of every
 * frame that leaves, in order, once the stream has ended. */
static std::vector < std::vector < uint8_t >> window_outputs (const char *launch,
    const std::function < void (GstHarness *, int) > &before, bool discont6 = false)
{
  std::mt19937 rng (44);
  GstElement *el = gst_parse_launch (launch, NULL);
  fail_unless (el != NULL);
  /* The bin's denoiser narrowed here, not in the launch line: GStreamer
   * 1.22.0's parser keeps a reference to a child whose property it sets
   * (gstreamer#2560, fixed in 1.22.4), which valgrind reports as lost. */
  if (GST_IS_BIN (el))
    gst_child_proxy_set (GST_CHILD_PROXY (el), "cudanlm::patch-size", 3,
        "cudanlm::search-size", 7, NULL);
  GstHarness *h = gst_harness_new_with_element (el, "sink", "src");
  gst_object_unref (el);
  gst_harness_set_src_caps_str (h, gray_caps (48, 32).c_str ());
  std::vector < std::vector < uint8_t >> out;
  for (int i = 0; i < 12; ++i) {
    before (h, i);
    GstBuffer *b = buffer_from_image (random_image (rng, 48, 32, 90 - 6 * (i >= 6 ? 9 : 1),
            110 + 6 * (i >= 6 ? 9 : 1)));
    GST_BUFFER_PTS (b) = i * (GST_SECOND / 25);
    GST_BUFFER_DURATION (b) = GST_SECOND / 25;
    if (i == 6 && discont6)
      GST_BUFFER_FLAG_SET (b, GST_BUFFER_FLAG_DISCONT);
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while (GstBuffer * b = gst_harness_try_pull (h)) {
    GstMapInfo map;
    fail_unless (gst_buffer_map (b, &map, GST_MAP_READ));
    out.emplace_back (map.data, map.data + map.size);
    gst_buffer_unmap (b, &map);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
  return out;
}

/* Every frame of @got as in @want, all 12 of them. */
static void
assert_same_outputs (const std::vector < std::vector < uint8_t >> &got,
    const std::vector < std::vector < uint8_t >> &want, const char *launch,
    const char *what)
{
  fail_unless_equals_int (got.size (), 12);
  fail_unless_equals_int (want.size (), 12);
  for (int i = 0; i < 12; ++i)
    fail_unless (got[i] == want[i], "%s: frame %d %s", launch, i, what);
}

static const char *kWindowLaunches[] = {
  "cudanlm backend=cpu temporal-radius=1 noise-smoothing=0.9 patch-size=3 search-size=5",
  "cudalowlight backend=cpu",
};

/* A new segment starts a new history with its own first frame, as a
 * DISCONT buffer there does: the frames of the old segment still held keep
 * the old one. */
GST_START_TEST (test_segment_restarts_at_its_first_frame)
{
  for (const char *launch : kWindowLaunches) {
    const auto by_discont = window_outputs (launch, [](GstHarness *, int) {}, true);
    const auto by_segment = window_outputs (launch, [](GstHarness * h, int i) {
          if (i == 6) {
            GstSegment segment;
            gst_segment_init (&segment, GST_FORMAT_TIME);
            fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
          }
        });
    assert_same_outputs (by_segment, by_discont, launch, "differs from the "
        "stream whose new segment starts with a DISCONT buffer");
  }
}
GST_END_TEST;

/* Caps sent again unchanged are no break: the window and the history go on. */
GST_START_TEST (test_same_caps_keep_the_window)
{
  for (const char *launch : kWindowLaunches) {
    const auto plain = window_outputs (launch, [](GstHarness *, int) {});
    const auto again = window_outputs (launch, [](GstHarness * h, int i) {
          if (i == 4) {
            /* The caps event alone: gst_harness_set_src_caps sends a new
             * segment too, which is a break. */
            GstCaps *caps = gst_caps_from_string (gray_caps (48, 32).c_str ());
            fail_unless (gst_harness_push_event (h, gst_event_new_caps (caps)));
            gst_caps_unref (caps);
          }
        });
    assert_same_outputs (again, plain, launch, "changed when the same caps "
        "came again");
  }
}
GST_END_TEST;

/* qos=false, set by the user, stays false when the element starts, and a
 * QoS event that calls every frame late drops none; by default frames
 * without a window are dropped when late. */
GST_START_TEST (test_qos_as_set)
{
  std::mt19937 rng (45);
  const Image frame = random_image (rng, 32, 16, 20, 200);
  for (const char *launch : {"cudahisteq", "cudaclahe", "cudasharpen",
          "cudanlm patch-size=3 search-size=5",
          "cudanlm temporal-radius=1 patch-size=3 search-size=5"})
    for (bool qos : {false, true}) {
      GstElement *el = gst_parse_launch (on_backend (launch, "").c_str (), NULL);
      fail_unless (el != NULL);
      if (!qos)
        g_object_set (el, "qos", FALSE, NULL);
      GstHarness *h = gst_harness_new_with_element (el, "sink", "src");
      gst_object_unref (el);
      gst_harness_set_src_caps_str (h, gray_caps (32, 16).c_str ());
      gboolean now = TRUE;
      g_object_get (h->element, "qos", &now, NULL);
      const bool window = strstr (launch, "temporal-radius=1") != nullptr;
      fail_unless_equals_int (now, qos && !window);
      gst_harness_push_upstream_event (h, gst_event_new_qos (GST_QOS_TYPE_UNDERFLOW,
              0.5, 10 * GST_SECOND, 0));
      for (int i = 0; i < 5; ++i) {
        GstBuffer *b = buffer_from_image (frame);
        GST_BUFFER_PTS (b) = i * (GST_SECOND / 25);
        GST_BUFFER_DURATION (b) = GST_SECOND / 25;
        fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
      }
      fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
      const guint out = gst_harness_buffers_received (h);
      if (!qos || window) {
        fail_unless_equals_int (out, 5);
      } else {
        fail_unless (out < 5, "%s: late frames were kept with QoS on", launch);
      }
      gst_harness_teardown (h);
    }
}
GST_END_TEST;

/* A window's latency follows the frame rate: when it grows, the element
 * says so (a LATENCY message), so that a live pipeline asks again. */
GST_START_TEST (test_latency_changes_are_posted)
{
  BusHarness c (on_backend ("cudanlm", " temporal-radius=2 patch-size=3 search-size=5"));
  std::mt19937 rng (46);
  const Image frame = random_image (rng, 32, 16, 20, 200);
  auto push = [&](int i, GstClockTime duration) {
    GstBuffer *b = buffer_from_image (frame);
    GST_BUFFER_PTS (b) = i * duration;
    GST_BUFFER_DURATION (b) = duration;
    fail_unless_equals_int (gst_harness_push (c.h, b), GST_FLOW_OK);
  };
  const std::string caps = "video/x-raw,format=GRAY8,width=32,height=16";
  gst_harness_set_src_caps_str (c.h, (caps + ",framerate=25/1").c_str ());
  for (int i = 0; i < 3; ++i)
    push (i, GST_SECOND / 25);
  c.count (GST_MESSAGE_LATENCY);
  gst_harness_set_src_caps_str (c.h, (caps + ",framerate=5/1").c_str ());
  for (int i = 3; i < 6; ++i)
    push (i, GST_SECOND / 5);
  fail_unless (c.count (GST_MESSAGE_LATENCY) >= 1, "no LATENCY message when the "
      "latency grew from 80 to 400 ms");
}
GST_END_TEST;

/* Downstream that refuses every buffer with @flow_return. */
static GstPadProbeReturn
refuse_buffers (GstPad *, GstPadProbeInfo * info, gpointer flow_return)
{
  gst_buffer_unref (GST_PAD_PROBE_INFO_BUFFER (info));
  GST_PAD_PROBE_INFO_DATA (info) = NULL;
  GST_PAD_PROBE_INFO_FLOW_RETURN (info) =
      (GstFlowReturn) GPOINTER_TO_INT (flow_return);
  return GST_PAD_PROBE_HANDLED;
}

/* A frame held (cudanlm's temporal window) whose push fails downstream at
 * EOS, new caps or a new segment: the element posts the error and the
 * event fails, rather than the frame going missing in silence. */
GST_START_TEST (test_held_frames_failing_downstream_are_errors)
{
  std::mt19937 rng (77);
  const Image frame = random_image (rng, 32, 16, 20, 200);
  for (GstEventType type : {GST_EVENT_EOS, GST_EVENT_CAPS, GST_EVENT_SEGMENT}) {
    BusHarness c (on_backend ("cudanlm", " temporal-radius=1 "
            "auto-strength=false patch-size=3 search-size=5"));
    gst_harness_set_src_caps_str (c.h, gray_caps (32, 16).c_str ());
    for (int i = 0; i < 2; ++i) {
      GstBuffer *b = buffer_from_image (frame);
      GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
      fail_unless_equals_int (gst_harness_push (c.h, b), GST_FLOW_OK);
    }
    fail_unless_equals_int (gst_harness_buffers_in_queue (c.h), 1);
    GstElement *nlm = gst_harness_find_element (c.h, "cudanlm");
    GstPad *src = gst_element_get_static_pad (nlm, "src");
    gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, refuse_buffers,
        GINT_TO_POINTER (GST_FLOW_ERROR), NULL);
    GstEvent *event = nullptr;
    if (type == GST_EVENT_EOS) {
      event = gst_event_new_eos ();
    } else if (type == GST_EVENT_CAPS) {
      GstCaps *caps = gst_caps_from_string (gray_caps (16, 8).c_str ());
      event = gst_event_new_caps (caps);
      gst_caps_unref (caps);
    } else {
      GstSegment segment;
      gst_segment_init (&segment, GST_FORMAT_TIME);
      event = gst_event_new_segment (&segment);
    }
    /* A sticky event that fails is still stored on the pad, and its push
     * counts as done (GstPad): EOS is the one whose push fails. */
    const gboolean pushed = gst_harness_push_event (c.h, event);
    fail_if (type == GST_EVENT_EOS && pushed, "EOS went on after the frame "
        "held failed downstream");
    fail_if (c.first_error ().empty (), "%s: no error posted",
        gst_event_type_get_name (type));
    gst_object_unref (src);
    gst_object_unref (nlm);
  }
}
GST_END_TEST;

/* Downstream that has ended (a sink after num-buffers) refuses the frame
 * held with EOS: that frame is not wanted, and EOS still goes on, or the
 * pipeline would never end. */

GST_START_TEST (test_eos_goes_on_after_downstream_ended)
{
  std::mt19937 rng (78);
  const Image frame = random_image (rng, 32, 16, 20, 200);
  for (const char *launch : {"cudanlm temporal-radius=1 auto-strength=false "
          "patch-size=3 search-size=5", "cudalowlight"}) {
    BusHarness c (on_backend (launch, ""));
    gst_harness_set_src_caps_str (c.h, gray_caps (32, 16).c_str ());
    for (int i = 0; i < 3; ++i) {
      GstBuffer *b = buffer_from_image (frame);
      GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
      fail_unless_equals_int (gst_harness_push (c.h, b), GST_FLOW_OK);
    }
    fail_unless (gst_harness_buffers_in_queue (c.h) < 3, "%s holds no "
        "frame", launch);
    GstPad *src = gst_element_get_static_pad (c.h->element, "src");
    gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, refuse_buffers,
        GINT_TO_POINTER (GST_FLOW_EOS), NULL);
    gst_object_unref (src);
    fail_unless (gst_harness_push_event (c.h, gst_event_new_eos ()),
        "%s: EOS failed where downstream had ended", launch);
    bool eos = false;
    while (GstEvent * e = gst_harness_try_pull_event (c.h)) {
      eos = eos || GST_EVENT_TYPE (e) == GST_EVENT_EOS;
      gst_event_unref (e);
    }
    fail_unless (eos, "%s: EOS did not reach downstream", launch);
    const std::string error = c.first_error ();
    fail_unless (error.empty (), "%s: error posted: %s", launch,
        error.c_str ());
  }
}
GST_END_TEST;

/* An element of @factory's type whose prepare_output_buffer says OK and
 * gives no buffer, as a broken pool might. */
static GstFlowReturn
prepare_no_buffer (GstBaseTransform *, GstBuffer *, GstBuffer ** out)
{
  *out = NULL;
  return GST_FLOW_OK;
}

static void
no_buffer_class_init (gpointer klass, gpointer)
{
  GST_BASE_TRANSFORM_CLASS (klass)->prepare_output_buffer = prepare_no_buffer;
}

static GstElement *
element_without_output_buffers (const char *factory)
{
  GstElementFactory *f = gst_element_factory_find (factory);
  fail_unless (f != NULL);
  GstPluginFeature *loaded = gst_plugin_feature_load (GST_PLUGIN_FEATURE (f));
  const GType parent =
      gst_element_factory_get_element_type (GST_ELEMENT_FACTORY (loaded));
  gst_object_unref (loaded);
  gst_object_unref (f);
  const std::string name = std::string (g_type_name (parent)) + "NoBuffers";
  GType type = g_type_from_name (name.c_str ());
  if (!type) {
    GTypeQuery q;
    g_type_query (parent, &q);
    type = g_type_register_static_simple (parent, name.c_str (), q.class_size,
        no_buffer_class_init, q.instance_size, NULL, (GTypeFlags) 0);
  }
  GstElement *e = GST_ELEMENT (g_object_new (type, NULL));
  gst_util_set_object_arg (G_OBJECT (e), "backend", kBackend);
  return e;
}

/* prepare_output_buffer that says OK without a buffer: the frame is not
 * lost in silence but an error, on one plane (cudahisteq) and in a window
 * of frames (cudanlm with a temporal radius). */
GST_START_TEST (test_no_output_buffer_is_an_error)
{
  std::mt19937 rng (78);
  const Image frame = random_image (rng, 32, 16, 20, 200);
  for (const char *factory : {"cudahisteq", "cudanlm"}) {
    GstElement *e = element_without_output_buffers (factory);
    const bool window = g_str_equal (factory, "cudanlm");
    if (window)
      g_object_set (e, "temporal-radius", 1, NULL);
    GstBus *bus = gst_bus_new ();
    gst_element_set_bus (e, bus);
    GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
    gst_object_unref (e);
    gst_harness_set_src_caps_str (h, gray_caps (32, 16).c_str ());
    GstFlowReturn ret = GST_FLOW_OK;
    for (int i = 0; i < (window ? 2 : 1) && ret == GST_FLOW_OK; ++i)
      ret = gst_harness_push (h, buffer_from_image (frame));
    fail_unless_equals_int (ret, GST_FLOW_ERROR);
    GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    fail_unless (m != NULL, "%s: no error posted", factory);
    gst_message_unref (m);
    gst_harness_teardown (h);
    release_bus (bus);
  }
}
GST_END_TEST;

/* ------------------------------------------------------------ messages */

struct Levels {
  guint min, max;
  double mean;
};

static Levels
frame_levels (const Image & img)
{
  Levels l { 255, 0, 0 };
  for (uint8_t p : img.pixels) {
    l.min = std::min<guint> (l.min, p);
    l.max = std::max<guint> (l.max, p);
    l.mean += p;
  }
  l.mean /= img.pixels.size ();
  return l;
}

static void
check_levels (const GstStructure * s, const char *prefix, const Levels & want)
{
  guint min = 0, max = 0;
  gdouble mean = -1;
  const std::string p (prefix);
  fail_unless (gst_structure_get_uint (s, (p + "-min").c_str (), &min));
  fail_unless (gst_structure_get_uint (s, (p + "-max").c_str (), &max));
  fail_unless (gst_structure_get_double (s, (p + "-mean").c_str (), &mean));
  fail_unless_equals_int (min, want.min);
  fail_unless_equals_int (max, want.max);
  fail_unless (std::fabs (mean - want.mean) < 1e-9, "%s-mean %f, expected %f",
      prefix, mean, want.mean);
}

/* Checks one element message against the frame it describes. */
static void
check_message (GstMessage * m, const char *factory, const Image & in,
    const Image & out, int i)
{
  const GstStructure *s = gst_message_get_structure (m);
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_name (s), factory);

  const GValue *hist = gst_structure_get_value (s, "histogram");
  fail_unless (hist != NULL && GST_VALUE_HOLDS_ARRAY (hist));
  fail_unless_equals_int (gst_value_array_get_size (hist), 256);
  guint want[256] = { 0 };
  for (uint8_t p : in.pixels)
    want[p]++;
  for (guint b = 0; b < 256; ++b)
    fail_unless_equals_int (g_value_get_uint (gst_value_array_get_value (hist,
                b)), want[b]);
  check_levels (s, "input", frame_levels (in));
  check_levels (s, "output", frame_levels (out));
  /* The input's noise, as the engine library estimates it on the CPU: the
   * GPU's estimate is the same number. */
  gdouble noise = -1;
  fail_unless (gst_structure_get_double (s, "noise-sigma", &noise));
  const double want_noise = cudafilters::estimate_noise_sigma (
      cudafilters::ConstPlane (in.pixels.data (), size_t (in.width), in.width,
          in.height));
  fail_unless (noise == want_noise, "noise-sigma %.17g, expected %.17g", noise,
      want_noise);
  /* And band by band of brightness, likewise. */
  const GValue *curve = gst_structure_get_value (s, "noise-curve");
  fail_unless (curve != NULL && GST_VALUE_HOLDS_ARRAY (curve));
  fail_unless_equals_int (gst_value_array_get_size (curve),
      cudafilters::kNoiseCurveBands);
  cudafilters::NoiseCurveTable table;
  table.add (cudafilters::ConstPlane (in.pixels.data (), size_t (in.width), in.width,
          in.height));
  /* A gray frame: its noise is read as white (noise_estimate.h). */
  const std::array<double, cudafilters::kNoiseBands> want_curve = table.sigmas (0.0);
  for (int b = 0; b < cudafilters::kNoiseCurveBands; ++b) {
    const double got = g_value_get_double (gst_value_array_get_value (curve, b));
    fail_unless (got == want_curve[b], "noise-curve band %d: %.17g, expected %.17g", b,
        got, want_curve[b]);
  }

  const GstClockTime pts = gst_util_uint64_scale (i, GST_SECOND, 30);
  guint64 running = 0, stream = 0, ts = 0;
  fail_unless (gst_structure_get_uint64 (s, "running-time", &running));
  fail_unless (gst_structure_get_uint64 (s, "stream-time", &stream));
  fail_unless (gst_structure_get_uint64 (s, "timestamp", &ts));
  fail_unless_equals_uint64 (running, pts);
  fail_unless_equals_uint64 (stream, pts);
  fail_unless_equals_uint64 (ts, pts);
}

static const char *kMessageElements[] = {
  "cudahisteq", "cudaclahe", "cudanlm auto-strength=false strength=15 patch-size=3 search-size=7",
  "cudasharpen",
};

/* message-interval 0: one message per frame, with the figures of that
 * frame's input and output. */
GST_START_TEST (test_messages_every_frame)
{
  std::mt19937 rng (12);
  for (const char *el : kMessageElements) {
    const std::string factory (el, strcspn (el, " "));
    BusHarness bh (std::string (el) + " backend=" + kBackend +
        " post-messages=true message-interval=0");
    gst_harness_set_src_caps_str (bh.h, gray_caps (131, 77).c_str ());
    for (int i = 0; i < 4; ++i) {
      const Image in = random_image (rng, 131, 77, 20 + 10 * i, 120 + 30 * i);
      const Image out = push_timed (bh.h, in, i);
      GstMessage *m = gst_bus_pop_filtered (bh.bus, GST_MESSAGE_ELEMENT);
      fail_unless (m != NULL, "%s: no message for frame %d", el, i);
      check_message (m, factory.c_str (), in, out, i);
      gst_message_unref (m);
      fail_unless_equals_int (bh.count (GST_MESSAGE_ELEMENT), 0);
    }
  }
}
GST_END_TEST;

/* The default: no messages. With an interval of 100 ms at 30 frames per
 * second: frames 0, 3, 6 and 9; after a flush the next frame posts. */
GST_START_TEST (test_message_interval)
{
  std::mt19937 rng (13);
  {
    BusHarness quiet (std::string ("cudahisteq backend=") + kBackend);
    gst_harness_set_src_caps_str (quiet.h, gray_caps (40, 30).c_str ());
    for (int i = 0; i < 3; ++i)
      push_timed (quiet.h, random_image (rng, 40, 30), i);
    fail_unless_equals_int (quiet.count (GST_MESSAGE_ELEMENT), 0);
  }
  BusHarness bh (std::string ("cudaclahe backend=") + kBackend +
      " post-messages=true message-interval=100000000");
  gst_harness_set_src_caps_str (bh.h, gray_caps (40, 30).c_str ());
  std::vector<int> posted;
  for (int i = 0; i < 11; ++i) {
    const Image in = random_image (rng, 40, 30);
    const Image out = push_timed (bh.h, in, i);
    if (GstMessage * m = gst_bus_pop_filtered (bh.bus, GST_MESSAGE_ELEMENT)) {
      check_message (m, "cudaclahe", in, out, i);
      gst_message_unref (m);
      posted.push_back (i);
    }
  }
  fail_unless (posted == std::vector<int> ({0, 3, 6, 9}));
  fail_unless (gst_harness_push_event (bh.h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (bh.h, gst_event_new_flush_stop (FALSE)));
  GstSegment segment;
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (bh.h, gst_event_new_segment (&segment)));
  push_timed (bh.h, random_image (rng, 40, 30), 10);
  fail_unless_equals_int (bh.count (GST_MESSAGE_ELEMENT), 1);

  /* A segment not in time (appsrc's default is bytes) has no running
   * time: every frame posts, with the times NONE, and nothing complains. */
  GstSegment bytes;
  gst_segment_init (&bytes, GST_FORMAT_BYTES);
  fail_unless (gst_harness_push_event (bh.h, gst_event_new_segment (&bytes)));
  for (int i = 0; i < 2; ++i) {
    push_timed (bh.h, random_image (rng, 40, 30), 11 + i);
    GstMessage *m = gst_bus_pop_filtered (bh.bus, GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL, "no message in a bytes segment");
    guint64 running = 0;
    fail_unless (gst_structure_get_uint64 (gst_message_get_structure (m),
            "running-time", &running));
    fail_unless (running == GST_CLOCK_TIME_NONE);
    gst_message_unref (m);
  }
}
GST_END_TEST;

#if TEST_GPU
/* NV12 frames in CUDA memory (cudaupload ! X ! cudadownload): smoothing as
 * the model, and messages with the figures of the device frames. */
GST_START_TEST (test_cuda_memory_smoothing_and_messages)
{
  const int w = 176, h = 96;
  for (const Equalizer & e : kEqualizers) {
    std::mt19937 rng (14);
    Model model (e, 0.7);
    const std::string launch = "cudaupload ! " + e.launch (0.7) +
        " post-messages=true message-interval=0 ! cudadownload";
    GstElement *bin = gst_parse_bin_from_description (launch.c_str (), TRUE,
        NULL);
    fail_unless (bin != NULL);
    GstBus *bus = gst_bus_new ();
    gst_element_set_bus (bin, bus);
    share_test_context (bin, Context::kShared);
    GstHarness *hh = gst_harness_new_with_element (bin, "sink", "src");
    gst_object_unref (bin);
    const std::string caps = video_caps (GST_VIDEO_FORMAT_NV12, w, h);
    gst_harness_set_src_caps_str (hh, caps.c_str ());
    gst_harness_set_sink_caps_str (hh, caps.c_str ());
    for (int i = 0; i < 8; ++i) {
      PlanarFrame in = frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
          scene (rng, w, h, i));
      GstBuffer *buf = buffer_from_frame (in);
      GST_BUFFER_PTS (buf) = gst_util_uint64_scale (i, GST_SECOND, 30);
      GstBuffer *out = gst_harness_push_and_pull (hh, buf);
      fail_unless (out != NULL);
      PlanarFrame got = frame_from_buffer (out, in.info);
      gst_buffer_unref (out);
      assert_images_equal (got.planes[0], model (in.planes[0]), e.factory);
      assert_chroma_carried (got, in);
      GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
      fail_unless (m != NULL, "%s: no message in CUDA memory", e.factory);
      check_message (m, e.factory, in.planes[0], got.planes[0], i);
      gst_message_unref (m);
    }
    gst_harness_teardown (hh);
    release_bus (bus);
  }
}
GST_END_TEST;
#endif

/* --------------------------------------------------------------- faults */

/* The first caps an element offers (transform_caps) for caps in both
 * memories: whether CUDA memory comes first. */
static bool
offers_cuda_first (GstElement * e)
{
  GstCaps *both = gst_caps_from_string ("video/x-raw(memory:CUDAMemory),"
      "format=NV12,width=64,height=48; video/x-raw,format=NV12,width=64,"
      "height=48");
  GstCaps *got = GST_BASE_TRANSFORM_GET_CLASS (e)->transform_caps (
      GST_BASE_TRANSFORM (e), GST_PAD_SINK, both, NULL);
  fail_unless (gst_caps_get_size (got) == 2);
  GstCapsFeatures *f = gst_caps_get_features (got, 0);
  const bool cuda = f && gst_caps_features_contains (f, "memory:CUDAMemory");
  gst_caps_unref (got);
  gst_caps_unref (both);
  return cuda;
}

/* backend=auto: frames are filtered either way; without a usable GPU
 * exactly one warning says so, however many frames follow, and with one
 * none. Once started, the element offers CUDA memory first only where it
 * runs on the GPU. */
GST_START_TEST (test_backend_auto)
{
  std::mt19937 rng (24);
  const bool have_gpu = gpu_available ();
  const struct {
    int w, h, lo, hi;
  } frames[] = { {40, 30, 0, 255}, {50, 20, 60, 120}, {99, 33, 0, 255} };
  for (const ElementCase & e : kElements) {
    BusHarness c (std::string (e.factory) + " backend=auto" + e.props);
    for (const auto & f : frames) {
      gst_harness_set_src_caps_str (c.h, gray_caps (f.w, f.h).c_str ());
      Image img = random_image (rng, f.w, f.h, f.lo, f.hi);
      assert_luma_filtered (e, push_pull (c.h, img), img, "backend=auto");
    }
    fail_unless_equals_int (c.count (GST_MESSAGE_WARNING), have_gpu ? 0 : 1);
    fail_unless_equals_int (c.count (GST_MESSAGE_ERROR), 0);
    GstElement *el = gst_harness_find_element (c.h, e.factory);
    fail_unless_equals_int (offers_cuda_first (el), have_gpu);
    gst_object_unref (el);
  }
}
GST_END_TEST;

/* `e` with backend=cuda (and `device` unless -1) taken to `state`: what
 * the state change returned, and the error on the bus, if any. */
static GstStateChangeReturn
start_on_cuda (const ElementCase & e, int device, GstState state,
    GError ** err, gchar ** debug)
{
  GstElement *el = gst_element_factory_make (e.factory, NULL);
  gst_util_set_object_arg (G_OBJECT (el), "backend", "cuda");
  if (device != -1)
    g_object_set (el, "cuda-device-id", device, NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (el, bus);
  const GstStateChangeReturn ret = gst_element_set_state (el, state);
  if (GstMessage * m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR)) {
    gst_message_parse_error (m, err, debug);
    gst_message_unref (m);
  }
  gst_element_set_state (el, GST_STATE_NULL);
  gst_object_unref (el);
  release_bus (bus);
  return ret;
}

/* backend=cuda: without a usable GPU, start fails with an error that says
 * CUDA is not found; with one, the element starts on the default device
 * without an error, and a device that does not exist fails at start with
 * an error that names it. */
GST_START_TEST (test_backend_cuda)
{
  const bool have_gpu = gpu_available ();
  for (const ElementCase & e : kElements) {
    GError *err = nullptr;
    gchar *debug = nullptr;
    GstStateChangeReturn ret = start_on_cuda (e, -1, GST_STATE_PAUSED, &err,
        &debug);
    if (have_gpu) {
      fail_unless (ret != GST_STATE_CHANGE_FAILURE, "%s backend=cuda did not "
          "start", e.factory);
      fail_unless (err == NULL, "%s: %s", e.factory, err ? err->message : "");
    } else {
      fail_unless_equals_int (ret, GST_STATE_CHANGE_FAILURE);
      fail_unless (err != NULL, "%s backend=cuda: no error on the bus",
          e.factory);
      fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
              GST_RESOURCE_ERROR_NOT_FOUND), "%s: %s", e.factory, err->message);
      fail_unless (strstr (err->message, "CUDA") != NULL, "message: %s",
          err->message);
    }
    g_clear_error (&err);
    g_clear_pointer (&debug, g_free);

    /* Without a GPU, any device; with one, a device that does not exist.
     * Either way start fails with an error that says why. */
    ret = start_on_cuda (e, have_gpu ? 1000 : -1, GST_STATE_PLAYING, &err,
        &debug);
    fail_unless_equals_int (ret, GST_STATE_CHANGE_FAILURE);
    fail_unless (err != NULL, "%s backend=cuda: no error on the bus",
        e.factory);
    fail_unless (strstr (err->message, "CUDA") != NULL, "%s", err->message);
    if (have_gpu)
      fail_unless (debug && strstr (debug, "1000"), "%s", debug);
    g_clear_error (&err);
    g_clear_pointer (&debug, g_free);
  }
}
GST_END_TEST;

#if TEST_GPU
/* Takes device memory until less than `leave` bytes are free. */
struct MemoryHog {
  std::vector<void *> blocks;
  explicit MemoryHog (size_t leave) {
    for (size_t chunk = size_t (1) << 30; chunk >= (size_t (1) << 20);
        chunk /= 2) {
      for (;;) {
        size_t free_bytes = 0, total = 0;
        fail_unless_equals_int (cudaMemGetInfo (&free_bytes, &total), 0);
        if (free_bytes < leave + chunk)
          break;
        void *p = nullptr;
        if (cudaMalloc (&p, chunk) != cudaSuccess) {
          (void) cudaGetLastError ();
          break;
        }
        blocks.push_back (p);
      }
    }
  }
  ~MemoryHog () {
    for (void *p : blocks)
      cudaFree (p);
  }
};

/* Held outside the test body: an assertion leaves the test with a longjmp
 * (no destructors), and the fixture's teardown still gives the memory back. */
static std::unique_ptr < MemoryHog > g_hog;

static void
release_hog (void)
{
  g_hog.reset ();
}

/* A frame that no longer fits in device memory is a clear error; with the
 * memory back, the same element restarts and filters correctly. */
GST_START_TEST (test_out_of_device_memory_then_restart)
{
  std::mt19937 rng (25);
  for (const ElementCase & e : kElements) {
    BusHarness c (launch_of (e));
    gst_harness_set_src_caps_str (c.h, gray_caps (64, 48).c_str ());
    Image small = random_image (rng, 64, 48);
    assert_luma_filtered (e, push_pull (c.h, small), small, "before OOM");

    {
      g_hog = std::make_unique < MemoryHog > (size_t (8) << 20);
      /* 8K needs more than the 8 MB left. */
      gst_harness_set_src_caps_str (c.h, gray_caps (7680, 4320).c_str ());
      GstBuffer *big = gst_buffer_new_allocate (NULL, 7680 * 4320, NULL);
      gst_buffer_memset (big, 0, 100, 7680 * 4320);
      const GstFlowReturn ret = gst_harness_push (c.h, big);
      fail_unless (ret != GST_FLOW_OK, "an 8K frame was processed with 8 MB "
          "of device memory left");
      const std::string error = c.first_error ();
      fail_unless (error.find ("memory") != std::string::npos ||
          error.find ("Memory") != std::string::npos, "%s", error.c_str ());
      g_hog.reset ();
    }

    /* The failed allocation left the element's buffers as they were: a
     * small frame is filtered without a restart. */
    gst_harness_set_src_caps_str (c.h, gray_caps (64, 48).c_str ());
    Image again = random_image (rng, 64, 48);
    assert_luma_filtered (e, push_pull (c.h, again), again,
        "after OOM, no restart");

    fail_unless (gst_element_set_state (c.h->element, GST_STATE_NULL) ==
        GST_STATE_CHANGE_SUCCESS);
    gst_harness_play (c.h);
    gst_harness_set_src_caps_str (c.h, gray_caps (640, 480).c_str ());
    Image img = random_image (rng, 640, 480);
    /* cudanlm's brute-force reference is too slow for this size. */
    if (!g_str_equal (e.factory, "cudanlm"))
      assert_luma_filtered (e, push_pull (c.h, img), img, "after OOM");
    else
      fail_unless (push_pull (c.h, img).width == 640);
  }
}
GST_END_TEST;

#ifdef HAVE_GST_CUDA
/* A kernel that traps, in the context the element shares with its
 * application: the context is lost for good. The element's next frame must
 * end in an element error, not a crash or a hang. */
static const char kTrapPtx[] =
    ".version 7.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry fault ()\n{\n  trap;\n  ret;\n}\n";

static void
fault_context (GstCudaContext * ctx)
{
  fail_unless (gst_cuda_context_push (ctx));
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
  fail_unless_equals_int (CuModuleLoadData (&module, kTrapPtx), CUDA_SUCCESS);
  fail_unless_equals_int (CuModuleGetFunction (&fn, module, "fault"),
      CUDA_SUCCESS);
  fail_unless_equals_int (CuLaunchKernel (fn, 1, 1, 1, 1, 1, 1, 0, nullptr,
          nullptr, nullptr), CUDA_SUCCESS);
  fail_unless (CuStreamSynchronize (nullptr) != CUDA_SUCCESS);
  gst_cuda_context_pop (nullptr);
}

GST_START_TEST (test_device_fault_mid_stream_is_an_error)
{
  /* A context lost to a fault stays lost, and the driver may refuse new
   * contexts in this process afterwards: both elements share the one context
   * that is faulted. */
  std::mt19937 rng (26);
  GstCudaContext *ctx = gst_cuda_context_new (0);
  fail_unless (ctx != nullptr);
  std::vector < std::unique_ptr < BusHarness >> harnesses;
  for (const ElementCase & e : kElements) {
    harnesses.push_back (std::make_unique < BusHarness > (launch_of (e)));
    BusHarness & c = *harnesses.back ();
    play_in_cuda_context (c.h, ctx);
    gst_harness_set_src_caps_str (c.h, gray_caps (320, 240).c_str ());
    for (int i = 0; i < 3; ++i) {
      Image img = random_image (rng, 320, 240);
      fail_unless (push_pull (c.h, img).width == 320);
    }
  }
  fault_context (ctx);
  for (size_t i = 0; i < harnesses.size (); ++i) {
    BusHarness & c = *harnesses[i];
    Image img = random_image (rng, 320, 240);
    fail_unless_equals_int (gst_harness_push (c.h, buffer_from_image (img)),
        GST_FLOW_ERROR);
    const std::string error = c.first_error ();
    fail_unless (error.find ("CUDA") != std::string::npos ||
        error.find ("cuda") != std::string::npos, "%s: %s",
        kElements[i].factory, error.c_str ());
    gst_element_set_state (c.h->element, GST_STATE_NULL);
  }
  harnesses.clear ();

  /* A restart that is offered the lost context again (the application's
   * GstContext) must not run in it: the element continues in a new context
   * and says so, or, where the driver refuses new contexts after the fault
   * (as it does in this process after a trap), fails to start with an
   * error that says why. */
  for (const ElementCase & e : kElements) {
    GstElement *el = gst_parse_launch (launch_of (e).c_str (), nullptr);
    GstBus *bus = gst_bus_new ();
    gst_element_set_bus (el, bus);
    share_cuda_context (el, ctx);
    const bool started = gst_element_set_state (el, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE;
    std::string said;
    while (GstMessage * m = gst_bus_pop (bus)) {
      if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR ||
          GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING) {
        GError *err = nullptr;
        gchar *debug = nullptr;
        if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR)
          gst_message_parse_error (m, &err, &debug);
        else
          gst_message_parse_warning (m, &err, &debug);
        said += std::string (err->message) + " | " + (debug ? debug : "") + "\n";
        g_error_free (err);
        g_free (debug);
      }
      gst_message_unref (m);
    }
    if (started) {
      fail_unless (said.find ("continues in a new one") != std::string::npos,
          "%s started in the lost context: %s", e.factory, said.c_str ());
      GstHarness *h = gst_harness_new_with_element (el, "sink", "src");
      gst_harness_set_src_caps_str (h, gray_caps (320, 240).c_str ());
      Image img = random_image (rng, 320, 240);
      assert_luma_filtered (e, push_pull (h, img), img, "after a fault");
      gst_harness_teardown (h);
    } else {
      fail_unless (said.find ("unusable after an earlier fault") !=
          std::string::npos, "%s: the error does not say why: %s", e.factory,
          said.c_str ());
    }
    gst_element_set_state (el, GST_STATE_NULL);
    gst_object_unref (el);
    release_bus (bus);
  }
  gst_object_unref (ctx);
}
GST_END_TEST;
#endif
#endif


static Suite *
cudafiltersbase_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("cudafiltersbase"));
  TCase *input = tcase_create ("input");
  tcase_set_timeout (input, 300);
  suite_add_tcase (s, input);
  tcase_add_test (input, test_short_buffers_are_errors);
  tcase_add_test (input, test_video_meta_strides_and_offsets);
  tcase_add_test (input, test_video_meta_larger_than_buffer_is_an_error);
  tcase_add_test (input, test_video_meta_plane_past_the_buffer_is_named);
  tcase_add_test (input, test_video_meta_with_padding_rows);
  tcase_add_test (input, test_tiny_frames);
#if !TEST_GPU
  tcase_add_test (input, test_output_allocated_as_downstream_asks);
#endif
  tcase_add_test (input, test_unsupported_caps_are_refused);
#ifdef HAVE_GST_CUDA
  tcase_add_test (input, test_odd_height_nv21_in_cuda_memory);
#endif
  tcase_add_test (input, test_format_and_size_changes_mid_stream);
#if !TEST_GPU
  tcase_add_test (input, test_plugin_says_where_it_comes_from);
  tcase_add_test (input, test_properties);
  tcase_add_test (input, test_out_of_range_properties_are_refused);
#endif

  TCase *stream = tcase_create ("stream");
  tcase_set_timeout (stream, 300);
  suite_add_tcase (s, stream);
  tcase_add_test (stream, test_history_restarts);
  tcase_add_test (stream, test_segment_restarts_at_its_first_frame);
  tcase_add_test (stream, test_same_caps_keep_the_window);
  tcase_add_test (stream, test_qos_as_set);
  tcase_add_test (stream, test_latency_changes_are_posted);
  tcase_add_test (stream, test_held_frames_failing_downstream_are_errors);
  tcase_add_test (stream, test_eos_goes_on_after_downstream_ended);
  tcase_add_test (stream, test_interlaced_frames);
  tcase_add_test (stream, test_events_keep_their_place_behind_held_frames);
  tcase_add_test (stream, test_start_properties_refused_while_running);
  tcase_add_test (stream, test_unused_chroma_strength_is_reported);
  tcase_add_test (stream, test_no_output_buffer_is_an_error);
  tcase_add_test (stream, test_messages_every_frame);
  tcase_add_test (stream, test_message_interval);
#if TEST_GPU
  tcase_add_test (stream, test_cuda_memory_smoothing_and_messages);
#endif

  /* Faults last: the mid-stream fault leaves one CUDA context lost. */
  TCase *faults = tcase_create ("faults");
  tcase_set_timeout (faults, 300);
  suite_add_tcase (s, faults);
  tcase_add_test (faults, test_backend_auto);
  tcase_add_test (faults, test_backend_cuda);
#if TEST_GPU
  tcase_add_checked_fixture (faults, nullptr, release_hog);
  tcase_add_test (faults, test_out_of_device_memory_then_restart);
#ifdef HAVE_GST_CUDA
  tcase_add_test (faults, test_device_fault_mid_stream_is_an_error);
#endif
#endif
  return s;
}

int
main (int argc, char **argv)
{
  return run_suite (argc, argv, cudafiltersbase_suite,
      TEST_SUITE_NAME ("cudafiltersbase"));
}
