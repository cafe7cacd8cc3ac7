/* cudanlm on colour and on sequences of frames: YUV frames with noisy
 * chroma, the definition over several frames and channels (brute force),
 * the engine's own result for a window of frames, and sequences of
 * timestamped buffers through a harness. */
#pragma once

#include "nlm_reference.h"

#include <cudafilters/frame_planes.h>
#include <cudafilters/nlm_cpu.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace test {

/* The definition of non-local means over `frames` (frame, then channel:
 * each frame's channels of one size), denoising frames[center]: every
 * offset in every frame, the patch distance a mean over the patch and the
 * channels, w = exp(-max(d2 / hc^2 - 2 sigma^2 / h^2, 0)) with hc the
 * strength of these channels and h the luma strength. Double precision,
 * borders mirrored; 8-bit levels. */
inline std::vector<Image>
reference_nlm_frames (const std::vector<std::vector<Image>> & frames,
    int center, const NlmSettings & s, double hc)
{
  const int channels = int (frames[center].size ());
  const Image & shape = frames[center][0];
  const int w = shape.width, hgt = shape.height;
  const int rp = s.patch / 2, rs = s.search / 2;
  const ReferencePatch patch (s);
  const std::vector<double> & g = patch.g;
  const double norm = patch.norm;
  const double allowance = 2 * s.sigma * s.sigma / (s.h * s.h);
  auto px = [&](int f, int c, int x, int y) {
    return double (frames[f][c].at (mirror (x, w), mirror (y, hgt)));
  };

  std::vector<Image> out (channels, Image (w, hgt));
  for (int y = 0; y < hgt; ++y)
    for (int x = 0; x < w; ++x) {
      double sum_w = 0, sum_v[2] = {0, 0};
      for (size_t f = 0; f < frames.size (); ++f)
        for (int dy = -rs; dy <= rs; ++dy)
          for (int dx = -rs; dx <= rs; ++dx) {
            /* The search window is the disk of radius rs. */
            if (dx * dx + dy * dy > rs * rs)
              continue;
            double d2 = 0;
            for (int ky = -rp; ky <= rp; ++ky)
              for (int kx = -rp; kx <= rp; ++kx)
                for (int c = 0; c < channels; ++c) {
                  const double diff = px (center, c, x + kx, y + ky) -
                      px (int (f), c, x + dx + kx, y + dy + ky);
                  d2 += g[ky + rp] * g[kx + rp] * diff * diff;
                }
            d2 /= norm * channels;
            const double wt = std::exp (-std::max (d2 / (hc * hc) - allowance,
                    0.0));
            sum_w += wt;
            for (int c = 0; c < channels; ++c)
              sum_v[c] += wt * px (int (f), c, x + dx, y + dy);
          }
      for (int c = 0; c < channels; ++c)
        out[c].at (x, y) = uint8_t (std::clamp (std::lround (sum_v[c] /
                    sum_w), 0L, 255L));
    }
  return out;
}

/* Component `comp` of a tight PlanarFrame: where it starts, and samples
 * apart. Interleaved U and V lie one sample apart (GStreamer 1.22's table
 * has P010_10LE's V one byte after U; see component_data in
 * gstcudafiltersbase.cpp). */
inline cudafilters::ConstPlane
component_of (const PlanarFrame & f, guint comp)
{
  const GstVideoInfo & info = f.info;
  const guint plane = GST_VIDEO_INFO_COMP_PLANE (&info, comp);
  const int bytes = GST_VIDEO_INFO_COMP_DEPTH (&info, comp) > 8 ? 2 : 1;
  cudafilters::SampleLayout l;
  l.bytes = bytes;
  l.bits = GST_VIDEO_INFO_COMP_DEPTH (&info, comp);
  l.shift = GST_VIDEO_FORMAT_INFO_SHIFT (info.finfo, comp);
  size_t offset = GST_VIDEO_INFO_COMP_POFFSET (&info, comp);
  if (comp > 0 && GST_VIDEO_INFO_COMP_PLANE (&info, 1) ==
      GST_VIDEO_INFO_COMP_PLANE (&info, 2))
    offset = GST_VIDEO_INFO_COMP_POFFSET (&info, comp) >
        GST_VIDEO_INFO_COMP_POFFSET (&info, 3 - comp) ? bytes : 0;
  return cudafilters::ConstPlane (f.planes[plane].pixels.data () + offset,
      f.planes[plane].width, GST_VIDEO_INFO_COMP_WIDTH (&info, comp),
      GST_VIDEO_INFO_COMP_HEIGHT (&info, comp), l);
}

/* The engine's view of a tight PlanarFrame. */
inline cudafilters::FramePlanes
planes_of (const PlanarFrame & f)
{
  cudafilters::FramePlanes p;
  p.luma = component_of (f, 0);
  if (GST_VIDEO_INFO_N_COMPONENTS (&f.info) >= 3) {
    p.u = component_of (f, 1);
    p.v = component_of (f, 2);
    p.chroma_step = GST_VIDEO_INFO_COMP_PSTRIDE (&f.info, 1) / p.u.samples.bytes;
  }
  return p;
}

inline cudafilters::FramePlanesOut
planes_out_of (PlanarFrame & f)
{
  return cudafilters::writable (planes_of (f));
}

/* The engine's result for frames[first, last] denoising frames[center]:
 * what the element must output for that frame on the CPU, bit for bit. */
inline PlanarFrame
engine_nlm (const std::vector<PlanarFrame> & frames, int first, int last,
    int center, const NlmSettings & s)
{
  std::vector<cudafilters::FramePlanes> window;
  for (int i = first; i <= last; ++i)
    window.push_back (planes_of (frames[i]));
  PlanarFrame out = frames[center];
  cudafilters::NlmCpu nlm;
  nlm.set_params (s.params ());
  nlm.process_window (window.data (), int (window.size ()), center - first,
      planes_out_of (out));
  return out;
}

/* A YUV frame of `fmt` (8-bit): luma a noisy step, U a noisy step in the
 * other direction, V noisy around 128. */
inline PlanarFrame
noisy_yuv_frame (std::mt19937 & rng, GstVideoFormat fmt, int w, int h,
    double sigma)
{
  PlanarFrame f = frame_with_luma (rng, fmt, noisy_step_image (rng, w, h,
          sigma));
  std::normal_distribution<double> noise (0.0, sigma);
  const GstVideoInfo & info = f.info;
  for (guint comp = 1; comp < GST_VIDEO_INFO_N_COMPONENTS (&info); ++comp) {
    const cudafilters::ConstPlane c = component_of (f, comp);
    const int step = GST_VIDEO_INFO_COMP_PSTRIDE (&info, comp);
    for (int y = 0; y < c.height; ++y)
      for (int x = 0; x < c.width; ++x) {
        const double base = comp == 1 ? (y < c.height / 2 ? 90 : 170) : 128;
        const_cast<uint8_t *> (c.data)[size_t (y) * c.stride + size_t (x) *
            step] = uint8_t (std::clamp (std::lround (base + noise (rng)), 0L,
                255L));
      }
  }
  return f;
}

/* Component `comp` as levels (word >> shift, or bytes), at any depth:
 * an Image16, or an Image of 8-bit frames. */
template <typename Img = Image16>
inline Img
component_levels (const PlanarFrame & f, guint comp)
{
  using Sample = std::decay_t<decltype (Img ().pixels[0])>;
  const cudafilters::ConstPlane c = component_of (f, comp);
  const int step = GST_VIDEO_INFO_COMP_PSTRIDE (&f.info, comp);
  Img img (c.width, c.height);
  for (int y = 0; y < c.height; ++y)
    for (int x = 0; x < c.width; ++x) {
      const uint8_t *at = c.data + size_t (y) * c.stride + size_t (x) * step;
      img.at (x, y) = Sample (c.samples.bytes == 1 ? at[0] :
          (at[0] | at[1] << 8) >> c.samples.shift);
    }
  return img;
}

inline Image
component_image (const PlanarFrame & f, guint comp)
{
  return component_levels<Image> (f, comp);
}

/* Every component of `got` within `tolerance` levels of `want`'s. */
inline void
assert_frames_close (const PlanarFrame & got, const PlanarFrame & want,
    int tolerance, const std::string & what)
{
  for (guint comp = 0; comp < GST_VIDEO_INFO_N_COMPONENTS (&want.info); ++comp)
    assert_images_close (component_levels (got, comp), component_levels (want,
            comp), tolerance, (what + " component " + std::to_string (comp)).c_str ());
}

/* A buffer of a sequence, with the metadata it carries. */
inline GstBuffer *
sequence_buffer (const PlanarFrame & f, int index, bool discont = false)
{
  GstBuffer *buf = buffer_from_frame (f);
  GST_BUFFER_PTS (buf) = index * GST_SECOND / 30;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  GST_BUFFER_OFFSET (buf) = index;
  GST_BUFFER_OFFSET_END (buf) = index + 1;
  if (discont)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
  if (index % 3 == 1)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  return buf;
}

/* The output buffer carries the metadata of the input buffer `index`. */
inline void
assert_metadata_of (GstBuffer * out, int index, bool discont,
    const std::string & what)
{
  fail_unless_equals_uint64 (GST_BUFFER_PTS (out), index * GST_SECOND / 30);
  fail_unless_equals_uint64 (GST_BUFFER_DURATION (out), GST_SECOND / 30);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), index);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET_END (out), index + 1);
  fail_unless (GST_BUFFER_FLAG_IS_SET (out, GST_BUFFER_FLAG_DELTA_UNIT) ==
      (index % 3 == 1), "%s: DELTA_UNIT of frame %d", what.c_str (), index);
  if (discont)
    fail_unless (GST_BUFFER_FLAG_IS_SET (out, GST_BUFFER_FLAG_DISCONT),
        "%s: frame %d lost its DISCONT flag", what.c_str (), index);
}

/* Every buffer the harness has output so far, as frames of `info`. */
inline std::vector<PlanarFrame>
pull_all (GstHarness * h, const GstVideoInfo & info,
    std::vector<GstBuffer *> *buffers = nullptr)
{
  std::vector<PlanarFrame> out;
  while (gst_harness_buffers_in_queue (h) > 0) {
    GstBuffer *b = gst_harness_pull (h);
    out.push_back (frame_from_buffer (b, info));
    if (buffers)
      buffers->push_back (b);
    else
      gst_buffer_unref (b);
  }
  return out;
}

/* A stream through cudanlm: `frames` pushed in order (buffer i carries the
 * metadata of sequence_buffer (frame i, i)), with one break before frame
 * `break_at`: a flush (frames held then are dropped), a DISCONT flag on
 * that frame, or new caps (the frames from then on have another size). The
 * stream ends with EOS. */
enum class Break { kNone, kFlush, kDiscont, kCaps };

struct Sequence {
  std::vector<PlanarFrame> frames;
  Break kind = Break::kNone;
  int break_at = 0;
};

/* `count` frames of `fmt` made by make (fmt, width, height, index), w x h,
 * and from `break_at` on (for Break::kCaps) w2 x h2. */
template < typename MakeFrame > inline Sequence
sequence_of (MakeFrame make, GstVideoFormat fmt, int w, int h, int count,
    Break kind = Break::kNone, int break_at = 0, int w2 = 0, int h2 = 0)
{
  Sequence seq;
  seq.kind = kind;
  seq.break_at = break_at;
  for (int i = 0; i < count; ++i) {
    const bool second = kind == Break::kCaps && i >= break_at;
    seq.frames.push_back (make (fmt, second ? w2 : w, second ? h2 : h, i));
  }
  return seq;
}

/* Noisy frames (sigma 14). */
inline Sequence
make_sequence (std::mt19937 & rng, GstVideoFormat fmt, int w, int h, int count,
    Break kind = Break::kNone, int break_at = 0, int w2 = 0, int h2 = 0)
{
  return sequence_of ([&rng](GstVideoFormat f, int fw, int fh, int) {
        return noisy_yuv_frame (rng, f, fw, fh, 14.0);
      }, fmt, w, h, count, kind, break_at, w2, h2);
}

/* What comes out, and when. */
struct SequenceOutput {
  std::vector<GstBuffer *> buffers;
  std::vector<PlanarFrame> frames;
  /* Outputs so far after each frame was pushed. */
  std::vector<int> after_push;

  ~SequenceOutput () {
    for (GstBuffer *b : buffers)
      gst_buffer_unref (b);
  }
};

inline void
set_caps_of (GstHarness * h, const PlanarFrame & f)
{
  gst_harness_set_src_caps_str (h, video_caps (GST_VIDEO_INFO_FORMAT (&f.info),
          GST_VIDEO_INFO_WIDTH (&f.info), GST_VIDEO_INFO_HEIGHT (&f.info)).c_str ());
}

/* `seq` through `launch`, with `prepare` (if any) called on the harness
 * before the first caps. */
inline void
run_sequence (const std::string & launch, const Sequence & seq,
    SequenceOutput & out,
    const std::function<void (GstHarness *)> & prepare = nullptr)
{
  GstHarness *h = new_harness (launch);
  if (prepare)
    prepare (h);
  set_caps_of (h, seq.frames[0]);
  const GstVideoInfo *info = &seq.frames[0].info;
  for (size_t i = 0; i < seq.frames.size (); ++i) {
    const bool at_break = seq.kind != Break::kNone && int (i) == seq.break_at;
    if (at_break && seq.kind == Break::kFlush) {
      auto before = pull_all (h, *info, &out.buffers);
      out.frames.insert (out.frames.end (), before.begin (), before.end ());
      fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
      fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
      GstSegment segment;
      gst_segment_init (&segment, GST_FORMAT_TIME);
      fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
    }
    if (at_break && seq.kind == Break::kCaps) {
      auto before = pull_all (h, *info, &out.buffers);
      out.frames.insert (out.frames.end (), before.begin (), before.end ());
      set_caps_of (h, seq.frames[i]);
      /* The frames held leave with the caps they came in. */
      auto drained = pull_all (h, *info, &out.buffers);
      out.frames.insert (out.frames.end (), drained.begin (), drained.end ());
      info = &seq.frames[i].info;
    }
    fail_unless_equals_int (gst_harness_push (h, sequence_buffer (seq.frames[i],
                int (i), i == 0 || (at_break && seq.kind == Break::kDiscont))),
        GST_FLOW_OK);
    out.after_push.push_back (int (out.frames.size ()) +
        int (gst_harness_buffers_in_queue (h)));
    auto now = pull_all (h, *info, &out.buffers);
    out.frames.insert (out.frames.end (), now.begin (), now.end ());
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  auto last = pull_all (h, *info, &out.buffers);
  out.frames.insert (out.frames.end (), last.begin (), last.end ());
  gst_harness_teardown (h);
}

/* The frames that must come out of `seq` with `radius`, in order: the input
 * index of each, and the window of frames it is denoised from. */
struct ExpectedOutput {
  int index;
  int first;
  int last;
};

inline std::vector<ExpectedOutput>
expected_outputs (const Sequence & seq, int radius)
{
  std::vector<ExpectedOutput> out;
  const int n = int (seq.frames.size ());
  auto segment = [&](int begin, int end, int keep_until) {
    for (int i = begin; i < end && i <= keep_until; ++i)
      out.push_back ({i, std::max (begin, i - radius), std::min (end - 1,
                  i + radius)});
  };
  if (seq.kind == Break::kNone) {
    segment (0, n, n);
  } else {
    /* A flush drops the frames not yet out: those within `radius` of it. */
    const int keep = seq.kind == Break::kFlush ? seq.break_at - 1 - radius : n;
    segment (0, seq.break_at, keep);
    segment (seq.break_at, n, n);
  }
  return out;
}

/* Outputs so far after frame i was pushed. */
inline int
expected_after_push (const Sequence & seq, int radius, int i)
{
  if (seq.kind == Break::kNone || i < seq.break_at)
    return std::max (0, i + 1 - radius);
  const int before = seq.kind == Break::kFlush ?
      std::max (0, seq.break_at - radius) : seq.break_at;
  return before + std::max (0, i - seq.break_at + 1 - radius);
}

/* Counts, order and metadata of the outputs of `seq` through cudanlm with
 * `s` (s.radius frames around each). */
inline void
assert_sequence_shape (const SequenceOutput & got, const Sequence & seq,
    const NlmSettings & s, const std::string & what)
{
  const auto want = expected_outputs (seq, s.radius);
  fail_unless_equals_int (int (got.frames.size ()), int (want.size ()));
  for (size_t k = 0; k < want.size (); ++k) {
    const int i = want[k].index;
    assert_metadata_of (got.buffers[k], i, i == 0 || (seq.kind ==
            Break::kDiscont && i == seq.break_at), what);
    fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&got.frames[k].info),
        GST_VIDEO_INFO_WIDTH (&seq.frames[i].info));
  }
  for (size_t i = 0; i < seq.frames.size (); ++i)
    fail_unless_equals_int (got.after_push[i], expected_after_push (seq,
            s.radius, int (i)));
}

}  // namespace test
