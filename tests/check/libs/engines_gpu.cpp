/* The GPU engine without GStreamer: every combination of pageable and pinned
 * source and destination through GpuFrameRunner, padded strides, sizes that
 * span several staging chunks, pinned frames streamed by the kernels and the
 * same frames copied; compared with the CPU implementation; and owners of
 * device and page-locked memory whose growth fails keep what they had.
 * Exits 77 (skipped) where no GPU is usable. */
#include <gst/check/gstcheck.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <cudafilters/clahe_cpu.h>
#include <cudafilters/clahe_gpu.h>
#include <cudafilters/cuda_memory.h>
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/gpu_window_runner.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>
#include <cudafilters/nlm_cpu.h>
#include <cudafilters/nlm_gpu.h>
#include <cudafilters/sharpen_cpu.h>
#include <cudafilters/sharpen_gpu.h>

#include <functional>
#include <initializer_list>

#include "bad_planes.h"
#include "camera_noise.h"
#include "frame_difference_read.h"
#include "device_limits.h"
#include "histeq_gpu_launch.h"
#include "poison.h"
#include "noise_estimate.h"
#include "packed_convert.h"
#include "runner_testing.h"
#include "../pipelines/slow_copy.h"

using namespace cudafilters;

namespace {

/* A host plane with a padded stride, pageable or pinned; padding poisoned. */
struct HostImage {
  int width, height;
  size_t stride;
  std::vector<uint8_t> pageable;
  PinnedBuffer pinned;
  bool locked;

  HostImage (int w, int h, bool pin, size_t row_stride = 0) : width (w),
      height (h), stride (row_stride ? row_stride : size_t (w) + 13),
      locked (pin) {
    const size_t bytes = stride * h;
    if (pin) {
      pinned.reserve (bytes);
      memset (pinned.data (), 0xEE, bytes);
    } else {
      pageable.assign (bytes, 0xEE);
    }
  }
  uint8_t *data () { return locked ? pinned.data () : pageable.data (); }
  Plane plane () { return Plane{data (), stride, width, height}; }
};

}  // namespace

using CpuFilter = std::function<void (ConstPlane, Plane)>;

/* A free that fails is recorded for its owner to report (destructors
 * cannot throw): the first error since the last look, once. */
GST_START_TEST (test_failed_free_is_recorded)
{
  fail_unless_equals_int (cudafilters::take_release_error (), cudaSuccess);
  {
    DeviceArray<uint8_t> fine (64);
  }
  fail_unless_equals_int (cudafilters::take_release_error (), cudaSuccess);
  {
    /* Not an address cudaMalloc gave: cudaFree refuses it. */
    cudafilters::UniqueHandle<void *, cudafilters::free_device> bogus (
        reinterpret_cast<void *> (std::uintptr_t { 0x10 }));
  }
  const cudaError_t err = cudafilters::take_release_error ();
  fail_if (err == cudaSuccess, "a failed cudaFree was not recorded");
  fail_unless_equals_int (cudafilters::take_release_error (), cudaSuccess);
  /* The refusal is not sticky: the device still works. */
  DeviceArray<uint8_t> after (64);
  fail_unless_equals_int (cudaDeviceSynchronize (), cudaSuccess);
}
GST_END_TEST;


/* dst equals the CPU path on src, and the row padding of dst (0xEE) is never
 * written. */
static void
check_equalized (ConstPlane src, ConstPlane dst, const char *what,
    const CpuFilter & cpu = equalize_hist_cpu)
{
  std::vector<uint8_t> ref (size_t (src.width) * src.height);
  std::vector<uint8_t> in (ref.size ());
  for (int y = 0; y < src.height; ++y)
    memcpy (in.data () + size_t (y) * src.width, src.data + y * src.stride,
        src.width);
  cpu (ConstPlane (in.data (), size_t (src.width), src.width, src.height),
      Plane{ref.data (), size_t (src.width), src.width, src.height});
  for (int y = 0; y < dst.height; ++y) {
    fail_unless (memcmp (dst.data + y * dst.stride,
            ref.data () + size_t (y) * src.width, src.width) == 0,
        "%s %dx%d: row %d differs", what, src.width, src.height, y);
    for (size_t x = size_t (dst.width); x < dst.stride; ++x)
      fail_unless_equals_int (dst.data[y * dst.stride + x], 0xEE);
  }
}

GST_START_TEST (test_runner_memory_combinations)
{
  std::mt19937 rng (5);
  const int sizes[][2] = { {1, 1}, {7, 3}, {1000, 1}, {1, 3000}, {1921, 1081},
    {4099, 2161} };
  HistEqGpu eq;
  GpuFrameRunner runner (kPoisoned);
  for (const auto & s : sizes) {
    for (int combo = 0; combo < 4; ++combo) {
      HostImage src (s[0], s[1], combo & 1), dst (s[0], s[1], combo & 2);
      std::uniform_int_distribution<int> d (combo * 10, 150 + combo * 20);
      for (int y = 0; y < s[1]; ++y)
        for (int x = 0; x < s[0]; ++x)
          src.data ()[y * src.stride + x] = uint8_t (d (rng));
      fail_unless_equals_int (is_page_locked (src.plane ()), (combo & 1) != 0);

      runner.process_host (eq, src.plane (), dst.plane ());
      /* Streamed only when both frames are pinned with 16-byte aligned rows
       * (4099 + 13 is a multiple of 16). */
      fail_unless_equals_int (last_frame_streamed (runner),
          combo == 3 && src.stride % 16 == 0);
      const std::string what = "combo " + std::to_string (combo);
      check_equalized (src.plane (), dst.plane (), what.c_str ());
    }
  }
}
GST_END_TEST;

/* Page-locked frames are streamed by the kernels only where the route
 * allows it; a frame beside others is copied (streaming reads the host's
 * memory across the bus once per pass, and under many streams the copies
 * carry more). The output is the same. */
GST_START_TEST (test_pinned_frames_copied_beside_others)
{
  std::mt19937 rng (77);
  HistEqGpu eq;
  GpuFrameRunner runner (kPoisoned);
  /* Rows 16-byte aligned: streamable. */
  HostImage src (640, 480, true, 640), dst (640, 480, true, 640);
  std::uniform_int_distribution<int> d (20, 200);
  for (int y = 0; y < 480; ++y)
    for (int x = 0; x < 640; ++x)
      src.data ()[y * src.stride + x] = uint8_t (d (rng));
  runner.process_host (eq, src.plane (), dst.plane ());
  fail_unless (last_frame_streamed (runner), "a frame alone was not streamed");
  check_equalized (src.plane (), dst.plane (), "alone");
  {
    runner.process_host (eq, src.plane (), dst.plane (), nullptr, kCopiesOnly);
    fail_if (last_frame_streamed (runner), "a frame beside another was "
        "streamed");
    check_equalized (src.plane (), dst.plane (), "beside another");
  }
  runner.process_host (eq, src.plane (), dst.plane ());
  fail_unless (last_frame_streamed (runner));
}
GST_END_TEST;

/* Page-locked host memory registered with cudaHostRegister, as another
 * allocator may hand it over. */
struct RegisteredImage {
  int width, height;
  size_t stride;
  std::unique_ptr<uint8_t, decltype (&free)> mem;

  RegisteredImage (int w, int h, size_t row_stride) : width (w), height (h),
      stride (row_stride), mem (static_cast<uint8_t *> (aligned_alloc (4096,
              (row_stride * h + 4095) / 4096 * 4096)), &free) {
    memset (mem.get (), 0xEE, stride * h);
    CUDAFILTERS_CHECK (cudaHostRegister (mem.get (), stride * h,
            cudaHostRegisterDefault));
  }
  ~RegisteredImage () {
    (void) cudaHostUnregister (mem.get ());
  }
  Plane plane () { return Plane{mem.get (), stride, width, height}; }
};

static size_t
stride16 (int width)
{
  /* A multiple of 16 with at least 16 bytes of padding to check. */
  return (size_t (width) + 15) / 16 * 16 + 16;
}

/* Pinned frames with 16-byte aligned rows are streamed: the kernels read and
 * write host memory directly. Every launch mode, widths with and without a
 * byte tail, one instance over all frames (histogram state across frames);
 * the result equals the CPU path and the copying path, and the row padding
 * is never written. Memory registered with cudaHostRegister streams too. */
GST_START_TEST (test_runner_streams_pinned_frames)
{
  std::mt19937 rng (9);
  const int sizes[][2] = { {1, 1}, {16, 1}, {7, 3}, {33, 17}, {1920, 1080},
    {1921, 1081}, {4099, 2161} };
  for (HistEqLaunch mode : {HistEqLaunch::kSinglePass,
          HistEqLaunch::kTwoPass, HistEqLaunch::kTwoPassSerial}) {
    HistEqGpu eq = make_histeq_gpu (mode);
    GpuFrameRunner runner (kPoisoned);
    GpuFrameRunner copying (kPoisoned);
    for (const auto & s : sizes) {
      const int w = s[0], h = s[1];
      const int lo = int (rng () % 100), hi = lo + 1 + int (rng () % 100);
      HostImage src (w, h, true, stride16 (w)), dst (w, h, true, stride16 (w));
      HostImage copied (w, h, true, stride16 (w));
      std::uniform_int_distribution<int> d (lo, hi);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          src.data ()[y * src.stride + x] = uint8_t (d (rng));

      runner.process_host (eq, src.plane (), dst.plane ());
      fail_unless (last_frame_streamed (runner), "%dx%d was not streamed",
          w, h);
      check_equalized (src.plane (), dst.plane (), "streamed");

      copying.process_host (eq, src.plane (), copied.plane (), nullptr,
          kCopiesOnly);
      fail_if (last_frame_streamed (copying));
      check_equalized (src.plane (), copied.plane (), "copied");
    }
  }

  HistEqGpu eq;
  GpuFrameRunner runner (kPoisoned);
  const int w = 1000, h = 301;
  RegisteredImage src (w, h, stride16 (w)), dst (w, h, stride16 (w));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      src.mem.get ()[y * src.stride + x] = uint8_t ((x * 7 + y * 3) % 97);
  runner.process_host (eq, src.plane (), dst.plane ());
  fail_unless (last_frame_streamed (runner), "registered memory was not streamed");
  check_equalized (src.plane (), dst.plane (), "registered");

  /* A pageable destination: copies, even with a streamable source. */
  HostImage pinned_src (w, h, true, stride16 (w)), pageable_dst (w, h, false,
      stride16 (w));
  for (int y = 0; y < h; ++y)
    memcpy (pinned_src.data () + y * pinned_src.stride,
        src.mem.get () + y * src.stride, w);
  runner.process_host (eq, pinned_src.plane (), pageable_dst.plane ());
  fail_if (last_frame_streamed (runner));
  check_equalized (pinned_src.plane (), pageable_dst.plane (), "pageable dst");
}
GST_END_TEST;

/* A device plane at an arbitrary byte offset and pitch inside one
 * allocation, so row starts can be misaligned for 16-byte access. */
struct DeviceImage {
  int width, height;
  size_t pitch, offset;
  DeviceArray<uint8_t> mem;

  DeviceImage (int w, int h, size_t pad, size_t off) : width (w), height (h),
      pitch (size_t (w) + pad), offset (off), mem (pitch * h + off) {
    CUDAFILTERS_CHECK (cudaMemset (mem.get (), 0xEE, pitch * h + off));
    settle ();
  }
  Plane plane () { return Plane{mem.get () + offset, pitch, width, height}; }
  std::vector<uint8_t> download () {
    std::vector<uint8_t> host (size_t (width) * height);
    CUDAFILTERS_CHECK (cudaMemcpy2D (host.data (), width, mem.get () + offset,
            pitch, width, height, cudaMemcpyDeviceToHost));
    return host;
  }
  void upload (const std::vector<uint8_t> & host) {
    CUDAFILTERS_CHECK (cudaMemcpy2D (mem.get () + offset, pitch, host.data (),
            width, width, height, cudaMemcpyHostToDevice));
    settle ();
  }
  /* The runner's stream does not wait for the legacy default stream, where
   * cudaMemset and a copy from pageable memory may still be running when
   * they return. */
  static void settle () {
    CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
  }
};

static std::vector<uint8_t>
random_bytes (std::mt19937 & rng, size_t n, int lo, int hi)
{
  std::uniform_int_distribution<int> d (lo, hi);
  std::vector<uint8_t> v (n);
  for (auto & b : v)
    b = uint8_t (d (rng));
  return v;
}

/* Frames on the device with planes carried through (the chroma of YUV
 * frames): the luma equals the CPU path, every carried plane arrives
 * byte-identical, whether the apply kernel copies it (up to two) or a separate
 * copy does (a third), in every launch mode (one cooperative pass, two passes
 * with and without overlap), for aligned and misaligned rows. One instance
 * filters every frame of a mode, so state carried between frames is checked
 * too. */
GST_START_TEST (test_device_frames_carry_planes)
{
  std::mt19937 rng (11);
  const int sizes[][2] = { {1, 1}, {2, 2}, {33, 7}, {1920, 1080}, {1281, 721} };
  for (HistEqLaunch mode : {HistEqLaunch::kSinglePass,
          HistEqLaunch::kTwoPass, HistEqLaunch::kTwoPassSerial}) {
    const int overlap = static_cast<int> (mode);
    HistEqGpu eq = make_histeq_gpu (mode);
    GpuFrameRunner runner (kPoisoned);
    for (const auto & sz : sizes) {
      for (int carried_count = 0; carried_count <= 3; ++carried_count) {
        const bool misaligned = (carried_count & 1) != 0;
        const size_t pad = misaligned ? 3 : 64 - size_t (sz[0]) % 64;
        const size_t off = misaligned ? 1 : 0;
        const int w = sz[0], h = sz[1];
        DeviceImage src (w, h, pad, off), dst (w, h, pad + 16, off);
        const auto luma = random_bytes (rng, size_t (w) * h, 20, 200);
        src.upload (luma);

        /* Chroma-like planes: NV12's interleaved plane is as wide in bytes
         * as the luma, I420's are half as wide. */
        std::vector < DeviceImage > csrc, cdst;
        std::vector < std::vector < uint8_t >> chroma;
        CarriedPlanes carried;
        for (int c = 0; c < carried_count; ++c) {
          const int cw = c == 0 ? w : (w + 1) / 2, ch = (h + 1) / 2;
          csrc.emplace_back (cw, ch, pad, off);
          cdst.emplace_back (cw, ch, pad + 32, off);
          chroma.push_back (random_bytes (rng, size_t (cw) * ch, 0, 255));
          csrc.back ().upload (chroma.back ());
        }
        for (int c = 0; c < carried_count; ++c)
          carried.push_back ({csrc[c].plane (), cdst[c].plane ()});

        runner.process_device (eq, src.plane (), dst.plane (), carried);

        std::vector<uint8_t> ref (luma.size ());
        equalize_hist_cpu (ConstPlane (luma.data (), size_t (w), w, h),
            Plane{ref.data (), size_t (w), w, h});
        fail_unless (dst.download () == ref,
            "%dx%d, %d carried, launch mode %d: luma differs", w, h, carried_count,
            overlap);
        for (int c = 0; c < carried_count; ++c)
          fail_unless (cdst[c].download () == chroma[c],
              "%dx%d, launch mode %d: carried plane %d of %d differs", w, h,
              overlap, c, carried_count);
      }
    }
  }
}
GST_END_TEST;

/* CLAHE through the runner: pinned frames streamed by its kernels, the
 * same frames copied, pageable frames, and device frames whose chroma-like
 * planes the mapping kernel carries, for grids from one tile to 64x64 (tiles
 * of one pixel on small frames); one engine instance over all of them. Each
 * equals ClaheCpu. */
GST_START_TEST (test_clahe_engine_paths)
{
  std::mt19937 rng (13);
  const int sizes[][2] = { {1, 1}, {16, 1}, {7, 3}, {33, 17}, {1920, 1080},
    {1921, 1081}, {4099, 2161} };
  const ClaheParams grids[] = { {2.0, 8, 8}, {0.0, 1, 1}, {3.0, 64, 64},
    {1.5, 5, 3} };
  ClaheGpu clahe;
  ClaheCpu reference;
  const CpuFilter cpu = [&](ConstPlane in, Plane out) {
    reference.process (in, out);
  };
  GpuFrameRunner runner (kPoisoned);
  GpuFrameRunner copying (kPoisoned);
  const char *skip = g_getenv ("CUDAFILTERS_TEST_SKIP_LARGE");
  const bool skip_large = skip && *skip && *skip != '0';
  for (const ClaheParams & p : grids) {
    clahe.set_params (p);
    reference.set_params (p);
    for (const auto & s : sizes) {
      const int w = s[0], h = s[1];
      /* Under compute-sanitizer, frames above 1080p take minutes. */
      if (skip_large && w * h > 1921 * 1081)
        continue;
      HostImage src (w, h, true, stride16 (w)), dst (w, h, true, stride16 (w));
      HostImage copied (w, h, true, stride16 (w)), pageable (w, h, false);
      std::uniform_int_distribution<int> d (int (rng () % 80), 255);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          src.data ()[y * src.stride + x] = uint8_t ((x / 7 + y / 5) % 2 ? d (rng) : 90);

      runner.process_host (clahe, src.plane (), dst.plane ());
      fail_unless (last_frame_streamed (runner), "%dx%d was not streamed", w, h);
      check_equalized (src.plane (), dst.plane (), "CLAHE streamed", cpu);
      copying.process_host (clahe, src.plane (), copied.plane (), nullptr,
          kCopiesOnly);
      check_equalized (src.plane (), copied.plane (), "CLAHE copied", cpu);
      runner.process_host (clahe, src.plane (), pageable.plane ());
      fail_if (last_frame_streamed (runner));
      check_equalized (src.plane (), pageable.plane (), "CLAHE pageable", cpu);

      /* On the device, rows misaligned for vectors, two carried planes. */
      DeviceImage dsrc (w, h, 3, 1), ddst (w, h, 19, 1);
      DeviceImage csrc (w, (h + 1) / 2, 5, 0), cdst (w, (h + 1) / 2, 7, 0);
      DeviceImage c2src ((w + 1) / 2, (h + 1) / 2, 64, 0),
          c2dst ((w + 1) / 2, (h + 1) / 2, 1, 0);
      std::vector<uint8_t> luma (size_t (w) * h);
      for (int y = 0; y < h; ++y)
        memcpy (&luma[size_t (y) * w], src.data () + y * src.stride, w);
      dsrc.upload (luma);
      const auto chroma = random_bytes (rng, size_t (w) * ((h + 1) / 2), 0, 255);
      const auto chroma2 = random_bytes (rng, size_t ((w + 1) / 2) * ((h + 1) / 2),
          0, 255);
      csrc.upload (chroma);
      c2src.upload (chroma2);
      runner.process_device (clahe, dsrc.plane (), ddst.plane (),
          {{csrc.plane (), cdst.plane ()}, {c2src.plane (), c2dst.plane ()}});
      std::vector<uint8_t> want (luma.size ());
      reference.process (ConstPlane (luma.data (), size_t (w), w, h),
          Plane{want.data (), size_t (w), w, h});
      fail_unless (ddst.download () == want, "CLAHE %dx%d on the device differs",
          w, h);
      fail_unless (cdst.download () == chroma && c2dst.download () == chroma2,
          "CLAHE %dx%d: carried planes differ", w, h);
    }
  }
}
GST_END_TEST;

static void
check_levels (const FrameLevels & got, ConstPlane in, ConstPlane out,
    const char *what)
{
  FrameLevels want;
  count_levels_cpu (in, want.input);
  count_levels_cpu (out, want.output);
  fail_unless (memcmp (got.input, want.input, sizeof want.input) == 0,
      "%s: input histogram differs", what);
  fail_unless (memcmp (got.output, want.output, sizeof want.output) == 0,
      "%s: output histogram differs", what);
  /* The noise estimate is integer sums and the same double arithmetic on
   * both sides: equal, not close. */
  const double noise = estimate_noise_sigma (in);
  fail_unless (got.noise_sigma == noise, "%s: noise %.17g, the CPU reads %.17g",
      what, got.noise_sigma, noise);
  fail_unless (got.noise_sigma_chroma == -1.0, "%s: chroma noise %g without chroma",
      what, got.noise_sigma_chroma);
}

/* A deep test frame of `bits` significant bits at `shift` in 16-bit words:
 * a smooth ramp for frame 0, noise for frame 1, over a random span of
 * levels. */
static void
fill_deep_frame (std::mt19937 & rng, uint8_t * data, size_t stride, int w,
    int h, int bits, int shift, int frame)
{
  const int top = (1 << bits) - 1;
  const int lo = int (rng () % (top / 2 + 1));
  const int span = 1 + int (rng () % (top - lo + 1));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int v = frame == 0 ? lo + (x + 3 * y) % span :
          lo + int (rng () % span);
      const uint16_t word = uint16_t (v << shift);
      memcpy (&data[y * stride + 2 * x], &word, 2);
    }
}

/* The rows of `gpu` equal those of `ref`, and the row padding of `gpu`
 * still holds `pad`. */
static void
check_deep_rows (const uint8_t * gpu, const uint8_t * ref, size_t stride,
    int w, int h, uint8_t pad, const std::string & what)
{
  for (int y = 0; y < h; ++y) {
    fail_unless (memcmp (&gpu[y * stride], &ref[y * stride], 2 * size_t (w))
        == 0, "%s: row %d differs from the CPU", what.c_str (), y);
    for (size_t x = 2 * size_t (w); x < stride; ++x)
      fail_unless_equals_int (gpu[y * stride + x], pad);
  }
}

/* A deep layout: `bits` in 16-bit words at `shift`, equalized over
 * `significant` bits (0: all of them). */
struct DeepLayout {
  int bits, shift, significant;
};

/* One engine pair (GPU and CPU) per temporal smoothing (off, 0.75) and
 * launch mode, taken through every layout in turn, so that state carried
 * between frames and between level counts is covered. For each layout
 * calls run (eq, cpu, runner, rng, layout, bits equalized, sample layout,
 * a description). */
template <typename Run>
static void
for_each_deep_setup (unsigned seed, std::initializer_list<DeepLayout> layouts,
    Run run)
{
  for (double smoothing : {0.0, 0.75}) {
    for (HistEqLaunch mode : {HistEqLaunch::kSinglePass,
            HistEqLaunch::kTwoPass, HistEqLaunch::kTwoPassSerial}) {
      std::mt19937 rng (seed);
      HistEqGpu eq = make_histeq_gpu (mode);
      HistEqCpu cpu;
      HistEqParams params;
      params.temporal_smoothing = smoothing;
      GpuFrameRunner runner (kPoisoned);
      for (const DeepLayout & l : layouts) {
        params.significant_bits = l.significant;
        eq.set_params (params);
        cpu.set_params (params);
        const int bits = l.significant ? l.significant : l.bits;
        char what[96];
        snprintf (what, sizeof what, "launch mode %d, smoothing %.2f, %d of "
            "%d bits at %d", int (mode), smoothing, bits, l.bits, l.shift);
        run (eq, cpu, runner, rng, l, bits, SampleLayout { 2, l.bits, l.shift },
            std::string (what));
      }
    }
  }
}

/* Deep planes in every launch mode (one cooperative launch, one launch per
 * step with and without overlap) equal the CPU path: 16-bit, 14, 8 and 2
 * significant bits of 16, 12-bit and P010-like 10-bit at shift 6; sizes
 * from 1x1 to 1921x1081
 * (cudahisteq-gpu's 8K frames cover more partial histograms than a
 * cooperative grid has blocks); smooth and noisy content; with temporal smoothing too. One instance per
 * mode filters every frame, so state carried between frames (and between
 * level counts) is covered. Outputs are poisoned first. */
GST_START_TEST (test_deep_launch_modes)
{
  const int sizes[][2] = { {1, 1}, {7, 3}, {33, 17}, {1921, 1081} };
  /* 8 and 2 of 16 bits: counters smaller than the sums' scratch. */
  for_each_deep_setup (21, { {16, 0, 0}, {16, 0, 14}, {12, 0, 0}, {10, 6, 0},
          {16, 0, 8}, {16, 0, 2} }, [&](HistEqGpu & eq, HistEqCpu & cpu,
          GpuFrameRunner & runner, std::mt19937 & rng, const DeepLayout & l,
          int bits, SampleLayout samples, const std::string & setup) {
        for (const auto & sz : sizes) {
          for (int frame = 0; frame < 2; ++frame) {
            const int w = sz[0], h = sz[1];
            const size_t stride = 2 * size_t (w) + 6;
            std::vector<uint8_t> src (stride * h), gpu (stride * h, 0xA5),
                ref (stride * h, 0xA5);
            fill_deep_frame (rng, src.data (), stride, w, h, bits, l.shift,
                frame);
            const ConstPlane in (src.data (), stride, w, h, samples);
            runner.process_host (eq, in, Plane (gpu.data (), stride, w, h,
                    samples));
            cpu.process (in, Plane (ref.data (), stride, w, h, samples));
            const std::string what = setup + ", " + std::to_string (w) + "x" +
                std::to_string (h) + " frame " + std::to_string (frame);
            check_deep_rows (gpu.data (), ref.data (), stride, w, h, 0xA5,
                what);
          }
        }
      });
}
GST_END_TEST;

/* Deep pinned frames with 16-byte aligned rows are streamed: the kernels
 * read the source over the bus once, keep a device copy for the mapping,
 * and write the output into host memory. 10-, 12- and 16-bit planes, and 8
 * of 16 significant bits, in every launch mode, with and without temporal
 * smoothing; equal to the CPU path, the row padding never written. */
GST_START_TEST (test_deep_streams_pinned_frames)
{
  const int sizes[][2] = { {8, 1}, {33, 17}, {1920, 1080}, {1921, 1081} };
  for_each_deep_setup (23, { {10, 6, 0}, {12, 0, 0}, {16, 0, 0}, {16, 0, 8} },
      [&](HistEqGpu & eq, HistEqCpu & cpu, GpuFrameRunner & runner,
          std::mt19937 & rng, const DeepLayout & l, int bits,
          SampleLayout samples, const std::string & setup) {
        for (const auto & sz : sizes) {
          const int w = sz[0], h = sz[1];
          const size_t stride = stride16 (2 * w);
          PinnedBuffer src, gpu;
          src.reserve (stride * h);
          gpu.reserve (stride * h);
          std::vector<uint8_t> ref (stride * h, 0xEE);
          for (int frame = 0; frame < 2; ++frame) {
            memset (src.data (), 0xEE, stride * h);
            memset (gpu.data (), 0xEE, stride * h);
            fill_deep_frame (rng, src.data (), stride, w, h, bits, l.shift,
                frame);
            const ConstPlane in (src.data (), stride, w, h, samples);
            runner.process_host (eq, in, Plane (gpu.data (), stride, w, h,
                    samples));
            const std::string what = "streamed, " + setup + ", " +
                std::to_string (w) + "x" + std::to_string (h) + " frame " +
                std::to_string (frame);
            fail_unless (last_frame_streamed (runner), "%s: not streamed",
                what.c_str ());
            cpu.process (in, Plane (ref.data (), stride, w, h, samples));
            check_deep_rows (gpu.data (), ref.data (), stride, w, h, 0xEE,
                what);
          }
        }
      });
}
GST_END_TEST;

/* Whether cooperative grids may be refused in this run whatever the tests
 * ask: under MPS with an active-thread percentage. */
static bool
cooperative_grids_constrained ()
{
  return g_getenv ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") != NULL;
}

/* Restores the cap on cooperative grids (device_limits.h) when a test
 * that changes it ends. */
struct CooperativeCapScope {
  int saved = cooperative_grid_cap ();
  ~CooperativeCapScope () {
    set_cooperative_grid_cap (saved);
  }
};

/* A device that holds fewer blocks than it reports (MPS with an
 * active-thread percentage, a green context) refuses HistEqGpu's cooperative
 * grids with cudaErrorCooperativeLaunchTooLarge; the engine must then take
 * its launches without a grid barrier, with the same output, and remember
 * that for later frames. The test hook's cap on cooperative grids stands in
 * for the device: 0 blocks from frame `refuse_from` on (0: from the first
 * frame; 2: two frames fit, then every later one is refused). 8-bit planes
 * (the single pass), 10- and 12-bit (the kernel of up to 4096 levels, then
 * the deep kernel) and 16-bit (the deep kernel), with and without temporal
 * smoothing, frames streamed from pinned memory and copied from pageable
 * memory in turn; every frame equals HistEqCpu's, no launch error is left
 * behind, and after the first refused frame no launch is refused again. */
GST_START_TEST (test_refused_cooperative_launch_falls_back)
{
  CooperativeCapScope restore;
  const bool constrained = cooperative_grids_constrained ();
  struct Depth {
    int bits, shift;
  };
  const Depth depths[] = { {8, 0}, {10, 6}, {12, 0}, {16, 0} };
  const int w = 1921, h = 1081, frames = 5;
  std::mt19937 rng (41);
  for (double smoothing : {0.0, 0.75})
    for (const Depth & d : depths)
      for (int refuse_from : {0, 2}) {
        set_cooperative_grid_cap (-1);
        HistEqGpu eq = make_histeq_gpu (HistEqLaunch::kSinglePass);
        HistEqCpu cpu;
        HistEqParams params;
        params.temporal_smoothing = smoothing;
        eq.set_params (params);
        cpu.set_params (params);
        GpuFrameRunner runner (kPoisoned);
        const bool deep = d.bits > 8;
        const SampleLayout samples = deep ? SampleLayout { 2, d.bits, d.shift } :
            SampleLayout { };
        const size_t row = size_t (samples.bytes) * w, stride = stride16 (int (row));
        PinnedBuffer src, out;
        src.reserve (stride * h);
        out.reserve (stride * h);
        std::vector<uint8_t> pageable (stride * h), ref (stride * h);
        bool refused_before = false;
        for (int frame = 0; frame < frames; ++frame) {
          if (frame == refuse_from)
            set_cooperative_grid_cap (0);
          char what[128];
          snprintf (what, sizeof what, "%d bits at %d, smoothing %.2f, refused "
              "from frame %d, frame %d", d.bits, d.shift, smoothing,
              refuse_from, frame);
          /* Even frames streamed, odd ones copied. */
          const bool streamed = frame % 2 == 0;
          uint8_t *out_data = streamed ? out.data () : pageable.data ();
          memset (src.data (), 0xEE, stride * h);
          memset (out_data, 0xEE, stride * h);
          memset (ref.data (), 0xEE, stride * h);
          if (deep) {
            fill_deep_frame (rng, src.data (), stride, w, h, d.bits, d.shift,
                frame % 2);
          } else {
            const int lo = int (rng () % 100), span = 1 + int (rng () % 150);
            for (int y = 0; y < h; ++y)
              for (int x = 0; x < w; ++x)
                src.data ()[y * stride + x] = uint8_t (lo + (frame % 2 ?
                        int (rng () % span) : (x + 3 * y) % span));
          }
          const ConstPlane in (src.data (), stride, w, h, samples);
          const unsigned before = cooperative_refusals ();
          try {
            runner.process_host (eq, in, Plane (out_data, stride, w, h,
                    samples));
          } catch (const std::exception & e) {
            fail ("%s: %s", what, e.what ());
          }
          fail_unless_equals_int (cudaGetLastError (), cudaSuccess);
          fail_unless_equals_int (last_frame_streamed (runner), streamed);
          cpu.process (in, Plane (ref.data (), stride, w, h, samples));
          for (int y = 0; y < h; ++y) {
            fail_unless (memcmp (out_data + y * stride, ref.data () + y * stride,
                    row) == 0, "%s: row %d differs from the CPU", what, y);
            for (size_t x = row; x < stride; ++x)
              fail_unless_equals_int (out_data[y * stride + x], 0xEE);
          }

          const unsigned refused = cooperative_refusals () - before;
          fail_if (refused != 0 && refused_before,
              "%s: refused again, %u launches", what, refused);
          refused_before = refused_before || refused != 0;
          if (!constrained) {
            fail_unless ((refused != 0) == (frame == refuse_from),
                "%s: %u launches refused", what, refused);
          }
        }
      }
}
GST_END_TEST;

/* The dynamic shared memory a kernel's launches may use is set on the
 * kernel, for every HistEqGpu of the process: an instance of fewer levels,
 * which needs less, must not take it from another. Two instances filter
 * frames in turn: 16 against 14 of 16 bits (the deep kernel: 128 and 64
 * KB), and P010-like 10 bits against 8 of 16 (the kernel of up to 4096
 * levels: 64 and 32 KB); every frame equals HistEqCpu's. */
GST_START_TEST (test_instances_keep_kernel_limits)
{
  struct Instance {
    SampleLayout samples;
    int significant;
  };
  const Instance pairs[][2] = {
    { {{2, 16, 0}, 0}, {{2, 16, 0}, 14} },
    { {{2, 10, 6}, 0}, {{2, 16, 0}, 8} },
  };
  std::mt19937 rng (43);
  const int w = 641, h = 479;
  const size_t stride = 2 * size_t (w) + 6;
  for (const auto & pair : pairs) {
    HistEqGpu gpu[2];
    HistEqCpu cpu[2];
    GpuFrameRunner runner (kPoisoned);
    for (int i = 0; i < 2; ++i) {
      HistEqParams params;
      params.significant_bits = pair[i].significant;
      gpu[i].set_params (params);
      cpu[i].set_params (params);
    }
    for (int frame = 0; frame < 4; ++frame) {
      const Instance & in = pair[frame % 2];
      const int bits = in.significant ? in.significant : in.samples.bits;
      std::vector<uint8_t> src (stride * h), got (stride * h, 0xEE),
          want (stride * h, 0xEE);
      fill_deep_frame (rng, src.data (), stride, w, h, bits, in.samples.shift,
          frame / 2);
      const ConstPlane plane (src.data (), stride, w, h, in.samples);
      const std::string what = std::to_string (bits) + " of " +
          std::to_string (in.samples.bits) + " bits, frame " + std::to_string (frame);
      try {
        runner.process_host (gpu[frame % 2], plane, Plane (got.data (), stride,
                w, h, in.samples));
      } catch (const std::exception & e) {
        fail ("%s: %s", what.c_str (), e.what ());
      }
      cpu[frame % 2].process (plane, Plane (want.data (), stride, w, h,
              in.samples));
      check_deep_rows (got.data (), want.data (), stride, w, h, 0xEE, what);
    }
  }
}
GST_END_TEST;

/* Level histograms counted on the device for the statistics messages: for
 * host frames (which then go by copies, never streamed) and device frames,
 * equal to counting on the CPU. */
GST_START_TEST (test_frame_levels)
{
  std::mt19937 rng (14);
  HistEqGpu eq;
  GpuFrameRunner runner (kPoisoned);
  const int sizes[][2] = { {1, 1}, {33, 17}, {1920, 1080}, {1283, 721} };
  for (const auto & s : sizes) {
    const int w = s[0], h = s[1];
    HostImage src (w, h, true, stride16 (w)), dst (w, h, true, stride16 (w));
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        src.data ()[y * src.stride + x] = uint8_t (rng () % 200 + 20);
    FrameLevels levels;
    memset (&levels, 0x5A, sizeof levels);
    runner.process_host (eq, src.plane (), dst.plane (), &levels);
    fail_if (last_frame_streamed (runner));
    check_equalized (src.plane (), dst.plane (), "with levels");
    check_levels (levels, src.plane (), dst.plane (), "host frame");

    DeviceImage dsrc (w, h, 3, 1), ddst (w, h, 0, 0);
    std::vector<uint8_t> luma (size_t (w) * h);
    for (int y = 0; y < h; ++y)
      memcpy (&luma[size_t (y) * w], src.data () + y * src.stride, w);
    dsrc.upload (luma);
    memset (&levels, 0x5A, sizeof levels);
    runner.process_device (eq, dsrc.plane (), ddst.plane (), {}, &levels);
    const auto out = ddst.download ();
    check_levels (levels, ConstPlane (luma.data (), size_t (w), w, h),
        ConstPlane (out.data (), size_t (w), w, h), "device frame");
  }
}
GST_END_TEST;

/* CUDA errors surface as CudaError naming the operation, not as crashes. */
GST_START_TEST (test_errors_are_reported)
{
  bool thrown = false;
  try {
    DeviceArray<uint8_t> huge (size_t (1) << 50);
  } catch (const CudaError & e) {
    thrown = true;
    fail_unless (strstr (e.what (), "cudaMalloc") != NULL, "%s", e.what ());
    fail_unless_equals_int (e.code (), cudaErrorMemoryAllocation);
  }
  fail_unless (thrown);
}
GST_END_TEST;

/* A failed allocation is reported once: the engine filters the next frame
 * (the runtime's last error must not leak into the next launch check). */
GST_START_TEST (test_failed_allocation_does_not_poison_later_frames)
{
  HistEqGpu filter;
  GpuFrameRunner runner (kPoisoned);
  bool thrown = false;
  try {
    runner.reserve (1 << 24, 1 << 20);
  } catch (const CudaError &) {
    thrown = true;
  }
  fail_unless (thrown, "a 16 TB frame was allocated");

  const int w = 61, h = 37;
  std::vector<uint8_t> in (size_t (w) * h), out (in.size ()), expected (in.size ());
  std::mt19937 rng (7);
  for (uint8_t & v : in)
    v = uint8_t (rng () % 90);
  equalize_hist_cpu (ConstPlane (in.data (), w, w, h), Plane{expected.data (), size_t (w), w, h});
  runner.process_host (filter, ConstPlane (in.data (), w, w, h),
      Plane{out.data (), size_t (w), w, h});
  fail_unless (out == expected, "the frame after a failed allocation is wrong");
}
GST_END_TEST;


/* A 4:2:0 frame on the host, planar (I420) or with U and V interleaved
 * (NV12), and its copy on the device. */
struct YuvFrame {
  int width, height, cw, ch;
  bool nv12;
  std::vector<uint8_t> y, u, v;  /* nv12: u holds UV pairs, v is unused */
  DevicePlane dy, du, dv;

  YuvFrame (int w, int h, bool interleaved) : width (w), height (h),
      cw ((w + 1) / 2), ch ((h + 1) / 2), nv12 (interleaved),
      y (size_t (w) * h), u (size_t (interleaved ? 2 : 1) * cw * ch),
      v (interleaved ? 0 : size_t (cw) * ch) {
    dy.reserve (w, h);
    du.reserve (interleaved ? 2 * cw : cw, ch);
    dv.reserve (cw, ch);
  }
  int u_row () const { return nv12 ? 2 * cw : cw; }
  /* Every plane a smooth ramp (90 + 40 sin (k / 30) over its samples in
   * order) plus Gaussian noise of `sigma`, rounded and clamped; uploaded. */
  void fill_noisy (std::mt19937 & rng, double sigma) {
    std::normal_distribution<double> n (0.0, sigma);
    int k = 0;
    for (auto *plane : {&y, &u, &v})
      for (auto & b : *plane) {
        const double clean = 90 + 40 * std::sin (k++ / 30.0);
        b = uint8_t (std::clamp (int (std::lround (clean + n (rng))), 0, 255));
      }
    upload ();
  }
  /* Every sample of the host planes drawn from 20 to 230. */
  void randomize (std::mt19937 & rng) {
    for (auto *plane : {&y, &u, &v})
      for (auto & b : *plane)
        b = uint8_t (std::uniform_int_distribution<int> (20, 230) (rng));
  }
  void upload () {
    CUDAFILTERS_CHECK (cudaMemcpy2D (dy.data (), dy.pitch (), y.data (), width,
            width, height, cudaMemcpyHostToDevice));
    CUDAFILTERS_CHECK (cudaMemcpy2D (du.data (), du.pitch (), u.data (),
            u_row (), u_row (), ch, cudaMemcpyHostToDevice));
    if (!nv12)
      CUDAFILTERS_CHECK (cudaMemcpy2D (dv.data (), dv.pitch (), v.data (), cw,
              cw, ch, cudaMemcpyHostToDevice));
  }
  void download () {
    CUDAFILTERS_CHECK (cudaMemcpy2D (y.data (), width, dy.data (), dy.pitch (),
            width, height, cudaMemcpyDeviceToHost));
    CUDAFILTERS_CHECK (cudaMemcpy2D (u.data (), u_row (), du.data (),
            du.pitch (), u_row (), ch, cudaMemcpyDeviceToHost));
    if (!nv12)
      CUDAFILTERS_CHECK (cudaMemcpy2D (v.data (), cw, dv.data (), dv.pitch (),
              cw, ch, cudaMemcpyDeviceToHost));
  }
  void poison_device () {
    CUDAFILTERS_CHECK (cudaMemset2D (dy.data (), dy.pitch (), 0xA5, width, height));
    CUDAFILTERS_CHECK (cudaMemset2D (du.data (), du.pitch (), 0xA5, u_row (), ch));
    if (!nv12)
      CUDAFILTERS_CHECK (cudaMemset2D (dv.data (), dv.pitch (), 0xA5, cw, ch));
  }
  template <typename P, typename Ptr>
  static void fill (P & f, Ptr y, size_t ys, Ptr u, size_t us, Ptr v,
      size_t vs, int w, int h, int cw, int ch, bool nv12) {
    f.luma = decltype (f.luma) (y, ys, w, h);
    f.u = decltype (f.u) (u, us, cw, ch);
    f.v = nv12 ? decltype (f.v) (u + 1, us, cw, ch) : decltype (f.v) (v, vs, cw, ch);
    f.chroma_step = nv12 ? 2 : 1;
  }
  FramePlanes host_in () {
    FramePlanes f;
    fill (f, (const uint8_t *) y.data (), width, (const uint8_t *) u.data (),
        u_row (), (const uint8_t *) v.data (), cw, width, height, cw, ch, nv12);
    return f;
  }
  FramePlanesOut host_out () {
    FramePlanesOut f;
    fill (f, y.data (), width, u.data (), u_row (), v.data (), cw, width,
        height, cw, ch, nv12);
    return f;
  }
  FramePlanes device_in () {
    FramePlanes f;
    fill (f, (const uint8_t *) dy.data (), dy.pitch (), (const uint8_t *) du.data (),
        du.pitch (), (const uint8_t *) dv.data (), dv.pitch (), width, height,
        cw, ch, nv12);
    return f;
  }
  FramePlanesOut device_out () {
    FramePlanesOut f;
    fill (f, dy.data (), dy.pitch (), du.data (), du.pitch (), dv.data (),
        dv.pitch (), width, height, cw, ch, nv12);
    return f;
  }
};

static void
assert_bytes_close (const std::vector<uint8_t> & got,
    const std::vector<uint8_t> & want, int tolerance, const std::string & what)
{
  fail_unless_equals_int (got.size (), want.size ());
  for (size_t i = 0; i < got.size (); ++i)
    fail_unless (std::abs (int (got[i]) - int (want[i])) <= tolerance,
        "%s: byte %zu is %d, the CPU has %d", what.c_str (), i, got[i], want[i]);
}

/* Whole frames through NlmGpu::enqueue_window against NlmCpu: I420
 * and NV12, odd sizes, one frame and temporal windows (the frame denoised
 * at the start, middle and end), chroma denoised or copied, box and
 * Gaussian patches, with and without noise-sigma. Within one level; outputs
 * poisoned first, so unwritten samples show. */
GST_START_TEST (test_nlm_frames_match_cpu)
{
  std::mt19937 rng (8128);
  const int sizes[][2] = { {1, 1}, {3, 5}, {37, 23}, {130, 67} };
  struct Case { int patch, search; float h, chroma, sigma; bool gauss; };
  const Case cases[] = {
    {7, 21, 10, -1, 0, false}, {3, 7, 20, 6, 5, false}, {5, 11, 15, 0, 0, true},
    {15, 35, 25, 12, 10, false}, {11, 13, 12, -1, 0, true},
  };
  const int windows[][2] = { {1, 0}, {2, 0}, {3, 1}, {3, 2}, {7, 3} };
  NlmGpu nlm;
  for (bool nv12 : {false, true})
    for (const auto & sz : sizes)
      for (const Case & c : cases)
        for (const auto & win : windows) {
          const int count = win[0], center = win[1];
          std::vector<std::unique_ptr<YuvFrame>> frames;
          std::vector<FramePlanes> host, dev;
          for (int f = 0; f < count; ++f) {
            frames.push_back (std::make_unique<YuvFrame> (sz[0], sz[1], nv12));
            YuvFrame & fr = *frames.back ();
            fr.randomize (rng);
            fr.upload ();
            host.push_back (fr.host_in ());
            dev.push_back (fr.device_in ());
          }
          NlmParams p;
          p.auto_strength = false;
          p.patch_size = c.patch;
          p.search_size = c.search;
          p.h = c.h;
          p.chroma_h = c.chroma;
          p.noise_sigma = c.sigma;
          p.gaussian = c.gauss;
          p.temporal_radius = 3;
          YuvFrame gpu (sz[0], sz[1], nv12), cpu (sz[0], sz[1], nv12);
          gpu.poison_device ();
          nlm.set_params (p);
          nlm.enqueue_window (dev.data (), count, center, gpu.device_out (), 0);
          CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
          gpu.download ();
          NlmCpu reference;
          reference.set_params (p);
          reference.process_window (host.data (), count, center, cpu.host_out ());
          const std::string what = std::string (nv12 ? "NV12 " : "I420 ") +
              std::to_string (sz[0]) + "x" + std::to_string (sz[1]) +
              " patch " + std::to_string (c.patch) + " search " +
              std::to_string (c.search) + " chroma " + std::to_string (c.chroma) +
              " frames " + std::to_string (count) + " centre " +
              std::to_string (center);
          assert_bytes_close (gpu.y, cpu.y, 1, what + " luma");
          assert_bytes_close (gpu.u, cpu.u, 1, what + " U");
          assert_bytes_close (gpu.v, cpu.v, 1, what + " V");
          if (c.chroma == 0) {
            /* Carried chroma is the centre frame's, byte for byte. */
            assert_bytes_close (gpu.u, frames[center]->u, 0, what + " carried U");
            assert_bytes_close (gpu.v, frames[center]->v, 0, what + " carried V");
          }
        }
}
GST_END_TEST;

/* Rows of `samples` samples in `layout`'s words, `stride` bytes apart: the
 * image clean(x, y) in 8-bit units plus Gaussian noise of `sigma` 8-bit
 * levels, rounded and clamped to the layout's levels. The noise is white,
 * or with `correlation` > 0 correlated as a camera's
 * (test::correlated_noise's c). */
template <typename Clean>
static std::vector<uint8_t>
noisy_plane (int samples, int h, size_t stride, const SampleLayout & layout, double sigma,
    std::mt19937 & rng, Clean clean, double correlation = 0)
{
  std::normal_distribution<double> noise (0.0, sigma > 0 ? sigma : 1.0);
  const std::vector<double> field = correlation > 0 && sigma > 0 ?
      test::correlated_noise (samples, h, sigma, correlation, rng) : std::vector<double> ();
  const int top = (1 << layout.bits) - 1;
  std::vector<uint8_t> host (stride * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < samples; ++x) {
      const double c = clean (x, y) * (top / 255.0);
      const double n = sigma <= 0 ? 0.0 : field.empty () ? noise (rng) :
          field[size_t (y) * samples + x];
      const int v = std::clamp (int (std::lround (c + n * (top / 255.0))), 0, top);
      if (layout.bytes == 1)
        host[y * stride + x] = uint8_t (v);
      else
        reinterpret_cast<uint16_t *> (&host[y * stride])[x] = uint16_t (v << layout.shift);
    }
  return host;
}

/* The noise estimate on the GPU against the CPU's, bit for bit (the same
 * integer tables, the same double arithmetic): sizes from none to 1080p,
 * odd ones and ones under the coarse scale's 7x7, 8-bit and 10-, 12- and
 * 16-bit words, one channel of interleaved pairs (step 2), a frame's luma
 * with and without chroma (a table of both channels, which confirms or not
 * that the luma's noise is correlated) and tables cleared from one frame to
 * the next. Smooth planes with white and correlated noise of several
 * strengths. */
GST_START_TEST (test_noise_estimate_matches_cpu)
{
  std::mt19937 rng (39);
  NoiseEstimatorGpu gpu;
  const int sizes[][2] = { {1, 1}, {2, 7}, {3, 3}, {6, 9}, {7, 7}, {37, 23}, {257, 131},
    {1920, 1080}, {1283, 721} };
  struct Layout { int bytes, bits, shift; };
  const Layout layouts[] = { {1, 8, 0}, {2, 10, 6}, {2, 12, 0}, {2, 16, 0} };
  double host_sigma[2], host_correlated = -1;
  for (const auto & sz : sizes)
    for (const Layout & l : layouts)
      for (int step : {1, 2})
        for (double sigma : {0.0, 2.0, 12.0, 60.0})
        for (double correlation : {0.0, 4.0}) {
          const int w = sz[0], h = sz[1];
          const SampleLayout layout{l.bytes, l.bits, l.shift};
          const size_t stride = size_t (w) * step * l.bytes + 24;
          const std::vector<uint8_t> host = noisy_plane (w * step, h, stride, layout, sigma,
              rng, [](int x, int y) { return 128 + 60 * std::sin (x / 50.0) + 0.05 * y; },
              correlation);
          DeviceArray<uint8_t> dev (host.size ());
          CUDAFILTERS_CHECK (cudaMemcpy (dev.get (), host.data (), host.size (),
                  cudaMemcpyHostToDevice));
          /* Table 0 (luma): the first channel; table 1 (chroma): the second
           * channel too where there are two, else the first again. */
          const ConstPlane first (host.data (), stride, w, h, layout);
          const ConstPlane second (host.data () + (step == 2 ? l.bytes : 0), stride, w, h,
              layout);
          NoiseTable luma, both;
          luma.add (first, step);
          both.add (first, step);
          both.add (second, step);
          const FrameNoise f = frame_noise (luma, &both);
          const double want[2] = { f.luma.sigma, f.chroma.sigma };
          gpu.add (0, ConstPlane (dev.get (), stride, w, h, layout), step, 0);
          gpu.add (1, ConstPlane (dev.get (), stride, w, h, layout), step, 0);
          gpu.add (1, ConstPlane (dev.get () + (step == 2 ? l.bytes : 0), stride, w, h,
                  layout), step, 0);
          gpu.estimate (2, 0);
          CUDAFILTERS_CHECK (cudaMemcpy (host_sigma, gpu.sigmas (), sizeof host_sigma,
                  cudaMemcpyDeviceToHost));
          CUDAFILTERS_CHECK (cudaMemcpy (&host_correlated, gpu.correlated (), sizeof (double),
                  cudaMemcpyDeviceToHost));
          for (int t = 0; t < 2; ++t)
            fail_unless (host_sigma[t] == want[t],
                "%dx%d %d bits step %d sigma %.0f correlation %.0f table %d: GPU %.17g, "
                "CPU %.17g", w, h, l.bits, step, sigma, correlation, t, host_sigma[t], want[t]);
          fail_unless (host_correlated == f.luma.correlated, "%dx%d: GPU's luma share %.17g, "
              "CPU's %.17g", w, h, host_correlated, f.luma.correlated);
          /* The luma alone, a gray frame. */
          gpu.add (0, ConstPlane (dev.get (), stride, w, h, layout), step, 0);
          gpu.estimate (1, 0);
          CUDAFILTERS_CHECK (cudaMemcpy (host_sigma, gpu.sigmas (), sizeof (double),
                  cudaMemcpyDeviceToHost));
          fail_unless (host_sigma[0] == estimate_noise_sigma (first, step),
              "%dx%d %d bits step %d sigma %.0f correlation %.0f, luma alone: GPU %.17g, "
              "CPU %.17g", w, h, l.bits, step, sigma, correlation, host_sigma[0],
              estimate_noise_sigma (first, step));
          if ((w - 2) * (h - 2) >= 1000 && sigma >= 12.0)
            fail_unless (want[0] > 0.5 * sigma, "%dx%d: the estimate %.3f is far "
                "below the noise, %.0f", w, h, want[0], sigma);
        }
}
GST_END_TEST;

/* Holds up the stream it is queued on (cudaLaunchHostFunc). */
static void CUDART_CB
hold_stream (void *)
{
  g_usleep (300 * 1000);
}

/* An estimator made while the legacy default stream is busy, then used at
 * once on a stream of its own (non-blocking, as the runners' are): its
 * tables start cleared on that stream. They were cleared by a cudaMemset
 * on the legacy stream, which a non-blocking stream does not wait for: the
 * clear could land between the estimate's pass and its reading (the first
 * estimate then reads 0), or after both (it reads whatever the memory held
 * before, here likely the counts of a plane of another noise level that
 * an earlier estimator left in its tables, unread, before it freed them). */
GST_START_TEST (test_noise_estimator_starts_cleared_on_its_stream)
{
  std::mt19937 rng (43);
  const int w = 640, h = 360;
  const SampleLayout layout{1, 8, 0};
  const std::vector<uint8_t> host = noisy_plane (w, h, size_t (w), layout, 8.0, rng,
      [](int x, int) { return 100 + 40 * std::sin (x / 30.0); });
  DeviceArray<uint8_t> dev (host.size ());
  CUDAFILTERS_CHECK (cudaMemcpy (dev.get (), host.data (), host.size (),
          cudaMemcpyHostToDevice));
  const ConstPlane plane (dev.get (), size_t (w), w, h, layout);
  const double want = estimate_noise_sigma (ConstPlane (host.data (), size_t (w), w, h,
          layout), 1);
  const std::vector<uint8_t> host_other = noisy_plane (w, h, size_t (w), layout, 40.0, rng,
      [](int, int y) { return 128 + 0.1 * y; });
  DeviceArray<uint8_t> dev_other (host_other.size ());
  CUDAFILTERS_CHECK (cudaMemcpy (dev_other.get (), host_other.data (), host_other.size (),
          cudaMemcpyHostToDevice));
  const ConstPlane other (dev_other.get (), size_t (w), w, h, layout);
  Stream stream;
  for (int round = 0; round < 3; ++round) {
    {
      /* Tables full of another plane's counts, freed unread. */
      NoiseEstimatorGpu earlier;
      for (int i = 0; i < 4; ++i) {
        earlier.add (0, other, 1, stream.get ());
        earlier.add (1, other, 1, stream.get ());
      }
      earlier.fill (stream.get ());
      CUDAFILTERS_CHECK (cudaStreamSynchronize (stream.get ()));
    }
    CUDAFILTERS_CHECK (cudaLaunchHostFunc (0, hold_stream, nullptr));
    NoiseEstimatorGpu gpu;
    gpu.add (0, plane, 1, stream.get ());
    gpu.estimate (1, stream.get ());
    double sigma = -2;
    CUDAFILTERS_CHECK (cudaMemcpyAsync (&sigma, gpu.sigmas (), sizeof sigma,
            cudaMemcpyDeviceToHost, stream.get ()));
    CUDAFILTERS_CHECK (cudaStreamSynchronize (stream.get ()));
    CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
    fail_unless (sigma == want, "round %d: the first estimate reads %.17g, the CPU %.17g",
        round, sigma, want);
  }
}
GST_END_TEST;

/* The noise level function on the GPU against the CPU, bit for bit: frames
 * whose brightness spans every band (a ramp across, a sine down) with noise
 * of several strengths, 8 to 16 bits, one channel or one of two
 * interleaved, from 1x1 (every band empty: -1) to 1080p (rows sampled);
 * the eight bands in one pass, in two of four and in four of two (GPUs
 * that give a block less shared memory); the two passes take a share of
 * 0.37 of the bands' coarse readings, the others none. The device sigmas
 * are poisoned first. */
GST_START_TEST (test_noise_curve_matches_cpu)
{
  std::mt19937 rng (41);
  NoiseCurveGpu one_pass (8), two_passes (4), four_passes (2);
  const double share = 0.37;
  DeviceArray<double> dev_share (1);
  CUDAFILTERS_CHECK (cudaMemcpy (dev_share.get (), &share, sizeof share,
          cudaMemcpyHostToDevice));
  const int sizes[][2] = { {1, 1}, {3, 3}, {37, 23}, {257, 131}, {1920, 1080} };
  struct Layout { int bytes, bits, shift; };
  const Layout layouts[] = { {1, 8, 0}, {2, 10, 6}, {2, 16, 0} };
  for (const auto & sz : sizes)
    for (const Layout & l : layouts)
      for (int step : {1, 2})
        for (double sigma : {0.0, 3.0, 20.0}) {
          const int w = sz[0], h = sz[1];
          const SampleLayout layout{l.bytes, l.bits, l.shift};
          const size_t stride = size_t (w) * step * l.bytes + 24;
          const std::vector<uint8_t> host = noisy_plane (w * step, h, stride, layout, sigma,
              rng, [&](int x, int y) {
                return 255.0 * (x / step) / std::max (w - 1, 1) + 20 * std::sin (y / 9.0);
              });
          DeviceArray<uint8_t> dev (host.size ());
          CUDAFILTERS_CHECK (cudaMemcpy (dev.get (), host.data (), host.size (),
                  cudaMemcpyHostToDevice));
          NoiseCurveTable table;
          table.add (ConstPlane (host.data (), stride, w, h, layout), step);
          const std::array<double, kNoiseBands> want_none = table.sigmas (0.0);
          const std::array<double, kNoiseBands> want_share = table.sigmas (share);
          int known = 0;
          for (NoiseCurveGpu * gpu : {&one_pass, &two_passes, &four_passes}) {
            CUDAFILTERS_CHECK (cudaMemset (const_cast<double *> (gpu->sigmas ()), 0xFF,
                    kNoiseBands * sizeof (double)));
            const bool shared = gpu == &two_passes;
            const std::array<double, kNoiseBands> & want = shared ? want_share : want_none;
            gpu->estimate (ConstPlane (dev.get (), stride, w, h, layout), step, 0,
                shared ? dev_share.get () : nullptr);
            double got[kNoiseBands];
            CUDAFILTERS_CHECK (cudaMemcpy (got, gpu->sigmas (), sizeof got,
                    cudaMemcpyDeviceToHost));
            known = 0;
            for (int b = 0; b < kNoiseBands; ++b) {
              fail_unless (got[b] == want[b], "%dx%d %d bits step %d sigma %.0f band %d, "
                  "%s: GPU %.17g, CPU %.17g", w, h, l.bits, step, sigma, b,
                  gpu == &one_pass ? "one pass" : gpu == &two_passes ? "two passes" :
                  "four passes", got[b], want[b]);
              known += want[b] >= 0;
            }
          }
          if (w * h >= 1920 * 1080)
            fail_unless (known == kNoiseBands, "%dx%d: %d bands estimated of %d", w, h,
                known, kNoiseBands);
          if (w * h < 1024)
            fail_unless (known == 0, "%dx%d: %d bands estimated from too few pixels",
                w, h, known);
        }
}
GST_END_TEST;

/* Automatic strength on the GPU against the CPU, over a stream whose noise
 * steps up and back down, with a restart: within one level on every frame,
 * luma and chroma, I420 and NV12, one frame and temporal windows (a
 * stream's first and last windows of two frames too, whose frame
 * difference reads the one after and the one before). The strengths come
 * from the same estimates and the same arithmetic on both sides, so only
 * the GPU's f16 distances (as at fixed strength) differ. */
GST_START_TEST (test_nlm_auto_matches_cpu)
{
  std::mt19937 rng (3939);
  const double sigmas[] = { 4, 4, 18, 18, 18, 6, 6, 6 };
  for (bool nv12 : {false, true})
    for (int radius : {0, 1}) {
      NlmGpu gpu;
      NlmCpu cpu;
      NlmParams p;
      p.auto_strength = true;
      p.temporal_radius = radius;
      p.noise_smoothing = 0.6f;
      gpu.set_params (p);
      cpu.set_params (p);
      const int w = 131, h = 77, count = 2 * radius + 1;
      std::vector<std::unique_ptr<YuvFrame>> frames;
      for (int i = 0; i < 8 + 2 * radius; ++i) {
        frames.push_back (std::make_unique<YuvFrame> (w, h, nv12));
        frames.back ()->fill_noisy (rng, sigmas[std::min (i, 7)]);
      }
      for (int i = 0; i < 8; ++i) {
        if (i == 5) {
          gpu.reset_history ();
          cpu.reset_history ();
        }
        /* Radius 1: the first frame's window as a stream's first (the frame
         * and the one after), the last as its last (the one before). */
        int first = i, n = count, center = radius;
        if (radius == 1 && i == 0) {
          first = 1;
          n = 2;
          center = 0;
        } else if (radius == 1 && i == 7) {
          n = 2;
        }
        std::vector<FramePlanes> host, dev;
        for (int f = 0; f < n; ++f) {
          host.push_back (frames[first + f]->host_in ());
          dev.push_back (frames[first + f]->device_in ());
        }
        YuvFrame got (w, h, nv12), want (w, h, nv12);
        got.poison_device ();
        gpu.enqueue_window (dev.data (), n, center, got.device_out (), 0);
        CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
        got.download ();
        cpu.process_window (host.data (), n, center, want.host_out ());
        const std::string what = std::string (nv12 ? "NV12" : "I420") + " radius " +
            std::to_string (radius) + " frame " + std::to_string (i);
        assert_bytes_close (got.y, want.y, 1, what + " luma");
        assert_bytes_close (got.u, want.u, 1, what + " U");
        assert_bytes_close (got.v, want.v, 1, what + " V");
      }
    }
}
GST_END_TEST;

/* Caps the shared memory the engines built in its scope may use per block
 * (device_limits.h), as a smaller GPU has; restores the cap when it ends. */
struct SharedMemoryCapScope {
  size_t saved = shared_memory_cap ();
  explicit SharedMemoryCapScope (size_t bytes) {
    set_shared_memory_cap (bytes);
  }
  ~SharedMemoryCapScope () {
    set_shared_memory_cap (saved);
  }
};

/* The engines on GPUs with less shared memory per block than the H100 and
 * H200 have: 64 KB (compute capability 7.5) and 99 KB (8.6, 8.9, 12.x),
 * which the cap stands in for. Each engine is built under the cap, and
 * every frame equals the CPU path (NLM within one level, as everywhere):
 * cudanlm's automatic strength on I420 (one frame, and a window of three),
 * histogram equalization (in every launch mode) and CLAHE (8x8 tiles and
 * one tile) of 8 to 16 bits, with and without temporal smoothing, outputs
 * poisoned. At 16 bits a tile's or a frame's counters (128 KB) do not fit
 * a block there: the engines count the levels in slices. Unsharp masking
 * at 8 and 16 bits runs up to the widest blur the device holds, and refuses
 * a wider one with an error that names shared memory. */
GST_START_TEST (test_engines_on_smaller_gpus)
{
  int device = 0, optin = 0;
  CUDAFILTERS_CHECK (cudaGetDevice (&device));
  CUDAFILTERS_CHECK (cudaDeviceGetAttribute (&optin,
          cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  std::mt19937 rng (7575);
  for (size_t cap : {size_t (64 * 1024), size_t (99 * 1024)}) {
    if (size_t (optin) < cap)
      continue;
    SharedMemoryCapScope scope (cap);
    const std::string at = std::to_string (cap / 1024) + " KB: ";

    /* NLM, automatic strength. */
    for (int radius : {0, 1}) {
      NlmGpu gpu;
      NlmCpu cpu;
      NlmParams p;
      p.auto_strength = true;
      p.temporal_radius = radius;
      gpu.set_params (p);
      cpu.set_params (p);
      const int w = 197, h = 111, count = 2 * radius + 1;
      std::vector<std::unique_ptr<YuvFrame>> frames;
      std::vector<FramePlanes> host, dev;
      for (int f = 0; f < count; ++f) {
        frames.push_back (std::make_unique<YuvFrame> (w, h, false));
        frames.back ()->fill_noisy (rng, 6.0);
        host.push_back (frames.back ()->host_in ());
        dev.push_back (frames.back ()->device_in ());
      }
      YuvFrame got (w, h, false), want (w, h, false);
      got.poison_device ();
      gpu.enqueue_window (dev.data (), count, radius, got.device_out (), 0);
      CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
      got.download ();
      cpu.process_window (host.data (), count, radius, want.host_out ());
      const std::string what = at + "NLM radius " + std::to_string (radius);
      assert_bytes_close (got.y, want.y, 1, what + " luma");
      assert_bytes_close (got.u, want.u, 1, what + " U");
      assert_bytes_close (got.v, want.v, 1, what + " V");
    }

    const int w = 1921, h = 1081;
    const size_t stride = stride16 (2 * w);
    std::vector<uint8_t> src (stride * h), gpu (stride * h), ref (stride * h);
    auto run = [&](GpuPlaneFilter & engine, auto & cpu, const DeepLayout & l,
        GpuFrameRunner & runner, const std::string & what) {
      const SampleLayout samples = l.bits > 8 ?
          SampleLayout { 2, l.bits, l.shift } : SampleLayout { };
      const size_t row = size_t (samples.bytes) * w;
      for (int frame = 0; frame < 2; ++frame) {
        memset (gpu.data (), 0xA5, stride * h);
        memset (ref.data (), 0xA5, stride * h);
        if (l.bits > 8) {
          fill_deep_frame (rng, src.data (), stride, w, h, l.bits, l.shift,
              frame);
        } else {
          for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
              src[y * stride + x] = uint8_t (frame ? rng () % 200 :
                  (x + 3 * y) % 180);
        }
        const ConstPlane in (src.data (), stride, w, h, samples);
        runner.process_host (engine, in, Plane (gpu.data (), stride, w, h,
                samples));
        cpu.process (in, Plane (ref.data (), stride, w, h, samples));
        for (int y = 0; y < h; ++y)
          fail_unless (memcmp (&gpu[y * stride], &ref[y * stride], row) == 0,
              "%s frame %d: row %d differs from the CPU", what.c_str (),
              frame, y);
      }
    };
    const DeepLayout layouts[] = { {8, 0, 0}, {10, 6, 0}, {12, 0, 0},
      {14, 0, 0}, {16, 0, 0} };

    /* Histogram equalization, in every launch mode. */
    for_each_deep_setup (7575, { layouts[0], layouts[1], layouts[2],
            layouts[3], layouts[4] }, [&](HistEqGpu & eq, HistEqCpu & cpu,
            GpuFrameRunner & runner, std::mt19937 &, const DeepLayout & l, int,
            SampleLayout, const std::string & setup) {
          run (eq, cpu, l, runner, at + "histogram, " + setup);
        });

    /* Unsharp masking: the widest blurs (radius 16: 97 taps at 8 bits, 129
     * at 16) need 53 and 90 KB in a block. At 64 KB the 16-bit one is
     * refused with an error that says so, and radius 12 (97 taps) runs. */
    for (double radius : {12.0, 16.0}) {
      SharpenParams p;
      p.radius = radius;
      SharpenGpu sharpen;
      SharpenCpu cpu;
      sharpen.set_params (p);
      cpu.set_params (p);
      GpuFrameRunner runner (kPoisoned);
      for (const DeepLayout & l : {layouts[0], layouts[4]}) {
        const std::string what = at + "unsharp radius " +
            std::to_string (int (radius)) + ", " + std::to_string (l.bits) +
            " bits";
        if (cap < 90 * 1024 && l.bits == 16 && radius == 16.0) {
          std::string error;
          try {
            run (sharpen, cpu, l, runner, what);
          } catch (const std::exception & e) {
            error = e.what ();
          }
          fail_unless (error.find ("shared memory") != std::string::npos,
              "%s: refused with \"%s\"", what.c_str (), error.c_str ());
          continue;
        }
        run (sharpen, cpu, l, runner, what);
      }
    }

    /* CLAHE. */
    for (const ClaheParams & p : {ClaheParams { 2.0, 8, 8, 0.0 },
            ClaheParams { 2.0, 1, 1, 0.0 }, ClaheParams { 3.0, 8, 8, 0.5 },
            ClaheParams { 0.0, 1, 1, 0.5 }}) {
      ClaheGpu clahe;
      ClaheCpu cpu;
      clahe.set_params (p);
      cpu.set_params (p);
      GpuFrameRunner runner (kPoisoned);
      for (const DeepLayout & l : layouts)
        run (clahe, cpu, l, runner, at + "CLAHE " + std::to_string (p.tiles_x) +
            "x" + std::to_string (p.tiles_y) + " smoothing " +
            std::to_string (p.temporal_smoothing) + ", " +
            std::to_string (l.bits) + " bits");
    }
  }
}
GST_END_TEST;

/* The frame difference's estimate on the GPU (FrameDifferenceGpu's tables,
 * read as automatic strength reads them) against the CPU's, exactly: 8-,
 * 10- and 16-bit frames, small, 1080p and 4K (whose rows of blocks are
 * sampled), the second frame still or panned by a pixel, read by blocks of
 * 256 and of 96 threads: the estimate and all nine shifts' medians; every
 * case twice through one set of tables, so tables the reading did not
 * clear would show. */
GST_START_TEST (test_frame_difference_matches_cpu)
{
  std::mt19937 rng (64);
  struct Size { int w, h; };
  struct Layout { int bits, shift; };
  cudafilters::FrameDifferenceGpu gpu;
  for (const Size size : {Size{131, 77}, Size{1920, 1080}, Size{3840, 2160}})
    for (const Layout layout : {Layout{8, 0}, Layout{10, 6}, Layout{16, 0}})
      for (int pan : {0, 1}) {
        const int w = size.w, h = size.h, bytes = layout.bits > 8 ? 2 : 1;
        const int base_w = w + 1;
        std::vector<int> base (size_t (base_w) * h);
        std::uniform_int_distribution<int> texture (40, 200);
        for (int &v : base)
          v = texture (rng);
        const double sigma = 2.0 + 3.0 * (rng () % 5);
        std::vector<uint8_t> host[2];
        DevicePlane dev[2];
        cudafilters::ConstPlane hp[2], dp[2];
        const cudafilters::SampleLayout samples{bytes, layout.bits, layout.shift};
        for (int f = 0; f < 2; ++f) {
          const std::vector<double> noise = test::correlated_noise (w, h, sigma, 4.0, rng);
          host[f].resize (size_t (w) * h * bytes);
          for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
              const size_t i = size_t (y) * w + x;
              const int v8 = std::clamp (int (std::lround (
                          base[size_t (y) * base_w + x + (f ? pan : 0)] + noise[i])), 0, 255);
              if (bytes == 1)
                host[f][i] = uint8_t (v8);
              else {
                const uint16_t word = uint16_t (((v8 << (layout.bits - 8)) |
                        (rng () & ((1u << (layout.bits - 8)) - 1))) << layout.shift);
                std::memcpy (&host[f][2 * i], &word, 2);
              }
            }
          dev[f].reserve (w * bytes, h);
          CUDAFILTERS_CHECK (cudaMemcpy2D (dev[f].data (), dev[f].pitch (), host[f].data (),
                  size_t (w) * bytes, size_t (w) * bytes, h, cudaMemcpyHostToDevice));
          hp[f] = cudafilters::ConstPlane (host[f].data (), size_t (w) * bytes, w, h, samples);
          dp[f] = cudafilters::ConstPlane (dev[f].data (), dev[f].pitch (), w, h, samples);
        }
        const cudafilters::FrameDifference want = cudafilters::frame_difference (hp[0], hp[1]);
        fail_unless (want.sigma > 0.5 * sigma && want.sigma < 2.0 * sigma,
            "%dx%d: the CPU read %.3f of %.1f", w, h, want.sigma, sigma);
        fail_unless (want.still == (pan ? 0.0 : 1.0), "%dx%d, pan %d: the CPU read still %.3f",
            w, h, pan, want.still);
        double want_medians[cudafilters::kDifferenceShifts];
        fail_unless (cudafilters::difference_medians (hp[0], hp[1], want_medians) > 0);
        for (int threads : {256, 96}) {
          const cudafilters::DifferenceTables t = gpu.fill (dp[0], dp[1], 0);
          const test::DifferenceRead got = test::read_difference (t, threads, 0);
          fail_unless (got.estimate.sigma == want.sigma && got.estimate.still == want.still,
              "%dx%d, %d bits, pan %d, %d threads: GPU %.12f (still %.3f), CPU %.12f (%.3f)",
              w, h, layout.bits, pan, threads, got.estimate.sigma, got.estimate.still,
              want.sigma, want.still);
          for (int s = 0; s < cudafilters::kDifferenceShifts; ++s)
            fail_unless (got.medians[s] == want_medians[s],
                "%dx%d, %d bits, pan %d, %d threads, shift %d: GPU median %.12f, CPU %.12f",
                w, h, layout.bits, pan, threads, s, got.medians[s], want_medians[s]);
        }
      }
}
GST_END_TEST;

/* Given and automatic strength in turn on one engine, frame to frame, the
 * given strength changing between frames: the kernels read their weight
 * coefficients from one device buffer, which the host writes when a given
 * strength changes and nlm_auto_kernel on automatic frames. Each frame is
 * bit for bit what an engine without that history gives (a new NlmGpu at a
 * given strength; at automatic strength an engine that has filtered only
 * the automatic frames, which follows the same noise), so a stale
 * coefficient shows; and within one level of an NlmCpu taken through the
 * same sequence (the GPU's f16 distances keep it from the CPU's bit for
 * bit). I420 and NV12, one frame and temporal windows. */
GST_START_TEST (test_nlm_strength_switches)
{
  std::mt19937 rng (4040);
  struct Step { bool automatic; float h, sigma, chroma; };
  /* Automatic frames have h and noise-sigma set too, which they must not
   * use. */
  const Step steps[] = {
    {false, 10, 0, -1},  /* the first coefficients */
    {false, 10, 0, -1},  /* the same: not written again */
    {false, 25, 6, 8},   /* new ones, and the clamping kernel */
    {true, 40, 0, -1},
    {true, 3, 9, -1},    /* the noise history goes on */
    {false, 25, 6, 8},   /* as last written by the host, overwritten since */
    {false, 7, 0, 0},    /* chroma carried */
    {true, 10, 0, -1},
    {false, 12, 3, -1},
    {false, 12, 3, 5},   /* chroma's alone change */
  };
  const int n = G_N_ELEMENTS (steps);
  const double sigmas[] = { 6, 6, 14, 14, 4, 4, 10, 10, 8, 8 };
  for (bool nv12 : {false, true})
    for (int radius : {0, 1}) {
      const int w = 131, h = 77, count = 2 * radius + 1;
      std::vector<std::unique_ptr<YuvFrame>> frames;
      for (int i = 0; i < n + 2 * radius; ++i) {
        frames.push_back (std::make_unique<YuvFrame> (w, h, nv12));
        YuvFrame & fr = *frames.back ();
        std::normal_distribution<double> noise (0.0, sigmas[std::min (i, n - 1)]);
        int k = 0;
        for (auto *plane : {&fr.y, &fr.u, &fr.v})
          for (auto & b : *plane) {
            const double clean = 90 + 40 * std::sin (k++ / 30.0);
            b = uint8_t (std::clamp (int (std::lround (clean + noise (rng))), 0, 255));
          }
        fr.upload ();
      }
      NlmGpu gpu, automatic_only;
      NlmCpu cpu;
      NlmParams automatic;
      automatic.temporal_radius = radius;
      automatic_only.set_params (automatic);
      for (int i = 0; i < n; ++i) {
        const Step & st = steps[i];
        NlmParams p;
        p.auto_strength = st.automatic;
        p.h = st.h;
        p.noise_sigma = st.sigma;
        p.chroma_h = st.chroma;
        p.temporal_radius = radius;
        gpu.set_params (p);
        cpu.set_params (p);
        std::vector<FramePlanes> host, dev;
        for (int f = 0; f < count; ++f) {
          host.push_back (frames[i + f]->host_in ());
          dev.push_back (frames[i + f]->device_in ());
        }
        YuvFrame got (w, h, nv12), alone (w, h, nv12), want (w, h, nv12);
        got.poison_device ();
        alone.poison_device ();
        gpu.enqueue_window (dev.data (), count, radius, got.device_out (), 0);
        if (st.automatic) {
          automatic_only.enqueue_window (dev.data (), count, radius,
              alone.device_out (), 0);
        } else {
          NlmGpu fresh;
          fresh.set_params (p);
          fresh.enqueue_window (dev.data (), count, radius, alone.device_out (), 0);
        }
        CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
        got.download ();
        alone.download ();
        cpu.process_window (host.data (), count, radius, want.host_out ());
        const std::string what = std::string (nv12 ? "NV12" : "I420") + " radius " +
            std::to_string (radius) + " frame " + std::to_string (i) +
            (st.automatic ? " automatic" : " strength " + std::to_string (st.h));
        fail_unless (got.y == alone.y, "%s: luma differs from an engine without "
            "the switches", what.c_str ());
        fail_unless (got.u == alone.u && got.v == alone.v, "%s: chroma differs "
            "from an engine without the switches", what.c_str ());
        assert_bytes_close (got.y, want.y, 1, what + " luma");
        assert_bytes_close (got.u, want.u, 1, what + " U");
        assert_bytes_close (got.v, want.v, 1, what + " V");
      }
    }
}
GST_END_TEST;

/* @count frames of random samples (YuvFrame::randomize), uploaded. */
static std::vector<std::unique_ptr<YuvFrame>>
random_frames (std::mt19937 & rng, int count, int w, int h, bool nv12)
{
  std::vector<std::unique_ptr<YuvFrame>> frames;
  for (int i = 0; i < count; ++i) {
    frames.push_back (std::make_unique<YuvFrame> (w, h, nv12));
    frames.back ()->randomize (rng);
    frames.back ()->upload ();
  }
  return frames;
}

/* NLM at a fixed strength over windows of radius 1. */
static NlmParams
fixed_window_params ()
{
  NlmParams p;
  p.auto_strength = false;
  p.temporal_radius = 1;
  return p;
}

/* GpuWindowRunner fed from the device and filtering into pageable host
 * planes (it stages nothing on the way in, so the download needs staging of
 * its own) gives the same bytes as the same frames fed from the host, I420
 * and NV12, radius 1, outputs poisoned first. */
GST_START_TEST (test_window_runner_device_in_host_out)
{
  std::mt19937 rng (31);
  NlmGpu nlm;
  nlm.set_params (fixed_window_params ());
  for (bool nv12 : {false, true}) {
    const auto frames = random_frames (rng, 3, 641, 479, nv12);
    GpuWindowRunner from_device (kPoisoned), from_host (kPoisoned);
    from_device.reset (1);
    from_host.reset (1);
    std::vector<std::unique_ptr<YuvFrame>> got, want;
    auto output = [&](GpuWindowRunner & runner, std::vector<std::unique_ptr<YuvFrame>> & outs) {
      outs.push_back (std::make_unique<YuvFrame> (641, 479, nv12));
      for (auto *plane : {&outs.back ()->y, &outs.back ()->u, &outs.back ()->v})
        std::fill (plane->begin (), plane->end (), 0xA5);
      runner.output_host (nlm, outs.back ()->host_out ());
    };
    for (size_t i = 0; i < frames.size (); ++i) {
      from_device.push_device (frames[i]->device_in (), 0);
      from_host.push_host (frames[i]->host_in ());
      while (from_device.ready (i + 1 == frames.size ()))
        output (from_device, got);
      while (from_host.ready (i + 1 == frames.size ()))
        output (from_host, want);
    }
    fail_unless_equals_int (got.size (), frames.size ());
    fail_unless_equals_int (want.size (), frames.size ());
    for (size_t i = 0; i < got.size (); ++i) {
      fail_unless (got[i]->y == want[i]->y, "luma of frame %zu", i);
      fail_unless (got[i]->u == want[i]->u && got[i]->v == want[i]->v,
          "chroma of frame %zu", i);
    }
  }
}
GST_END_TEST;

/* GpuWindowRunner::push_device_unsettled leaves the copy of each frame to
 * the host wait of an output, or of settle_push: frames pushed that way and
 * filtered into device planes give the bytes of the same frames pushed from
 * the host, I420 and NV12 of odd sizes (rows copied partly byte by byte),
 * radius 1, outputs poisoned first. Each source frame is overwritten on a
 * stream of its own as soon as settle_push returns. With every output
 * queued for its consumers' stream (no host wait), each copy queues behind
 * the output before it, held 20 ms by its consumers' earlier work, and only
 * settle_push waits for it: a copy not waited for reads the overwrite. */
GST_START_TEST (test_window_runner_unsettled_push)
{
  std::mt19937 rng (41);
  NlmGpu nlm;
  nlm.set_params (fixed_window_params ());
  Stream other, users;
  const int w = 1921, h = 1079;
  for (bool queued : {true, false})
    for (bool nv12 : {false, true}) {
      const auto frames = random_frames (rng, 5, w, h, nv12);
      GpuWindowRunner unsettled (kPoisoned), from_host (kPoisoned);
      unsettled.reset (1);
      from_host.reset (1);
      std::vector<std::unique_ptr<YuvFrame>> got, want;
      for (size_t i = 0; i < frames.size (); ++i) {
        const bool last = i + 1 == frames.size ();
        unsettled.push_device_unsettled (frames[i]->device_in ());
        while (unsettled.ready (last)) {
          got.push_back (std::make_unique<YuvFrame> (w, h, nv12));
          got.back ()->poison_device ();
          /* (the legacy stream's poison, not the runner's queued work) */
          CUDAFILTERS_CHECK (cudaStreamSynchronize (nullptr));
          /* The output's writes wait for its consumers' earlier work: 20 ms
           * of it hold the runner's stream, and the next copy behind it. */
          if (queued)
            test::queue_slow_copy (nullptr, nullptr, 0, 20000000ull,
                users.get ());
          unsettled.output_device (nlm, got.back ()->device_out (),
              queued ? users.get () : nullptr, queued);
        }
        unsettled.settle_push ();
        YuvFrame & fr = *frames[i];
        CUDAFILTERS_CHECK (cudaMemset2DAsync (fr.dy.data (), fr.dy.pitch (), 0,
                w, h, other.get ()));
        CUDAFILTERS_CHECK (cudaMemset2DAsync (fr.du.data (), fr.du.pitch (), 0,
                fr.u_row (), fr.ch, other.get ()));
        CUDAFILTERS_CHECK (cudaStreamSynchronize (other.get ()));
      }
      /* The same frames from the host (their host copies are untouched),
       * after the loop above so that nothing delays its next push. */
      for (size_t i = 0; i < frames.size (); ++i) {
        const bool last = i + 1 == frames.size ();
        from_host.push_host (frames[i]->host_in ());
        while (from_host.ready (last)) {
          want.push_back (std::make_unique<YuvFrame> (w, h, nv12));
          for (auto *plane : {&want.back ()->y, &want.back ()->u,
                  &want.back ()->v})
            std::fill (plane->begin (), plane->end (), 0xA5);
          from_host.output_host (nlm, want.back ()->host_out ());
        }
      }
      CUDAFILTERS_CHECK (cudaStreamSynchronize (users.get ()));
      fail_unless_equals_int (got.size (), frames.size ());
      fail_unless_equals_int (want.size (), frames.size ());
      for (size_t i = 0; i < got.size (); ++i) {
        got[i]->download ();
        fail_unless (got[i]->y == want[i]->y, "luma of frame %zu (%s, %s)", i,
            nv12 ? "NV12" : "I420", queued ? "queued" : "waited");
        fail_unless (got[i]->u == want[i]->u && got[i]->v == want[i]->v,
            "chroma of frame %zu (%s, %s)", i, nv12 ? "NV12" : "I420",
            queued ? "queued" : "waited");
      }
    }
}
GST_END_TEST;

/* GpuWindowRunner::filter_host (radius 0, one host wait for the frame)
 * gives the bytes push_host then output_host give, I420 and NV12, from and
 * to pageable and page-locked planes, outputs poisoned first: an output
 * returned before its copy landed shows as poison. The source is zeroed as
 * soon as the call returns. With a radius, or a frame held, it refuses. */
GST_START_TEST (test_window_runner_filter_host)
{
  std::mt19937 rng (37);
  NlmParams p;
  p.auto_strength = false;
  NlmGpu nlm;
  nlm.set_params (p);
  for (bool nv12 : {false, true})
    for (bool page_locked : {false, true}) {
      GpuWindowRunner one_wait (kPoisoned), two_waits (kPoisoned);
      one_wait.reset (0);
      two_waits.reset (0);
      for (int i = 0; i < 3; ++i) {
        YuvFrame in (641, 479, nv12), got (641, 479, nv12), want (641, 479, nv12);
        in.randomize (rng);
        for (YuvFrame * f : {&got, &want})
          for (auto *plane : {&f->y, &f->u, &f->v})
            std::fill (plane->begin (), plane->end (), 0xA5);
        two_waits.push_host (in.host_in ());
        two_waits.output_host (nlm, want.host_out ());
        if (!page_locked) {
          one_wait.filter_host (nlm, in.host_in (), got.host_out ());
          for (auto *plane : {&in.y, &in.u, &in.v})
            std::fill (plane->begin (), plane->end (), 0);
        } else {
          /* Page-aligned registrations of their own, source and output. */
          const int cw = in.cw, ch = in.ch, ur = in.u_row ();
          RegisteredImage iy (in.width, in.height, in.width), iu (ur, ch, ur),
              iv (cw, ch, cw), oy (in.width, in.height, in.width), ou (ur, ch, ur),
              ov (cw, ch, cw);
          std::copy (in.y.begin (), in.y.end (), iy.mem.get ());
          std::copy (in.u.begin (), in.u.end (), iu.mem.get ());
          std::copy (in.v.begin (), in.v.end (), iv.mem.get ());
          for (RegisteredImage * o : {&oy, &ou, &ov})
            memset (o->mem.get (), 0xA5, o->stride * o->height);
          FramePlanes src;
          FramePlanesOut dst;
          YuvFrame::fill (src, (const uint8_t *) iy.mem.get (), iy.stride,
              (const uint8_t *) iu.mem.get (), iu.stride,
              (const uint8_t *) iv.mem.get (), iv.stride, in.width, in.height, cw, ch,
              nv12);
          YuvFrame::fill (dst, oy.mem.get (), oy.stride, ou.mem.get (), ou.stride,
              ov.mem.get (), ov.stride, in.width, in.height, cw, ch, nv12);
          one_wait.filter_host (nlm, src, dst);
          for (RegisteredImage * i : {&iy, &iu, &iv})
            memset (i->mem.get (), 0, i->stride * i->height);
          std::copy (oy.mem.get (), oy.mem.get () + got.y.size (), got.y.begin ());
          std::copy (ou.mem.get (), ou.mem.get () + got.u.size (), got.u.begin ());
          std::copy (ov.mem.get (), ov.mem.get () + got.v.size (), got.v.begin ());
        }
        const std::string what = std::string (nv12 ? "NV12" : "I420") +
            (page_locked ? " page-locked" : " pageable") + " frame " + std::to_string (i);
        fail_unless (got.y == want.y, "%s: luma differs", what.c_str ());
        fail_unless (got.u == want.u && got.v == want.v, "%s: chroma differs",
            what.c_str ());
      }
    }
  YuvFrame in (64, 48, true), out (64, 48, true);
  auto refused = [&](GpuWindowRunner & runner) {
    try {
      runner.filter_host (nlm, in.host_in (), out.host_out ());
    } catch (const std::logic_error &) {
      return true;
    }
    return false;
  };
  GpuWindowRunner with_radius (kPoisoned);
  with_radius.reset (1);
  fail_unless (refused (with_radius), "filter_host took a frame with radius 1");
  GpuWindowRunner holding (kPoisoned);
  holding.reset (0);
  holding.push_host (in.host_in ());
  fail_unless (refused (holding), "filter_host took a frame with one held");
  holding.output_host (nlm, out.host_out ());
  fail_unless (!refused (holding), "filter_host refused once nothing was held");
}
GST_END_TEST;

/* NlmGpu::enqueue_window refuses, before it queues anything, the windows
 * NlmCpu::process_window refuses: none, more than 7 frames, a centre outside the
 * window, frames of another size, chroma on some frames only, and chroma of
 * another size. */
GST_START_TEST (test_nlm_window_refuses_bad_frames)
{
  std::vector<uint8_t> bytes (16 * 9);
  cudafilters::FramePlanes fa, fb;
  fa.luma = cudafilters::ConstPlane (bytes.data (), 16, 16, 8);
  fb.luma = cudafilters::ConstPlane (bytes.data (), 16, 16, 9);
  cudafilters::FramePlanesOut dst;
  dst.luma = cudafilters::Plane (bytes.data (), 16, 16, 8);
  NlmGpu nlm;
  auto refused = [&](const cudafilters::FramePlanes * w, int count, int center) {
    try {
      nlm.enqueue_window (w, count, center, dst, 0);
    } catch (const std::invalid_argument &) {
      return true;
    }
    return false;
  };
  const std::vector<cudafilters::FramePlanes> eight (8, fa);
  fail_unless (refused (eight.data (), 0, 0), "empty window");
  fail_unless (refused (eight.data (), 8, 3), "8 frames");
  fail_unless (refused (eight.data (), 3, 3), "centre past the window");
  const cudafilters::FramePlanes sizes[] = { fa, fb };
  fail_unless (refused (sizes, 2, 0), "frames of two sizes");
  cudafilters::FramePlanes coloured = fa, narrow = fa;
  coloured.u = coloured.v = cudafilters::ConstPlane (bytes.data (), 16, 8, 4);
  narrow.u = narrow.v = cudafilters::ConstPlane (bytes.data (), 16, 4, 4);
  const cudafilters::FramePlanes mixed[] = { fa, coloured };
  fail_unless (refused (mixed, 2, 0), "chroma on one frame only");
  dst.u = dst.v = cudafilters::Plane (bytes.data (), 16, 8, 4);
  const cudafilters::FramePlanes chroma_sizes[] = { coloured, narrow };
  fail_unless (refused (chroma_sizes, 2, 0), "chroma of two sizes");
  fail_unless_equals_int (cudaGetLastError (), cudaSuccess);
}
GST_END_TEST;

/* Every GPU filter, and the runner in front of them, refuses planes that do
 * not describe memory it can read and write before it queues any work
 * (planes of other sizes, no data, no rows, rows longer than the stride,
 * one-byte samples of other than 8 bits, an invalid layout, an output over
 * the source), and parameters that are not valid; the output is not
 * written and no CUDA error is left. */
GST_START_TEST (test_gpu_engines_refuse_bad_planes_and_params)
{
  const int w = 24, h = 16;
  DevicePlane src_mem, dst_mem;
  src_mem.reserve (2 * w, h);
  dst_mem.reserve (2 * w, h);
  const size_t pitch = src_mem.pitch ();
  fail_unless (dst_mem.pitch () == pitch);
  Stream stream;
  HistEqGpu histeq;
  ClaheGpu clahe;
  SharpenGpu sharpen;
  NlmGpu nlm;
  NlmParams given;
  given.auto_strength = false;
  given.patch_size = 3;
  given.search_size = 5;
  nlm.set_params (given);
  struct Filter {
    const char *what;
    GpuPlaneFilter *filter;
  };
  const Filter filters[] = { {"HistEqGpu", &histeq}, {"ClaheGpu", &clahe},
    {"SharpenGpu", &sharpen}, {"NlmGpu", &nlm} };
  GpuFrameRunner runner (kPoisoned);
  std::vector<uint8_t> after (pitch * h);
  for (const Filter & f : filters)
    for (int through_runner = 0; through_runner < 2; ++through_runner)
      for (const test::BadPlanes & sp : test::kBadPlanes) {
        CUDAFILTERS_CHECK (cudaMemset (dst_mem.data (), 0xA5, pitch * h));
        ConstPlane src (src_mem.data (), pitch, w, h);
        Plane dst (dst_mem.data (), pitch, w, h);
        sp.spoil (src, dst);
        bool refused = false;
        std::string other;
        try {
          if (through_runner)
            runner.process_device (*f.filter, src, dst);
          else
            f.filter->enqueue (src, dst, stream.get ());
        } catch (const std::invalid_argument &) {
          refused = true;
        } catch (const std::exception & e) {
          other = e.what ();
        }
        fail_unless (refused, "%s%s took %s%s%s", f.what,
            through_runner ? " through the runner" : "", sp.what,
            other.empty () ? "" : ", then failed: ", other.c_str ());
        stream.synchronize ();
        fail_unless_equals_int (cudaGetLastError (), cudaSuccess);
        CUDAFILTERS_CHECK (cudaMemcpy (after.data (), dst_mem.data (), after.size (),
                cudaMemcpyDeviceToHost));
        fail_unless (std::all_of (after.begin (), after.end (),
                [](uint8_t v) { return v == 0xA5; }), "%s wrote the output given %s",
            f.what, sp.what);
      }

  auto refused = [](auto & engine, const auto & params) {
    try {
      engine.set_params (params);
    } catch (const std::invalid_argument &) {
      return true;
    }
    return false;
  };
  HistEqParams smooth;
  smooth.temporal_smoothing = 2;
  fail_unless (refused (histeq, smooth), "histeq temporal smoothing 2");
  fail_unless (refused (clahe, ClaheParams {2.0, 0, 4}), "clahe tiles-x 0");
  SharpenParams wide;
  wide.radius = 40;
  fail_unless (refused (sharpen, wide), "sharpen radius 40");
  NlmParams big_patch = given;
  big_patch.patch_size = 17;
  big_patch.search_size = 21;
  fail_unless (refused (nlm, big_patch), "nlm patch-size 17");
  /* Each filter still runs with what it had. */
  for (const Filter & f : filters)
    runner.process_device (*f.filter, ConstPlane (src_mem.data (), pitch, w, h),
        Plane (dst_mem.data (), pitch, w, h));
  fail_unless_equals_int (cudaGetLastError (), cudaSuccess);
}
GST_END_TEST;

/* An owner of device or page-locked memory whose growth fails keeps what it
 * had: the same memory, usable, and the same capacity. */
GST_START_TEST (test_failed_reserve_keeps_memory)
{
  const int kHuge = 1 << 30;  /* rows of a GiB: 2^50 bytes in all */
  cudafilters::DevicePlane plane;
  plane.reserve (640, 480);
  uint8_t *const data = plane.data ();
  const size_t pitch = plane.pitch ();
  fail_unless (data != nullptr);
  bool threw = false;
  try {
    plane.reserve (kHuge, 1 << 20);
  } catch (const cudafilters::CudaError &) {
    threw = true;
  }
  fail_unless (threw, "a 2^50-byte device plane was allocated");
  fail_unless (plane.data () == data && plane.pitch () == pitch);
  plane.reserve (320, 240);
  fail_unless (plane.data () == data);
  fail_unless_equals_int (cudaMemset2D (plane.data (), plane.pitch (), 7, 640,
          480), cudaSuccess);

  cudafilters::PinnedBuffer pinned;
  pinned.reserve (4096);
  uint8_t *const host = pinned.data ();
  threw = false;
  try {
    pinned.reserve (size_t (1) << 50);
  } catch (const cudafilters::CudaError &) {
    threw = true;
  }
  fail_unless (threw, "2^50 bytes of page-locked memory were allocated");
  fail_unless (pinned.data () == host);
  pinned.reserve (1024);
  fail_unless (pinned.data () == host);
  memset (pinned.data (), 7, 4096);
}
GST_END_TEST;

/* Packed frames to planes and back on the GPU equal the CPU's conversions
 * byte for byte: every layout kind, widths around the kernels' chunks of
 * four units (and a 4:2:2 row's odd last pixel), rows aligned for the wide
 * path and rows one byte off, which take the plain one. */
GST_START_TEST (test_packed_conversions_match_cpu)
{
  struct Layout {
    const char *name;
    PackedPixels pixels;
  };
  PackedPixels rgba, bgr, argb, yuy2, uyvy;
  bgr.unit_bytes = 3;
  bgr.r = 2, bgr.b = 0;
  argb.r = 1, argb.g = 2, argb.b = 3;
  yuy2.kind = uyvy.kind = PackedPixels::Kind::kYuv422;
  uyvy.u = 0, uyvy.y0 = 1, uyvy.v = 2, uyvy.y1 = 3;
  const Layout layouts[] = {{"RGBA", rgba}, {"BGR", bgr}, {"ARGB", argb},
    {"YUY2", yuy2}, {"UYVY", uyvy}};
  std::mt19937 rng (11);
  Stream stream;
  for (const Layout & l : layouts)
    for (int width : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 64, 65, 130})
      for (int off : {0, 1}) {
        PackedPixels px = l.pixels;
        px.width = width;
        const int h = 3;
        const size_t row = packed_row_bytes (px);
        const size_t stride = off ? row + 3 : (row + 15) / 16 * 16;
        const int cw = packed_chroma_width (px);
        std::vector<uint8_t> src = random_bytes (rng, stride * h, 0, 255);
        DevicePlane dev_src, dev_dst, planes[6];
        dev_src.reserve ((int) stride + 16, h);
        dev_dst.reserve ((int) stride + 16, h);
        const ConstPlane d_src (dev_src.data () + off, stride, (int) row, h);
        const Plane d_dst (dev_dst.data () + off, stride, (int) row, h);
        CUDAFILTERS_CHECK (cudaMemcpy2D (dev_src.data () + off, stride,
                src.data (), stride, row, h, cudaMemcpyHostToDevice));
        FramePlanesOut dp;
        int widths[3] = {width, cw, cw};
        Plane *targets[3] = {&dp.luma, &dp.u, &dp.v};
        for (int c = 0; c < 3; ++c) {
          planes[c].reserve (widths[c] + 16, h);
          *targets[c] = Plane (planes[c].data () + off, planes[c].pitch (),
              widths[c], h);
        }
        /* CPU planes, tight rows. */
        std::vector<uint8_t> hy (size_t (width) * h), hu (size_t (cw) * h),
            hv (size_t (cw) * h);
        FramePlanesOut hp;
        hp.luma = Plane (hy.data (), width, width, h);
        hp.u = Plane (hu.data (), cw, cw, h);
        hp.v = Plane (hv.data (), cw, cw, h);
        const ConstPlane h_src (src.data (), stride, (int) row, h);
        unpack_cpu (h_src, px, hp);
        /* The copies above ran on the legacy stream, which the runner's
         * non-blocking stream does not wait for. */
        CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
        enqueue_unpack (d_src, px, dp, stream.get ());
        stream.synchronize ();
        for (int c = 0; c < 3; ++c) {
          std::vector<uint8_t> got (size_t (widths[c]) * h);
          CUDAFILTERS_CHECK (cudaMemcpy2D (got.data (), widths[c],
                  targets[c]->data, targets[c]->stride, widths[c], h,
                  cudaMemcpyDeviceToHost));
          const std::vector<uint8_t> &want = c == 0 ? hy : c == 1 ? hu : hv;
          fail_unless (got == want, "%s width %d offset %d: plane %d differs "
              "from the CPU's after unpacking", l.name, width, off, c);
        }
        /* New planes in, with and without chroma: each rebuilt frame equals
         * the CPU's, the bytes between rows untouched. */
        for (bool chroma : {false, true}) {
          std::vector<uint8_t> ny = random_bytes (rng, hy.size (), 0, 255),
              nu = random_bytes (rng, hu.size (), 0, 255),
              nv = random_bytes (rng, hv.size (), 0, 255);
          FramePlanes hn;
          hn.luma = ConstPlane (ny.data (), width, width, h);
          FramePlanes dn;
          dn.luma = dp.luma;
          CUDAFILTERS_CHECK (cudaMemcpy2D (dp.luma.data, dp.luma.stride,
                  ny.data (), width, width, h, cudaMemcpyHostToDevice));
          if (chroma) {
            hn.u = ConstPlane (nu.data (), cw, cw, h);
            hn.v = ConstPlane (nv.data (), cw, cw, h);
            dn.u = dp.u;
            dn.v = dp.v;
            CUDAFILTERS_CHECK (cudaMemcpy2D (dp.u.data, dp.u.stride,
                    nu.data (), cw, cw, h, cudaMemcpyHostToDevice));
            CUDAFILTERS_CHECK (cudaMemcpy2D (dp.v.data, dp.v.stride,
                    nv.data (), cw, cw, h, cudaMemcpyHostToDevice));
          }
          std::vector<uint8_t> want (stride * h, 0x5A), got (stride * h, 0x5A);
          repack_cpu (h_src, px, hn, Plane (want.data (), stride, (int) row, h));
          CUDAFILTERS_CHECK (cudaMemcpy2D (dev_dst.data () + off, stride,
                  got.data (), stride, stride, h, cudaMemcpyHostToDevice));
          CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
          enqueue_repack (d_src, px, dn, d_dst, stream.get ());
          stream.synchronize ();
          CUDAFILTERS_CHECK (cudaMemcpy2D (got.data (), stride,
                  dev_dst.data () + off, stride, stride, h,
                  cudaMemcpyDeviceToHost));
          fail_unless (got == want, "%s width %d offset %d chroma %d: packed "
              "frame differs from the CPU's", l.name, width, off, chroma);
        }
      }
}
GST_END_TEST;

static Suite *
engines_gpu_suite (void)
{
  Suite *s = suite_create ("engines-gpu");
  TCase *tc = tcase_create ("gpu");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_failed_free_is_recorded);
  tcase_add_test (tc, test_runner_memory_combinations);
  tcase_add_test (tc, test_runner_streams_pinned_frames);
  tcase_add_test (tc, test_pinned_frames_copied_beside_others);
  tcase_add_test (tc, test_device_frames_carry_planes);
  tcase_add_test (tc, test_clahe_engine_paths);
  tcase_add_test (tc, test_deep_launch_modes);
  tcase_add_test (tc, test_deep_streams_pinned_frames);
  tcase_add_test (tc, test_refused_cooperative_launch_falls_back);
  tcase_add_test (tc, test_instances_keep_kernel_limits);
  tcase_add_test (tc, test_frame_levels);
  tcase_add_test (tc, test_errors_are_reported);
  tcase_add_test (tc, test_failed_allocation_does_not_poison_later_frames);
  tcase_add_test (tc, test_nlm_frames_match_cpu);
  tcase_add_test (tc, test_noise_estimate_matches_cpu);
  tcase_add_test (tc, test_noise_estimator_starts_cleared_on_its_stream);
  tcase_add_test (tc, test_noise_curve_matches_cpu);
  tcase_add_test (tc, test_nlm_auto_matches_cpu);
  tcase_add_test (tc, test_frame_difference_matches_cpu);
  tcase_add_test (tc, test_engines_on_smaller_gpus);
  tcase_add_test (tc, test_nlm_strength_switches);
  tcase_add_test (tc, test_nlm_window_refuses_bad_frames);
  tcase_add_test (tc, test_gpu_engines_refuse_bad_planes_and_params);
  tcase_add_test (tc, test_window_runner_device_in_host_out);
  tcase_add_test (tc, test_window_runner_unsettled_push);
  tcase_add_test (tc, test_window_runner_filter_host);
  tcase_add_test (tc, test_failed_reserve_keeps_memory);
  tcase_add_test (tc, test_packed_conversions_match_cpu);
  return s;
}

int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  int count = 0;
  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0) {
    g_print ("no usable CUDA device: skipping the engine GPU suite\n");
    return 77;
  }
  return gst_check_run_suite (engines_gpu_suite (), "engines-gpu", __FILE__);
}
