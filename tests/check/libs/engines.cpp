/* The CPU paths below the elements: every instruction-set variant of the
 * NLM and sharpening filters against the others and the references,
 * OpenCV's Gaussian taps, the shared histogram and table look-up against
 * plain loops, and the CPU runners.
 * (Eight pipelines at once on the shared thread pool: pipelines/concurrent.cpp.) */
#include <cudafilters/cpu_frame_runner.h>
#include <cudafilters/cpu_window_runner.h>
#include "frame_window.h"
#include <cudafilters/histeq_cpu.h>
#include "cpu_histogram.h"
#include <cudafilters/clahe_cpu.h>
#include "clahe_geometry.h"
#include <cudafilters/nlm_cpu.h>
#include <cudafilters/sharpen_cpu.h>
#include "camera_noise.h"
#include "cpu_isa.h"
#include "nlm_reference.h"
#include "frame_difference.h"
#include "noise_estimate.h"
#include "poison.h"
#include "sharpen_reference.h"
#include "bad_planes.h"
#include "sharpen_taps.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

using namespace test;

namespace {

/* A host plane with `pad` poisoned bytes after each row, so reads and
 * writes outside the width show. */
struct PaddedPlane {
  int width, height, stride;
  std::vector<uint8_t> bytes;

  PaddedPlane (int w, int h, int pad, uint8_t fill)
    : width (w), height (h), stride (w + pad), bytes (size_t (w + pad) * h, fill) {}
  PaddedPlane (const Image & img, int pad, uint8_t poison)
    : PaddedPlane (img.width, img.height, pad, poison) {
    for (int y = 0; y < height; ++y)
      std::copy_n (&img.pixels[size_t (y) * width], width, &bytes[size_t (y) * stride]);
  }
  cudafilters::Plane plane () {
    return cudafilters::Plane {bytes.data (), size_t (stride), width, height};
  }
  cudafilters::ConstPlane cplane () const {
    return cudafilters::ConstPlane (bytes.data (), size_t (stride), width, height);
  }
  Image image () const {
    Image img (width, height);
    for (int y = 0; y < height; ++y)
      std::copy_n (&bytes[size_t (y) * stride], width, &img.pixels[size_t (y) * width]);
    return img;
  }
  void assert_padding (uint8_t poison, const char *what) const {
    for (int y = 0; y < height; ++y)
      for (int x = width; x < stride; ++x)
        fail_unless (bytes[size_t (y) * stride + x] == poison,
            "%s: byte %d after row %d was written", what, x - width, y);
  }
};

Image
nlm_with (const Image & img, const NlmSettings & s, std::string_view isa)
{
  const PaddedPlane src (img, 5, 0xAB);
  PaddedPlane dst (img.width, img.height, 5, 0xCD);
  cudafilters::nlm_cpu_with (src.cplane (), dst.plane (), s.params (), isa);
  dst.assert_padding (0xCD, "nlm_cpu");
  return dst.image ();
}

}  // namespace

/* Variants with FMA do the same operations in the same order: identical.
 * A variant without (plain x86-64) rounds twice: within a level. All stay
 * within a level of the definition. Frames span several tiles and end
 * mid-tile. */
GST_START_TEST (test_nlm_instruction_sets)
{
  const auto sets = cudafilters::cpu_instruction_sets ();
  GST_INFO ("instruction sets: %zu, default %s", sets.size (),
      std::string (cudafilters::cpu_instruction_set ()).c_str ());
  std::mt19937 rng (5);
  /* Two tiles across (128 columns each) and two down (16 rows), ending
   * mid-tile both ways, under the memory checkers. */
  const Image large = quick () ? noisy_step_image (rng, 137, 19, 15.0) :
      noisy_step_image (rng, 301, 157, 15.0);
  const Image small = quick () ? noisy_step_image (rng, 23, 17, 15.0) :
      noisy_step_image (rng, 41, 29, 15.0);
  for (int si = 0; si < int (G_N_ELEMENTS (kNlmParamSets)); ++si) {
    const NlmSettings & s = kNlmParamSets[si];
    /* Under the memory checkers the large frame with half the settings. */
    const bool with_large = !quick () || in_grid_sample (si, 0, 2);
    const Image want = reference_nlm (small, s);
    const Image fused_large = with_large ? nlm_with (large, s,
        cudafilters::cpu_instruction_set ()) : Image ();
    for (const auto isa : sets) {
      const std::string what = std::string (isa) + " " + s.launch ("cpu");
      assert_images_close (nlm_with (small, s, isa), want, 1, what.c_str ());
      if (!with_large)
        continue;
      const Image got = nlm_with (large, s, isa);
      const bool fused = isa != "baseline" || sets.size () == 1;
      if (fused)
        assert_images_equal (got, fused_large, what.c_str ());
      else
        assert_images_close (got, fused_large, 1, what.c_str ());
    }
  }
}
GST_END_TEST;

/* NlmCpu::process_window refuses windows it cannot read: none, more frames than
 * the largest radius gives, a centre outside the window, frames of another
 * size, chroma on some frames only, and chroma of another size. */
GST_START_TEST (test_nlm_frames_refuse_bad_windows)
{
  Image a (16, 8), b (16, 9), out (16, 8);
  cudafilters::FramePlanes fa, fb;
  fa.luma = cudafilters::ConstPlane (a.pixels.data (), 16, 16, 8);
  fb.luma = cudafilters::ConstPlane (b.pixels.data (), 16, 16, 9);
  cudafilters::FramePlanesOut dst;
  dst.luma = cudafilters::Plane (out.pixels.data (), 16, 16, 8);
  const cudafilters::NlmParams p = NlmSettings {10, 3, 5}.params ();
  std::vector<cudafilters::FramePlanes> eight (8, fa);
  cudafilters::NlmCpu nlm;
  nlm.set_params (p);
  auto refused = [&](const cudafilters::FramePlanes * w, int count, int center) {
    try {
      nlm.process_window (w, count, center, dst);
    } catch (const std::invalid_argument &) {
      return true;
    }
    return false;
  };
  fail_unless (refused (eight.data (), 0, 0), "empty window");
  fail_unless (refused (eight.data (), 8, 3), "8 frames");
  fail_unless (refused (eight.data (), 3, 3), "centre past the window");
  fail_unless (refused (eight.data (), 3, -1), "negative centre");
  const cudafilters::FramePlanes sizes[] = { fa, fb };
  fail_unless (refused (sizes, 2, 0), "frames of two sizes");
  cudafilters::FramePlanes coloured = fa;
  coloured.u = coloured.v = cudafilters::ConstPlane (a.pixels.data (), 16, 8, 4);
  const cudafilters::FramePlanes mixed[] = { fa, coloured };
  fail_unless (refused (mixed, 2, 0), "chroma on one frame only");
  cudafilters::FramePlanes narrow = coloured;
  narrow.u = narrow.v = cudafilters::ConstPlane (a.pixels.data (), 16, 4, 4);
  const cudafilters::FramePlanes chroma_sizes[] = { coloured, narrow };
  dst.u = dst.v = cudafilters::Plane (out.pixels.data (), 16, 8, 4);
  fail_unless (refused (chroma_sizes, 2, 0), "chroma of two sizes");
  fail_if (refused (chroma_sizes, 1, 0), "one frame with chroma");
  std::vector<uint8_t> small (16, 0);
  cudafilters::FramePlanesOut short_v = dst;
  short_v.v = cudafilters::Plane (small.data (), 4, 4, 4);
  auto refused_out = [&](const cudafilters::FramePlanes & f,
      const cudafilters::FramePlanesOut & o) {
    try {
      nlm.process_window (&f, 1, 0, o);
    } catch (const std::invalid_argument &) {
      return true;
    }
    return false;
  };
  fail_unless (refused_out (coloured, short_v), "an output V plane smaller than U");
  cudafilters::FramePlanes short_src_v = coloured;
  short_src_v.v = cudafilters::ConstPlane (small.data (), 4, 4, 4);
  fail_unless (refused_out (short_src_v, dst), "a V plane smaller than U");
  for (int step : {0, 3}) {
    cudafilters::FramePlanes f = coloured;
    cudafilters::FramePlanesOut o = dst;
    f.chroma_step = o.chroma_step = step;
    fail_unless (refused_out (f, o), "chroma samples %d apart", step);
  }
  dst.u = dst.v = cudafilters::Plane ();
  fail_if (refused (eight.data (), 7, 6), "7 frames, the last denoised");
}
GST_END_TEST;

/* Every CPU filter, and the runner in front of them, refuses planes that do
 * not describe memory it can read and write, before it touches a sample:
 * planes of other sizes or layouts, no data, no samples, rows longer than
 * their stride, one-byte samples of other than 8 bits, an invalid layout,
 * and an output over the source. Neither plane is written. */
GST_START_TEST (test_engines_refuse_bad_planes)
{
  using cudafilters::ConstPlane;
  using cudafilters::Plane;
  const int w = 24, h = 16, stride = 64;
  struct Filter {
    const char *what;
    void (*run) (ConstPlane, Plane);
  };
  const Filter filters[] = {
    {"HistEqCpu", [](ConstPlane s, Plane d) { cudafilters::HistEqCpu ().process (s, d); }},
    {"equalize_hist_cpu", [](ConstPlane s, Plane d) {
        cudafilters::equalize_hist_cpu (s, d); }},
    {"ClaheCpu", [](ConstPlane s, Plane d) { cudafilters::ClaheCpu ().process (s, d); }},
    {"SharpenCpu", [](ConstPlane s, Plane d) { cudafilters::SharpenCpu ().process (s, d); }},
    {"NlmCpu", [](ConstPlane s, Plane d) {
        cudafilters::NlmCpu nlm;
        nlm.set_params (NlmSettings {10, 3, 5}.params ());
        nlm.process (s, d); }},
    {"CpuFrameRunner, poisoning", [](ConstPlane s, Plane d) {
        cudafilters::HistEqCpu equalize;
        cudafilters::CpuFrameRunner (cudafilters::kPoisoned).process (equalize, s, d); }},
  };
  std::vector<uint8_t> src_bytes (size_t (stride) * h * 2), dst_bytes (src_bytes.size ());
  for (const Filter & f : filters) {
    /* The planes as given work. */
    std::fill (src_bytes.begin (), src_bytes.end (), 0x5A);
    f.run (ConstPlane (src_bytes.data (), stride, w, h),
        Plane (dst_bytes.data (), stride, w, h));
    for (const test::BadPlanes & sp : test::kBadPlanes) {
      std::fill (src_bytes.begin (), src_bytes.end (), 0x5A);
      std::fill (dst_bytes.begin (), dst_bytes.end (), 0xA5);
      ConstPlane src (src_bytes.data (), stride, w, h);
      Plane dst (dst_bytes.data (), stride, w, h);
      sp.spoil (src, dst);
      bool refused = false;
      try {
        f.run (src, dst);
      } catch (const std::invalid_argument &) {
        refused = true;
      }
      fail_unless (refused, "%s took %s", f.what, sp.what);
      fail_unless (std::all_of (src_bytes.begin (), src_bytes.end (),
              [](uint8_t v) { return v == 0x5A; }), "%s wrote the source given %s",
          f.what, sp.what);
      fail_unless (std::all_of (dst_bytes.begin (), dst_bytes.end (),
              [](uint8_t v) { return v == 0xA5; }), "%s wrote the output given %s",
          f.what, sp.what);
    }
  }
}
GST_END_TEST;

/* Parameters that are not valid (the *_params_error functions say why) are
 * refused with that reason, and the filter keeps the ones it had. */
GST_START_TEST (test_engines_refuse_bad_params)
{
  std::mt19937 rng (31);
  const Image img = random_image (rng, 40, 24);
  auto filtered = [&](cudafilters::CpuPlaneFilter & f) {
    Image out (img.width, img.height);
    f.process (cudafilters::ConstPlane (img.pixels.data (), img.width, img.width,
            img.height), cudafilters::Plane (out.pixels.data (), out.width, out.width,
            out.height));
    return out;
  };
  /* A filter set to `good`, refused `bad`, filters as a new one set to `good`. */
  auto check = [&](auto make, const auto & good, const auto & bad, const char *what) {
    auto kept = make ();
    kept.set_params (good);
    std::string why;
    try {
      kept.set_params (bad);
    } catch (const std::invalid_argument & e) {
      why = e.what ();
    }
    fail_if (why.empty (), "%s was taken", what);
    auto fresh = make ();
    fresh.set_params (good);
    assert_images_equal (filtered (kept), filtered (fresh), what);
  };
  using cudafilters::HistEqParams;
  using cudafilters::ClaheParams;
  using cudafilters::SharpenParams;
  auto histeq = [] { return cudafilters::HistEqCpu (); };
  auto clahe = [] { return cudafilters::ClaheCpu (); };
  auto sharpen = [] { return cudafilters::SharpenCpu (); };
  auto nlm = [] { return cudafilters::NlmCpu (); };
  HistEqParams smooth;
  smooth.temporal_smoothing = 2;
  check (histeq, HistEqParams {}, smooth, "histeq temporal smoothing 2");
  ClaheParams no_tiles {2.0, 0, 4};
  check (clahe, ClaheParams {3.0, 4, 4}, no_tiles, "clahe tiles-x 0");
  ClaheParams nan_clip {std::nan (""), 4, 4};
  check (clahe, ClaheParams {3.0, 4, 4}, nan_clip, "clahe clip limit NaN");
  SharpenParams nan_radius;
  nan_radius.radius = std::nan ("");
  check (sharpen, SharpenParams {}, nan_radius, "sharpen radius NaN");
  SharpenParams wide;
  wide.radius = 40;
  check (sharpen, SharpenParams {}, wide, "sharpen radius 40");
  cudafilters::NlmParams big_patch = NlmSettings {10, 3, 5}.params ();
  big_patch.patch_size = 17;
  big_patch.search_size = 21;
  check (nlm, NlmSettings {10, 3, 5}.params (), big_patch, "nlm patch-size 17");
  cudafilters::NlmParams nan_h = NlmSettings {10, 3, 5}.params ();
  nan_h.h = std::nan ("");
  check (nlm, NlmSettings {10, 3, 5}.params (), nan_h, "nlm strength NaN");
}
GST_END_TEST;

/* A window runner asked for a frame that is not there says so, and stays
 * usable; one made without reset() windows single frames, as reset(0). */
GST_START_TEST (test_window_runner_refuses_missing_frames)
{
  struct Copy : cudafilters::CpuWindowFilter {
    void process_window (const cudafilters::FramePlanes * w, int, int center,
        const cudafilters::FramePlanesOut & dst) override {
      std::copy_n (w[center].luma.data, dst.luma.width, dst.luma.data);
    }
  };
  const int w = 8;
  std::vector<uint8_t> in (w, 7), out (w, 0);
  cudafilters::FramePlanes frame;
  frame.luma = cudafilters::ConstPlane (in.data (), w, w, 1);
  cudafilters::FramePlanesOut dst;
  dst.luma = cudafilters::Plane (out.data (), w, w, 1);
  Copy copy;
  cudafilters::CpuWindowRunner runner;
  runner.push (frame);
  fail_unless (runner.ready (false), "a runner made without reset() windows one frame");
  runner.output (copy, dst);
  fail_unless_equals_int (out[0], 7);
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool refused = false;
    try {
      if (attempt == 0)
        runner.drop_next ();
      else
        runner.output (copy, dst);
    } catch (const std::logic_error &) {
      refused = true;
    }
    fail_unless (refused, "%s with no frame waiting was taken",
        attempt == 0 ? "drop_next" : "output");
  }
  runner.reset (1);
  for (uint8_t v : {1, 2, 3}) {
    std::fill (in.begin (), in.end (), v);
    runner.push (frame);
    if (runner.ready (false)) {
      runner.output (copy, dst);
      fail_unless_equals_int (out[0], v - 1);
    }
  }
  fail_unless (runner.ready (true));
  runner.output (copy, dst);
  fail_unless_equals_int (out[0], 3);
  fail_if (runner.waiting ());
}
GST_END_TEST;

/* CpuFrameRunner poisons the output first where its options ask for it (and
 * only there), runs the filter, and counts the levels of its input and
 * output. */
GST_START_TEST (test_cpu_frame_runner)
{
  struct Untouched : cudafilters::CpuPlaneFilter {
    void process (cudafilters::ConstPlane, cudafilters::Plane) override {}
  };
  std::mt19937 rng (8);
  const Image img = random_image (rng, 37, 11);
  PaddedPlane dst (img.width, img.height, 3, 0x11);
  cudafilters::CpuFrameRunner runner (cudafilters::kPoisoned);
  Untouched none;
  runner.process (none, PaddedPlane (img, 3, 0).cplane (), dst.plane ());
  for (uint8_t v : dst.image ().pixels)
    fail_unless_equals_int (v, cudafilters::kPoisonByte);
  dst.assert_padding (0x11, "poisoned output");
  PaddedPlane kept (img.width, img.height, 3, 0x11);
  cudafilters::CpuFrameRunner plain;
  plain.process (none, PaddedPlane (img, 3, 0).cplane (), kept.plane ());
  for (uint8_t v : kept.image ().pixels)
    fail_unless_equals_int (v, 0x11);

  cudafilters::HistEqCpu equalize;
  cudafilters::FrameLevels levels;
  runner.process (equalize, PaddedPlane (img, 3, 0).cplane (), dst.plane (), &levels);
  Image want (img.width, img.height);
  cudafilters::equalize_hist_cpu (PaddedPlane (img, 3, 0).cplane (),
      cudafilters::Plane {want.pixels.data (), size_t (want.width), want.width, want.height});
  assert_images_equal (dst.image (), want, "equalized through the runner");
  uint32_t in[cudafilters::kHistBins], out[cudafilters::kHistBins];
  cudafilters::count_levels_cpu (PaddedPlane (img, 3, 0).cplane (), in);
  cudafilters::count_levels_cpu (dst.cplane (), out);
  fail_unless (std::equal (in, in + cudafilters::kHistBins, levels.input), "input levels");
  fail_unless (std::equal (out, out + cudafilters::kHistBins, levels.output), "output levels");
}
GST_END_TEST;

/* CpuWindowRunner hands the filter the window FrameWindow gives, of the
 * frames pushed (copies: the caller's planes may change), poisons the output
 * first, counts the levels of the centre frame's luma and of the output, and
 * moves on also when the filter throws. A frame whose copy fails is not held. */
GST_START_TEST (test_cpu_window_runner)
{
  /* Writes the first luma sample of each frame of its window into the output
   * row 0, and checks the rest of the output is poisoned. */
  struct Recorder : cudafilters::CpuWindowFilter {
    bool fail = false;
    void process_window (const cudafilters::FramePlanes * w, int count,
        int center, const cudafilters::FramePlanesOut & dst) override {
      for (int y = 0; y < dst.luma.height; ++y)
        for (int x = 0; x < dst.luma.width; ++x)
          fail_unless_equals_int (dst.luma.data[size_t (y) * dst.luma.stride + x],
              cudafilters::kPoisonByte);
      if (fail)
        throw std::runtime_error ("failed");
      for (int x = 0; x < dst.luma.width; ++x)
        dst.luma.data[x] = x < count ? w[x].luma.data[0] : 0;
      dst.luma.data[dst.luma.width - 1] = uint8_t (center);
    }
  };
  const int w = 8, h = 2;
  std::vector<uint8_t> in (size_t (w) * h), out (size_t (w) * h);
  cudafilters::FramePlanes frame;
  frame.luma = cudafilters::ConstPlane (in.data (), w, w, h);
  cudafilters::FramePlanesOut dst;
  dst.luma = cudafilters::Plane (out.data (), w, w, h);
  cudafilters::CpuWindowRunner runner (cudafilters::kPoisoned);
  runner.reset (1);
  Recorder filter;
  auto push = [&](uint8_t first) {
    std::fill (in.begin (), in.end (), first);
    runner.push (frame);
    std::fill (in.begin (), in.end (), 0xEE);
  };
  push (10);
  fail_if (runner.ready (false), "one frame, radius 1");
  push (20);
  fail_unless (runner.ready (false));
  cudafilters::FrameLevels levels;
  runner.output (filter, dst, &levels);
  fail_unless_equals_int (out[0], 10);
  fail_unless_equals_int (out[1], 20);
  fail_unless_equals_int (out[w - 1], 0);
  uint32_t want[cudafilters::kHistBins];
  std::vector<uint8_t> centre (size_t (w) * h, 10);
  cudafilters::count_levels_cpu (cudafilters::ConstPlane (centre.data (), w, w, h), want);
  fail_unless (std::equal (want, want + cudafilters::kHistBins, levels.input), "input levels");
  cudafilters::count_levels_cpu (cudafilters::ConstPlane (out.data (), w, w, h), want);
  fail_unless (std::equal (want, want + cudafilters::kHistBins, levels.output), "output levels");

  /* A frame whose copy fails (chroma 3 samples apart) leaves the window as
   * it was. */
  cudafilters::FramePlanes bad = frame;
  bad.u = bad.v = cudafilters::ConstPlane (in.data (), w, w / 2, h / 2);
  bad.chroma_step = 3;
  bool threw = false;
  try {
    runner.push (bad);
  } catch (const std::invalid_argument &) {
    threw = true;
  }
  fail_unless (threw, "a frame of chroma 3 samples apart was taken");
  fail_if (runner.ready (false), "the failed frame counts");
  push (30);
  runner.output (filter, dst);
  fail_unless_equals_int (out[0], 10);
  fail_unless_equals_int (out[1], 20);
  fail_unless_equals_int (out[2], 30);
  fail_unless_equals_int (out[w - 1], 1);

  /* A filter that throws: the window moves on all the same. */
  filter.fail = true;
  fail_unless (runner.ready (true));
  threw = false;
  try {
    runner.output (filter, dst);
  } catch (const std::runtime_error &) {
    threw = true;
  }
  fail_unless (threw, "the filter's failure did not reach the caller");
  fail_if (runner.waiting (), "the failed frame still waits");
  push (40);
  runner.drop_next ();
  fail_if (runner.waiting (), "a dropped frame still waits");
}
GST_END_TEST;

/* count_plane and map_plane against plain loops: frames too small to split
 * and large enough to, widths that end mid-vector, padding after each row
 * that must be neither counted nor written, and mapping in place. */
/* A frame whose copy into its slot failed is forgotten: the windows of
 * later frames are those of a stream without it. */
GST_START_TEST (test_frame_window_drops_a_failed_frame)
{
  cudafilters::FrameWindow w;
  w.reset (1);
  const int a = w.push ();
  const int b = w.push ();
  const int failed = w.push ();
  w.drop_newest ();
  const int c = w.push ();
  fail_unless_equals_int (c, failed);
  /* Frame a: its window is a, b; frame b: a, b, c. */
  fail_unless (w.ready (false));
  const cudafilters::FrameWindow::Window of_a = w.next ();
  fail_unless_equals_int (of_a.count, 2);
  fail_unless_equals_int (of_a.slots[0], a);
  fail_unless_equals_int (of_a.slots[1], b);
  w.pop ();
  const cudafilters::FrameWindow::Window of_b = w.next ();
  fail_unless_equals_int (of_b.count, 3);
  fail_unless_equals_int (of_b.slots[2], c);
  w.pop ();
  /* Only c waits now; dropping it too leaves nothing to filter. */
  w.drop_newest ();
  fail_unless (!w.waiting ());
}
GST_END_TEST;

GST_START_TEST (test_histogram_and_mapping)
{
  std::mt19937 rng (6);
  uint8_t lut[256];
  for (int i = 0; i < 256; ++i)
    lut[i] = uint8_t ((i * 77 + 13) & 0xff);
  const int sizes[][2] = { {1, 1}, {7, 3}, {63, 5}, {65, 9}, {1000, 301},
    {1921, 1083}, {3840, 2160} };
  for (const auto & sz : sizes) {
    if (quick () && sz[0] > 1000)
      continue;
    const Image img = random_image (rng, sz[0], sz[1]);
    const PaddedPlane src (img, 13, 0xFF);
    uint32_t got[256], want[256] = {};
    for (uint8_t v : img.pixels)
      ++want[v];
    cudafilters::count_plane (src.cplane (), got);
    for (int b = 0; b < 256; ++b)
      fail_unless_equals_int (got[b], want[b]);

    Image mapped (img.width, img.height);
    for (size_t i = 0; i < img.pixels.size (); ++i)
      mapped.pixels[i] = lut[img.pixels[i]];
    PaddedPlane dst (img.width, img.height, 13, 0x5A);
    cudafilters::map_plane (src.cplane (), dst.plane (), lut);
    dst.assert_padding (0x5A, "map_plane");
    assert_images_equal (dst.image (), mapped, "map_plane");

    PaddedPlane in_place (img, 13, 0x5A);
    cudafilters::map_plane (in_place.cplane (), in_place.plane (), lut);
    in_place.assert_padding (0x5A, "map_plane in place");
    assert_images_equal (in_place.image (), mapped, "map_plane in place");
  }
}
GST_END_TEST;

/* OpenCV's clip value, int (clip-limit x tile area / levels), passes INT_MAX
 * on a large tile of a deep layout of few bits: one 4096 x 4096 tile of
 * 1-bit levels at clip-limit 256 makes 2^31. No bin can hold more than the
 * tile, so such a limit clips nothing: the geometry's clip is the tile's
 * area, and the output that of no clipping. */
GST_START_TEST (test_clahe_clip_beyond_int)
{
  const int w = 4096, h = 4096;
  const cudafilters::SampleLayout bit { 2, 1, 0 };
  const cudafilters::ClaheParams clip { 256.0, 1, 1 }, none { 0.0, 1, 1 };
  const cudafilters::ClaheGeometry g = cudafilters::clahe_geometry (w, h, clip, 2);
  fail_unless_equals_int (g.clip, g.tile_area);

  /* Three quarters of the samples at level 0: clipped to 1 pixel a bin, the
   * first level would map to 0 instead of 1. */
  std::vector<uint16_t> in (size_t (w) * h), clipped (in.size ()), plain (in.size ());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      in[size_t (y) * w + x] = uint16_t ((x + y) % 4 == 0);
  cudafilters::ClaheCpu a, b;
  a.set_params (clip);
  b.set_params (none);
  const size_t stride = 2 * size_t (w);
  const auto *src = reinterpret_cast<const uint8_t *> (in.data ());
  a.process (cudafilters::ConstPlane (src, stride, w, h, bit),
      cudafilters::Plane (reinterpret_cast<uint8_t *> (clipped.data ()), stride, w, h, bit));
  b.process (cudafilters::ConstPlane (src, stride, w, h, bit),
      cudafilters::Plane (reinterpret_cast<uint8_t *> (plain.data ()), stride, w, h, bit));
  fail_unless (clipped == plain, "clip-limit 256 on 1-bit levels clipped the tile");
}
GST_END_TEST;

/* ------------------------------------------------------------- sharpen */

/* The 2-D reference costs taps^2 per pixel: wide blurs get small frames. */
static bool
affordable (const SharpenSettings & s, int w, int h)
{
  return s.radius <= 3.0 || double (w) * h <= 64 * 48;
}

/* OpenCV's fixed-point Gaussian taps (GaussianBlur on CV_8U), as OpenCV
 * 4.6 and 5.0 compute them for these sigmas. */
GST_START_TEST (test_gaussian_taps)
{
  const struct {
    double sigma;
    std::vector<uint32_t> taps;
  } known[] = {
    {0.1, {0, 256, 0}},
    {0.5, {0, 27, 202, 27, 0}},
    {1.0, {1, 14, 62, 102, 62, 14, 1}},
    {2.0, {1, 2, 7, 16, 31, 45, 52, 45, 31, 16, 7, 2, 1}},
  };
  for (const auto & k : known)
    fail_unless (cudafilters::sharpen_gaussian_taps (k.sigma) == k.taps,
        "taps for sigma %g", k.sigma);
  for (bool deep : {false, true})
    for (int i = 1; i <= 160; ++i) {
      const double sigma = i * 0.1;
      const std::vector<uint32_t> taps =
          cudafilters::sharpen_gaussian_taps (sigma, deep);
      const std::vector<int> want = opencv_gaussian_taps (sigma, deep);
      fail_unless_equals_int (taps.size (), want.size ());
      int sum = 0;
      for (size_t t = 0; t < taps.size (); ++t) {
        fail_unless_equals_int (taps[t], want[t]);
        sum += taps[t];
      }
      fail_unless_equals_int (sum, deep ? 65536 : 256);
    }
  fail_unless_equals_int (cudafilters::sharpen_gaussian_taps
      (cudafilters::kSharpenMaxRadius).size (), cudafilters::kSharpenMaxTaps);
  fail_unless_equals_int (cudafilters::sharpen_gaussian_taps
      (cudafilters::kSharpenMaxRadius, true).size (),
      cudafilters::kSharpenMaxTapsDeep);
}
GST_END_TEST;

/* The CPU path's instruction-set variants agree bit for bit. */
GST_START_TEST (test_instruction_sets_agree)
{
  std::mt19937 rng (21);
  const Image img = random_image (rng, 333, 97);
  for (const SharpenSettings & s : kSharpenSets) {
    cudafilters::SharpenParams p;
    p.kernel = s.laplacian ()? cudafilters::SharpenKernel::kLaplacian3x3 :
        cudafilters::SharpenKernel::kUnsharp;
    p.amount = s.amount;
    p.radius = s.radius;
    p.threshold = s.threshold;
    Image first (img.width, img.height);
    for (std::string_view isa : cudafilters::cpu_instruction_sets ()) {
      Image out (img.width, img.height);
      cudafilters::sharpen_cpu_with (p, {img.pixels.data (), size_t (img.width),
              img.width, img.height}, {out.pixels.data (), size_t (out.width),
              out.width, out.height}, isa);
      if (isa == "baseline")
        first = out;
      else
        assert_images_equal (out, first, std::string (isa).c_str ());
    }
    if (affordable (s, img.width, img.height))
      assert_images_equal (first, reference_sharpen (img, s), "baseline");

    /* 16-bit words, 12 bits at shift 4 (levels and layout both matter). */
    const cudafilters::SampleLayout layout { 2, 12, 4 };
    const Image16 words = words_of_levels (thermal_like_image (rng, 333, 97,
            12), 4);
    Image16 first16 (words.width, words.height);
    for (std::string_view isa : cudafilters::cpu_instruction_sets ()) {
      Image16 out (words.width, words.height);
      cudafilters::sharpen_cpu_with (p, {(const uint8_t *) words.pixels.data (),
              size_t (2 * words.width), words.width, words.height, layout},
          {(uint8_t *) out.pixels.data (), size_t (2 * out.width), out.width,
              out.height, layout}, isa);
      if (isa == "baseline")
        first16 = out;
      else
        assert_images16_equal (out, first16, std::string (isa) + " 12-bit");
    }
  }
}
GST_END_TEST;

/* The noise estimate (cuda/nlm/noise_estimate.h) against the noise actually
 * added: Gaussian noise on a smooth scene with step edges, rounded and
 * clipped to 8 bits, read within 5% (or 0.3 level) of the standard deviation
 * of noisy - clean. The bar of docs/noise-estimation.md is 15% or 1 level on
 * real photos; this synthetic scene has less texture. */
static std::vector<uint8_t>
noise_scene (int w, int h)
{
  std::vector<uint8_t> p (size_t (w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double v = 70 + 0.1 * x + 0.05 * y + 10 * std::sin (x / 40.0);
      if ((x / 97 + y / 83) % 2)
        v += 50;  /* step edges: the gradient selection must leave them out */
      p[size_t (y) * w + x] = uint8_t (std::lround (v));
    }
  return p;
}

static double
added_noise (std::vector<uint8_t> & p, double sigma, std::mt19937 & rng)
{
  std::normal_distribution<double> n (0.0, sigma);
  double sum = 0, sum2 = 0;
  for (uint8_t & v : p) {
    const int noisy = std::clamp (int (std::lround (v + n (rng))), 0, 255);
    const double d = noisy - v;
    sum += d;
    sum2 += d * d;
    v = uint8_t (noisy);
  }
  const double m = sum / p.size ();
  return std::sqrt (sum2 / p.size () - m * m);
}

GST_START_TEST (test_noise_estimate_gaussian)
{
  std::mt19937 rng (39);
  const int w = 640, h = 480;
  const double clean = cudafilters::estimate_noise_sigma (cudafilters::ConstPlane (
          noise_scene (w, h).data (), w, w, h));
  fail_unless (clean < 0.5, "a clean scene reads %.3f levels of noise", clean);
  for (double sigma : {3.0, 5.0, 10.0, 20.0, 30.0}) {
    std::vector<uint8_t> p = noise_scene (w, h);
    const double truth = added_noise (p, sigma, rng);
    const double est = cudafilters::estimate_noise_sigma (cudafilters::ConstPlane (
            p.data (), w, w, h));
    fail_unless (std::abs (est - truth) <= std::max (0.05 * truth, 0.3),
        "sigma %.0f: estimate %.3f, noise added %.3f", sigma, est, truth);
  }
}
GST_END_TEST;

/* Texture with no noise reads as (almost) none; with noise, the noise. */
GST_START_TEST (test_noise_estimate_ignores_edges)
{
  std::mt19937 rng (40);
  const int w = 400, h = 300;
  std::vector<uint8_t> stripes (size_t (w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      stripes[size_t (y) * w + x] = ((x / 6) % 2) ^ ((y / 9) % 2) ? 200 : 40;
  const double clean = cudafilters::estimate_noise_sigma (cudafilters::ConstPlane (
          stripes.data (), w, w, h));
  fail_unless (clean < 0.5, "stripes read %.3f levels of noise", clean);
  const double truth = added_noise (stripes, 5.0, rng);
  const double est = cudafilters::estimate_noise_sigma (cudafilters::ConstPlane (
          stripes.data (), w, w, h));
  fail_unless (std::abs (est - truth) <= 0.10 * truth,
      "noisy stripes: estimate %.3f, noise added %.3f", est, truth);
}
GST_END_TEST;

/* A plane of `clean` plus `noise`, rounded and clamped, and the standard
 * deviation of what that added. */
static double
add_field (std::vector<uint8_t> & p, const std::vector<uint8_t> & clean,
    const std::vector<double> & noise)
{
  p.resize (clean.size ());
  double sum = 0, sum2 = 0;
  for (size_t i = 0; i < p.size (); ++i) {
    p[i] = uint8_t (std::clamp (int (std::lround (clean[i] + noise[i])), 0, 255));
    const double d = double (p[i]) - clean[i];
    sum += d;
    sum2 += d * d;
  }
  const double m = sum / p.size ();
  return std::sqrt (sum2 / p.size () - m * m);
}

/* Noise as a camera's demosaicing leaves it: each luma pixel's correlated
 * with its neighbours' by 0.44, each chroma pixel's by 0.24
 * (test::correlated_noise). The 3x3 Laplacian sees less than half of the
 * luma's (the fine reading); a frame whose chroma confirms the correlation
 * reads both within 10%. A gray plane, or a frame whose chroma noise is
 * white, gives no such sign: its luma is read at the fine scale. Then
 * frames of studies/camera_set.py's simulated camera (tests/media: Bayer
 * sensor, photon and read noise, bilinear demosaicing, gamma 2.2, with and
 * without H.264): luma within 20% of delivered - clean. */
GST_START_TEST (test_noise_estimate_correlated)
{
  std::mt19937 rng (62);
  const int w = 640, h = 480, cw = w / 2, ch = h / 2;
  for (double sigma : {4.0, 10.0, 20.0}) {
    const std::vector<uint8_t> clean = noise_scene (w, h);
    const std::vector<uint8_t> flat_chroma (size_t (cw) * ch, 128);
    std::vector<uint8_t> y, u, v, white_u, white_v;
    const double truth = add_field (y, clean, test::correlated_noise (w, h, sigma, 4.0, rng));
    const double truth_u = add_field (u, flat_chroma,
        test::correlated_noise (cw, ch, 0.6 * sigma, 8.0, rng));
    const double truth_v = add_field (v, flat_chroma,
        test::correlated_noise (cw, ch, 0.6 * sigma, 8.0, rng));
    const double truth_chroma = std::sqrt ((truth_u * truth_u + truth_v * truth_v) / 2);
    std::normal_distribution<double> white (0.0, 0.6 * sigma);
    std::vector<double> wn (size_t (cw) * ch);
    for (double &x : wn)
      x = white (rng);
    add_field (white_u, flat_chroma, wn);
    for (double &x : wn)
      x = white (rng);
    add_field (white_v, flat_chroma, wn);

    cudafilters::NoiseTable luma, chroma, white_chroma;
    luma.add (cudafilters::ConstPlane (y.data (), w, w, h));
    chroma.add (cudafilters::ConstPlane (u.data (), cw, cw, ch));
    chroma.add (cudafilters::ConstPlane (v.data (), cw, cw, ch));
    white_chroma.add (cudafilters::ConstPlane (white_u.data (), cw, cw, ch));
    white_chroma.add (cudafilters::ConstPlane (white_v.data (), cw, cw, ch));
    const cudafilters::FrameNoise f = cudafilters::frame_noise (luma, &chroma);
    const cudafilters::NoiseReadings r = luma.readings ();
    fail_unless (std::abs (f.luma.sigma - truth) <= 0.10 * truth,
        "luma noise %.3f: estimate %.3f (fine %.3f, coarse %.3f)", truth, f.luma.sigma,
        r.fine.sigma, r.coarse.sigma);
    fail_unless (f.luma.correlated == 1.0, "luma read %.3f correlated", f.luma.correlated);
    fail_unless (std::abs (f.chroma.sigma - truth_chroma) <= 0.10 * truth_chroma,
        "chroma noise %.3f: estimate %.3f", truth_chroma, f.chroma.sigma);
    fail_unless (r.fine.sigma < 0.6 * truth, "the fine scale reads %.3f of %.3f",
        r.fine.sigma, truth);
    fail_unless (cudafilters::frame_noise (luma, nullptr).luma.sigma == r.fine.sigma,
        "a gray plane was not read at the fine scale");
    const cudafilters::FrameNoise w_f = cudafilters::frame_noise (luma, &white_chroma);
    fail_unless (w_f.luma.sigma == r.fine.sigma && w_f.luma.correlated == 0.0,
        "white chroma noise: luma read %.3f (%.3f correlated), fine %.3f", w_f.luma.sigma,
        w_f.luma.correlated, r.fine.sigma);
  }
  /* Each PGM holds Y (160x160) above U and V side by side (80x80 each). */
  for (const char *name : {"rocket-50-base", "rocket-200-h264-20"}) {
    const std::string at = std::string (CUDAFILTERS_TEST_MEDIA) + "/camera-" + name;
    const test::Pgm got = test::read_pgm (at + "-delivered.pgm");
    const test::Pgm clean = test::read_pgm (at + "-clean.pgm");
    fail_unless (!got.pixels.empty () && got.pixels.size () == clean.pixels.size () &&
        got.height == got.width * 3 / 2, "cannot read %s", at.c_str ());
    const int s = got.width, c = s / 2;
    double sum = 0, sum2 = 0;
    for (size_t i = 0; i < size_t (s) * s; ++i) {
      const double d = double (got.pixels[i]) - clean.pixels[i];
      sum += d;
      sum2 += d * d;
    }
    const double m = sum / (double (s) * s);
    const double truth = std::sqrt (sum2 / (double (s) * s) - m * m);
    const uint8_t *uv = got.pixels.data () + size_t (s) * s;
    cudafilters::NoiseTable luma, chroma;
    luma.add (cudafilters::ConstPlane (got.pixels.data (), size_t (s), s, s));
    chroma.add (cudafilters::ConstPlane (uv, size_t (s), c, c));
    chroma.add (cudafilters::ConstPlane (uv + c, size_t (s), c, c));
    const double est = cudafilters::frame_noise (luma, &chroma).luma.sigma;
    fail_unless (std::abs (est - truth) <= 0.2 * truth, "%s: estimate %.3f, noise %.3f",
        name, est, truth);
  }
}
GST_END_TEST;

/* The noise level function: stripes at the middle of six of the eight bands
 * of brightness, each with noise of its own strength, read back band by
 * band within 8%; the two bands between them hold only the rows where two
 * stripes meet (596 pixels each), too few for an estimate: -1. The bands
 * together give the plane's estimate exactly, and the same plane as 16-bit
 * words reads the same, exactly. */
GST_START_TEST (test_noise_curve_follows_brightness)
{
  std::mt19937 rng (43);
  const int w = 300, rows = 100;
  struct Stripe { int band; double sigma; };
  const Stripe stripes[] = { {0, 3.0}, {1, 8.0}, {3, 6.0}, {4, 5.0}, {6, 4.0}, {7, 2.0} };
  const int h = rows * int (G_N_ELEMENTS (stripes));
  std::vector<uint8_t> p (size_t (w) * h);
  double truth[cudafilters::kNoiseBands];
  for (int b = 0; b < cudafilters::kNoiseBands; ++b)
    truth[b] = -1.0;
  for (size_t i = 0; i < G_N_ELEMENTS (stripes); ++i) {
    const int level = 16 + 32 * stripes[i].band;
    std::normal_distribution<double> noise (0.0, stripes[i].sigma);
    double sum = 0, sum2 = 0;
    for (size_t k = size_t (i) * rows * w; k < size_t (i + 1) * rows * w; ++k) {
      const int v = std::clamp (int (std::lround (level + noise (rng))), 0, 255);
      p[k] = uint8_t (v);
      sum += v - level;
      sum2 += double (v - level) * (v - level);
    }
    const double n = double (rows) * w, m = sum / n;
    truth[stripes[i].band] = std::sqrt (sum2 / n - m * m);
  }
  cudafilters::NoiseCurveTable table;
  table.add (cudafilters::ConstPlane (p.data (), w, w, h));
  const std::array<double, cudafilters::kNoiseBands> est = table.sigmas (0.0);
  for (int b = 0; b < cudafilters::kNoiseBands; ++b) {
    if (truth[b] < 0) {
      fail_unless (table.pixels (b) < cudafilters::kNoiseBandMinPixels,
          "band %d holds %" G_GUINT64_FORMAT " pixels", b, (guint64) table.pixels (b));
      fail_unless (est[b] == -1.0, "band %d has too few pixels, yet reads %.3f", b, est[b]);
      continue;
    }
    fail_unless (std::abs (est[b] - truth[b]) <= 0.08 * truth[b],
        "band %d: estimate %.3f, noise added %.3f", b, est[b], truth[b]);
  }
  cudafilters::NoiseTable plane;
  plane.add (cudafilters::ConstPlane (p.data (), w, w, h));
  const cudafilters::NoiseReadings together = table.readings (), alone = plane.readings ();
  fail_unless (together.fine.sigma == alone.fine.sigma &&
      together.coarse.sigma == alone.coarse.sigma && together.pixels == alone.pixels,
      "the bands together read %.17g and %.17g, the plane %.17g and %.17g",
      together.fine.sigma, together.coarse.sigma, alone.fine.sigma, alone.coarse.sigma);
  std::vector<uint16_t> words (p.size ());
  for (size_t i = 0; i < words.size (); ++i)
    words[i] = uint16_t (p[i] << 8);
  cudafilters::NoiseCurveTable deep;
  deep.add (cudafilters::ConstPlane (reinterpret_cast<const uint8_t *> (words.data ()),
          size_t (w) * 2, w, h, cudafilters::SampleLayout{2, 16, 0}));
  const std::array<double, cudafilters::kNoiseBands> at16 = deep.sigmas (0.0);
  for (int b = 0; b < cudafilters::kNoiseBands; ++b)
    fail_unless (at16[b] == est[b], "band %d: 16 bits %.12f, 8 bits %.12f", b, at16[b],
        est[b]);
}
GST_END_TEST;

/* The estimate is in 8-bit units at every depth: an 8-bit plane written as
 * 10-bit (P010's layout, shifted by 6), 12-bit and 16-bit words reads the
 * same, exactly (the table's bins and sums scale by powers of two). Planes
 * under 3x3 have no interior: 0. Depths do not mix in one table. */
GST_START_TEST (test_noise_estimate_depths)
{
  std::mt19937 rng (41);
  const int w = 257, h = 131;
  std::vector<uint8_t> p = noise_scene (w, h);
  added_noise (p, 7.0, rng);
  const double at8 = cudafilters::estimate_noise_sigma (cudafilters::ConstPlane (
          p.data (), w, w, h));
  fail_unless (at8 > 5.0 && at8 < 9.0, "8-bit estimate %.3f", at8);
  struct Deep { int bits, shift; };
  for (const Deep d : {Deep{10, 6}, Deep{12, 0}, Deep{16, 0}}) {
    std::vector<uint16_t> words (size_t (w) * h);
    for (size_t i = 0; i < words.size (); ++i)
      words[i] = uint16_t ((p[i] << (d.bits - 8)) << d.shift);
    const cudafilters::SampleLayout layout{2, d.bits, d.shift};
    const double deep = cudafilters::estimate_noise_sigma (cudafilters::ConstPlane (
            reinterpret_cast<const uint8_t *> (words.data ()), size_t (w) * 2, w,
            h, layout));
    fail_unless (deep == at8, "%d bits: %.12f, 8 bits: %.12f", d.bits, deep,
        at8);
  }
  fail_unless_equals_int (int (cudafilters::estimate_noise_sigma (
              cudafilters::ConstPlane (p.data (), w, 2, h))), 0);
  cudafilters::NoiseTable table;
  table.add (cudafilters::ConstPlane (p.data (), w, w, h));
  std::vector<uint16_t> words (size_t (w) * h);
  bool refused = false;
  try {
    table.add (cudafilters::ConstPlane (reinterpret_cast<const uint8_t *> (
                words.data ()), size_t (w) * 2, w, h,
            cudafilters::SampleLayout{2, 16, 0}));
  } catch (const std::invalid_argument &) {
    refused = true;
  }
  fail_unless (refused, "a 16-bit plane was added to an 8-bit table");
}
GST_END_TEST;

/* The noise of a still scene from two of its frames (frame_difference.h),
 * the scene textured enough that a one-pixel pan doubles what an unshifted
 * difference reads: fresh noise on each frame, white and correlated as a
 * camera's demosaicing leaves it, the second frame still or panned by up to
 * a pixel, read within -10% and +25% of the noise added (the median of 8x8
 * blocks reads white noise about 10% above, its factor fitted on a camera's
 * correlated noise); panned by three pixels, beyond the shifts compared, the
 * texture shows. Still frames read still, panned ones (three pixels too)
 * moving. A second frame 8 levels brighter (a camera's gain control) reads
 * the same noise, still. Clean frames read (almost) nothing; the same
 * frames as 10-, 12- and 16-bit words read the same, exactly. */
static std::vector<uint8_t>
textured_scene (int w, int h, int dx, int dy)
{
  std::vector<uint8_t> p (size_t (w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double X = x + dx, Y = y + dy;
      double v = 110 + 0.1 * X + 0.05 * Y + 30 * std::sin (X / 2.3) * std::cos (Y / 3.1);
      if ((int (X + 400) / 97 + int (Y + 400) / 83) % 2)
        v += 50;
      p[size_t (y) * w + x] = uint8_t (std::clamp (std::lround (v), 0l, 255l));
    }
  return p;
}

GST_START_TEST (test_frame_difference_estimate)
{
  std::mt19937 rng (63);
  const int w = 320, h = 240;
  auto plane = [&](const std::vector<uint8_t> &p) {
    return cudafilters::ConstPlane (p.data (), size_t (w), w, h);
  };
  struct Pan { int dx, dy; };
  const std::vector<uint8_t> still = textured_scene (w, h, 0, 0);
  const cudafilters::FrameDifference clean =
      cudafilters::frame_difference (plane (still), plane (still));
  fail_unless (clean.sigma < 0.1 && clean.still == 1.0, "clean frames read %.3f (still %.3f)",
      clean.sigma, clean.still);
  for (double sigma : {3.0, 8.0, 20.0})
    for (double c : {0.0, 4.0})
      for (const Pan pan : {Pan{0, 0}, Pan{1, 0}, Pan{-1, 1}, Pan{3, 0}}) {
        auto noisy = [&](const std::vector<uint8_t> &scene, double *truth) {
          std::vector<uint8_t> out;
          std::vector<double> field (size_t (w) * h);
          std::normal_distribution<double> n (0.0, sigma);
          if (c == 0.0)
            for (double &v : field)
              v = n (rng);
          else
            field = test::correlated_noise (w, h, sigma, c, rng);
          *truth = add_field (out, scene, field);
          return out;
        };
        double t0 = 0, t1 = 0;
        const std::vector<uint8_t> a = noisy (still, &t0);
        const std::vector<uint8_t> b = noisy (textured_scene (w, h, pan.dx, pan.dy), &t1);
        const double truth = std::sqrt ((t0 * t0 + t1 * t1) / 2);
        const cudafilters::FrameDifference fd =
            cudafilters::frame_difference (plane (a), plane (b));
        const double est = fd.sigma;
        const double want_still = pan.dx == 0 && pan.dy == 0 ? 1.0 : 0.0;
        fail_unless (fd.still == want_still,
            "sigma %.0f, correlation %.0f, pan (%d, %d): still %.3f", sigma, c, pan.dx, pan.dy,
            fd.still);
        if (pan.dx == 3) {
          if (sigma == 3.0)
            fail_unless (est > 1.5 * truth, "a pan of 3 pixels read %.3f of noise %.3f",
                est, truth);
          continue;
        }
        fail_unless (est >= 0.9 * truth && est <= 1.25 * truth,
            "sigma %.0f, correlation %.0f, pan (%d, %d): estimate %.3f, noise %.3f", sigma, c,
            pan.dx, pan.dy, est, truth);
        if (sigma != 8.0 || c != 4.0)
          continue;
        struct Deep { int bits, shift; };
        for (const Deep d : {Deep{10, 6}, Deep{12, 0}, Deep{16, 0}}) {
          auto deep = [&](const std::vector<uint8_t> &p, std::vector<uint16_t> &words) {
            words.resize (p.size ());
            for (size_t i = 0; i < p.size (); ++i)
              words[i] = uint16_t ((p[i] << (d.bits - 8)) << d.shift);
            return cudafilters::ConstPlane (reinterpret_cast<const uint8_t *> (words.data ()),
                size_t (w) * 2, w, h, cudafilters::SampleLayout{2, d.bits, d.shift});
          };
          std::vector<uint16_t> wa, wb;
          const cudafilters::FrameDifference at =
              cudafilters::frame_difference (deep (a, wa), deep (b, wb));
          fail_unless (at.sigma == est && at.still == fd.still,
              "%d bits: %.12f, 8 bits: %.12f", d.bits, at.sigma, est);
        }
      }
  for (double sigma : {3.0, 8.0}) {
    std::vector<uint8_t> brighter = still;
    for (uint8_t &v : brighter)
      v = uint8_t (std::min (v + 8, 255));
    std::normal_distribution<double> n (0.0, sigma);
    std::vector<double> f0 (size_t (w) * h), f1 (size_t (w) * h);
    for (double &v : f0)
      v = n (rng);
    for (double &v : f1)
      v = n (rng);
    std::vector<uint8_t> a, b;
    const double t0 = add_field (a, still, f0), t1 = add_field (b, brighter, f1);
    const double truth = std::sqrt ((t0 * t0 + t1 * t1) / 2);
    const cudafilters::FrameDifference fd = cudafilters::frame_difference (plane (a), plane (b));
    fail_unless (fd.sigma >= 0.9 * truth && fd.sigma <= 1.25 * truth && fd.still == 1.0,
        "sigma %.0f, 8 levels brighter: estimate %.3f (still %.3f), noise %.3f", sigma, fd.sigma,
        fd.still, truth);
  }
  fail_unless_equals_int (int (cudafilters::frame_difference (
              cudafilters::ConstPlane (still.data (), w, 9, 9),
              cudafilters::ConstPlane (still.data (), w, 9, 9)).sigma * 1000), 0);
  bool refused = false;
  try {
    cudafilters::frame_difference (plane (still),
        cudafilters::ConstPlane (still.data (), size_t (w), w, h - 1));
  } catch (const std::invalid_argument &) {
    refused = true;
  }
  fail_unless (refused, "planes of different sizes were compared");
}
GST_END_TEST;

/* Automatic strength over a stream (NlmCpu): each frame is filtered with
 * the settings its own estimate, averaged with the past as
 * m = s m + (1 - s) e, gives (nlm_auto_params), so it equals the same frame
 * at those fixed settings; the settings follow a step in the noise, and a
 * restart forgets the past. */
GST_START_TEST (test_nlm_auto_follows_noise)
{
  std::mt19937 rng (3940);
  /* Under the memory checkers frames of 40% of the pixels, searched over
   * 7x7 offsets rather than 21x21: the estimate and the settings it gives
   * are the same. */
  const int w = quick ()? 96 : 160, h = quick ()? 64 : 96;
  const double sigmas[] = { 4, 4, 4, 20, 20, 20, 20, 5, 5 };
  const int restart_at = 7;
  cudafilters::NlmParams p;
  p.auto_strength = true;
  p.noise_smoothing = 0.5f;
  if (quick ())
    p.search_size = 7;
  cudafilters::NlmCpu automatic, fixed;
  automatic.set_params (p);
  double mean = 0;
  float h_before_step = 0, h_after_step = 0;
  for (int i = 0; i < 9; ++i) {
    std::vector<uint8_t> frame = noise_scene (w, h);
    added_noise (frame, sigmas[i], rng);
    const cudafilters::ConstPlane in (frame.data (), w, w, h);
    if (i == restart_at)
      automatic.reset_history ();
    const double e = cudafilters::estimate_noise_sigma (in);
    mean = (i == 0 || i == restart_at) ? e : 0.5 * mean + 0.5 * e;
    const cudafilters::NlmParams want = cudafilters::nlm_auto_params (p, mean, 0);
    cudafilters::NlmParams at_fixed = want;
    at_fixed.auto_strength = false;
    fixed.set_params (at_fixed);
    std::vector<uint8_t> got (frame.size (), 0xA5), expected (frame.size (), 0x5A);
    automatic.process (in, cudafilters::Plane (got.data (), w, w, h));
    fixed.process (in, cudafilters::Plane (expected.data (), w, w, h));
    fail_unless (got == expected, "frame %d: automatic strength is not the "
        "strength of its estimate (%.4f)", i, mean);
    if (i == 2)
      h_before_step = want.h;
    if (i == 6)
      h_after_step = want.h;
  }
  fail_unless (h_after_step > 3 * h_before_step,
      "the strength went from %.3f to %.3f for noise from 4 to 20",
      h_before_step, h_after_step);
}
GST_END_TEST;

/* The automatic settings: in proportion to the noise, scaled by
 * auto_scale, at least the smallest strength on a clean frame, chroma off
 * when chroma_h is 0; and the new parameters are range-checked. */
GST_START_TEST (test_nlm_auto_params)
{
  cudafilters::NlmParams p;
  p.auto_strength = true;
  const cudafilters::NlmParams a = cudafilters::nlm_auto_params (p, 10.0, 4.0);
  p.auto_scale = 2.f;
  const cudafilters::NlmParams b = cudafilters::nlm_auto_params (p, 10.0, 4.0);
  fail_unless (std::fabs (b.h - 2 * a.h) < 1e-5f && b.noise_sigma == a.noise_sigma,
      "scale 2: h %.4f (scale 1: %.4f)", b.h, a.h);
  fail_unless (std::fabs (b.chroma_h - 2 * a.chroma_h) < 1e-5f && a.chroma_h > 0.f);
  const cudafilters::NlmParams clean = cudafilters::nlm_auto_params (p, 0.0, 0.0);
  fail_unless (clean.h == cudafilters::kNlmMinStrength && clean.noise_sigma == 0.f);
  fail_unless (cudafilters::nlm_params_error (clean).empty ());
  p.chroma_h = 0.f;
  fail_unless_equals_float (cudafilters::nlm_auto_params (p, 10.0, 4.0).chroma_h, 0.f);
  for (float scale : {0.f, 0.05f, 11.f}) {
    cudafilters::NlmParams q;
    q.auto_scale = scale;
    fail_if (cudafilters::nlm_params_error (q).empty (), "auto_scale %g accepted", scale);
  }
  for (float s : {-0.1f, 1.f}) {
    cudafilters::NlmParams q;
    q.noise_smoothing = s;
    fail_if (cudafilters::nlm_params_error (q).empty (), "noise_smoothing %g accepted", s);
  }
}
GST_END_TEST;

/* One default: NlmParams {} asks for automatic strength, as the cudanlm
 * element's auto-strength does (elements/cudanlm.cpp checks the element
 * takes it from here). An NlmCpu given no parameters filters a frame at the
 * settings of the frame's own noise, not at the default h; with
 * auto_strength = false it filters at h. */
GST_START_TEST (test_nlm_default_is_automatic)
{
  const cudafilters::NlmParams defaults;
  fail_unless (defaults.auto_strength, "NlmParams {} has a given strength");
  std::mt19937 rng (3941);
  const int w = 64, h = 48;
  std::vector<uint8_t> frame = noise_scene (w, h);
  added_noise (frame, 20.0, rng);
  const cudafilters::ConstPlane in (frame.data (), w, w, h);
  auto filtered = [&](cudafilters::NlmCpu & nlm) {
    std::vector<uint8_t> out (frame.size (), 0xA5);
    nlm.process (in, cudafilters::Plane (out.data (), w, w, h));
    return out;
  };
  cudafilters::NlmCpu by_default;
  const std::vector<uint8_t> got = filtered (by_default);

  cudafilters::NlmParams at_noise = cudafilters::nlm_auto_params (defaults,
      cudafilters::estimate_noise_sigma (in), 0);
  at_noise.auto_strength = false;
  cudafilters::NlmCpu fixed;
  fixed.set_params (at_noise);
  fail_unless (got == filtered (fixed), "the default is not the strength of "
      "the frame's noise (h %.3f)", at_noise.h);

  cudafilters::NlmParams given;
  given.auto_strength = false;
  cudafilters::NlmCpu at_h;
  at_h.set_params (given);
  fail_if (at_noise.h == given.h, "the test needs noise whose strength is not h");
  fail_if (got == filtered (at_h), "the default filtered at h %.1f", given.h);
}
GST_END_TEST;

static Suite *
engines_suite (void)
{
  Suite *s = suite_create ("engines");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_nlm_instruction_sets);
  tcase_add_test (tc, test_nlm_frames_refuse_bad_windows);
  tcase_add_test (tc, test_frame_window_drops_a_failed_frame);
  tcase_add_test (tc, test_cpu_frame_runner);
  tcase_add_test (tc, test_engines_refuse_bad_planes);
  tcase_add_test (tc, test_engines_refuse_bad_params);
  tcase_add_test (tc, test_window_runner_refuses_missing_frames);
  tcase_add_test (tc, test_cpu_window_runner);
  tcase_add_test (tc, test_histogram_and_mapping);
  tcase_add_test (tc, test_clahe_clip_beyond_int);
  tcase_add_test (tc, test_gaussian_taps);
  tcase_add_test (tc, test_instruction_sets_agree);
  tcase_add_test (tc, test_noise_estimate_gaussian);
  tcase_add_test (tc, test_noise_estimate_ignores_edges);
  tcase_add_test (tc, test_noise_estimate_correlated);
  tcase_add_test (tc, test_noise_estimate_depths);
  tcase_add_test (tc, test_frame_difference_estimate);
  tcase_add_test (tc, test_noise_curve_follows_brightness);
  tcase_add_test (tc, test_nlm_auto_follows_noise);
  tcase_add_test (tc, test_nlm_auto_params);
  tcase_add_test (tc, test_nlm_default_is_automatic);
  return s;
}

GST_CHECK_MAIN (engines);
