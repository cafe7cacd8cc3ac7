/* The largest frames the elements take, 32768 x 32768 (2^30 pixels), through
 * every GPU engine with two full-size carried planes, as a Y444_16LE frame
 * has (three planes of 2^31 bytes) and an 8-bit Y444 one: outputs poisoned
 * first, every output sample checked against the CPU engine (NLM: three
 * bands of rows, and every sample checked written), every carried byte
 * against its source. One carried plane has 16-byte aligned rows, the other
 * not, so that its copy counts 2^31 bytes one by one; a 32767-pixel-wide
 * 16-bit frame gives a carried plane of 2^31 - 2^16 bytes, whose grid-stride
 * copies come within one stride of INT_MAX. Exits 77 (skipped) without a GPU,
 * with less than 20 GiB of device memory free or 24 GiB of host memory, and
 * under CUDAFILTERS_TEST_SKIP_LARGE or CUDAFILTERS_TEST_QUICK (sanitizers). */
#include "nlm_reference.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <functional>
#include <memory>
#include <thread>

#include <cudafilters/clahe_cpu.h>
#include <cudafilters/clahe_gpu.h>
#include <cudafilters/cuda_memory.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>
#include <cudafilters/nlm_cpu.h>
#include <cudafilters/nlm_gpu.h>
#include <cudafilters/sharpen_cpu.h>
#include <cudafilters/sharpen_gpu.h>

#include "poison.h"

using namespace cudafilters;

namespace {

constexpr int kSide = 32768;

/* f (y0, y1) over bands of rows [0, height), one per hardware thread. */
template <typename F>
void
parallel_rows (int height, const F & f)
{
  const int n = int (std::max (1u, std::thread::hardware_concurrency ()));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back ([&f, height, n, i] {
          f (int (int64_t (height) * i / n), int (int64_t (height) * (i + 1) / n));
        });
  for (auto & t : threads)
    t.join ();
}

uint32_t
mix (uint32_t v)
{
  v ^= v >> 16;
  v *= 0x7feb352du;
  v ^= v >> 15;
  v *= 0x846ca68bu;
  v ^= v >> 16;
  return v;
}

/* A 16-bit level at (x, y): a ramp along the diagonal that takes every
 * level, noise of +-512 levels on it (texture for NLM), and flat squares of
 * one level (bins that CLAHE clips). 8-bit planes take its top byte. */
uint16_t
pattern (int x, int y)
{
  if (((x >> 10) + (y >> 10)) % 5 == 0)
    return 20000;
  const int ramp = int ((int64_t (x) + y) * 65535 / (2 * (kSide - 1)));
  const int v = ramp + int (mix (uint32_t (y) << 16 ^ uint32_t (x)) % 1024) - 512;
  return uint16_t (std::clamp (v, 0, 65535));
}

/* Host bytes, tight rows, uninitialised until filled. */
struct HostPlane {
  size_t row;
  int height;
  std::unique_ptr<uint8_t[]> bytes;

  HostPlane (size_t row_bytes, int h) : row (row_bytes), height (h),
      bytes (new uint8_t[row_bytes * size_t (h)]) {}
  uint8_t *at (int y) { return bytes.get () + size_t (y) * row; }
  const uint8_t *at (int y) const { return bytes.get () + size_t (y) * row; }
};

/* A device plane of `row` bytes a row, at `offset` in its allocation with
 * row pitch `pitch`. */
struct DeviceBuf {
  size_t row, pitch, offset;
  int height;
  DeviceArray<uint8_t> mem;

  DeviceBuf (size_t row_bytes, int h, size_t row_pitch, size_t off) :
      row (row_bytes), pitch (row_pitch), offset (off), height (h),
      mem (row_pitch * size_t (h) + off) {}
  uint8_t *data () const { return mem.get () + offset; }
  void upload (const HostPlane & p) {
    CUDAFILTERS_CHECK (cudaMemcpy2D (data (), pitch, p.bytes.get (), p.row,
            row, height, cudaMemcpyHostToDevice));
  }
  void download (HostPlane & p) const {
    CUDAFILTERS_CHECK (cudaMemcpy2D (p.bytes.get (), p.row, data (), pitch,
            row, height, cudaMemcpyDeviceToHost));
  }
  /* Every byte of the plane's rows set to `byte`. */
  void fill (int byte) {
    CUDAFILTERS_CHECK (cudaMemset2D (data (), pitch, byte, row, height));
  }
};

size_t
aligned_pitch (size_t row)
{
  return (row + 511) / 512 * 512;
}

/* A frame on the host and on the device: the plane filtered, its output,
 * and two carried planes as wide in bytes as the filtered plane (Y444),
 * with their outputs. Carried plane 0 has 16-byte aligned rows, plane 1
 * rows one byte past them (copied byte by byte). */
struct LargeFrame {
  int width, height;
  SampleLayout samples;
  HostPlane luma;
  HostPlane carried[2];
  DeviceBuf src, dst;
  DeviceBuf carried_src[2], carried_dst[2];

  LargeFrame (int w, int h, int bytes) : width (w), height (h),
      samples (bytes == 2 ? SampleLayout { 2, 16, 0 } : SampleLayout { }),
      luma (size_t (w) * bytes, h),
      carried { HostPlane (size_t (w) * bytes, h), HostPlane (size_t (w) * bytes, h) },
      src (luma.row, h, aligned_pitch (luma.row), 0),
      dst (luma.row, h, aligned_pitch (luma.row), 0),
      carried_src { DeviceBuf (luma.row, h, aligned_pitch (luma.row), 0),
          DeviceBuf (luma.row, h, luma.row + 3, 1) },
      carried_dst { DeviceBuf (luma.row, h, aligned_pitch (luma.row), 0),
          DeviceBuf (luma.row, h, aligned_pitch (luma.row), 0) } {
    parallel_rows (h, [&](int y0, int y1) {
          for (int y = y0; y < y1; ++y) {
            uint8_t *row = luma.at (y);
            for (int x = 0; x < w; ++x) {
              const uint16_t v = pattern (x, y);
              if (bytes == 2)
                memcpy (row + 2 * size_t (x), &v, 2);
              else
                row[x] = uint8_t (v >> 8);
            }
            for (int c = 0; c < 2; ++c) {
              uint8_t *out = carried[c].at (y);
              for (size_t x = 0; x < carried[c].row; ++x)
                out[x] = uint8_t (mix (uint32_t (y) << 17 ^ uint32_t (x) ^
                        (uint32_t (c + 1) << 30)));
            }
          }
        });
    src.upload (luma);
    for (int c = 0; c < 2; ++c)
      carried_src[c].upload (carried[c]);
  }

  ConstPlane in () const {
    return ConstPlane (src.data (), src.pitch, width, height, samples);
  }
  Plane out () const {
    return Plane (dst.data (), dst.pitch, width, height, samples);
  }
  ConstPlane host_in () const {
    return ConstPlane (luma.bytes.get (), luma.row, width, height, samples);
  }
  CarriedPlanes carried_planes () const {
    CarriedPlanes planes;
    for (int c = 0; c < 2; ++c)
      planes.push_back ({ConstPlane (carried_src[c].data (), carried_src[c].pitch,
                  int (carried_src[c].row), height),
              Plane (carried_dst[c].data (), carried_dst[c].pitch,
                  int (carried_dst[c].row), height)});
    return planes;
  }
  /* Outputs filled with `byte` (kPoisonByte as the runners do, or another). */
  void poison (int byte) {
    dst.fill (byte);
    for (auto & c : carried_dst)
      c.fill (byte);
    CUDAFILTERS_CHECK (cudaDeviceSynchronize ());
  }
  std::string describe () const {
    return std::to_string (width) + "x" + std::to_string (height) + " " +
        std::to_string (8 * samples.bytes) + "-bit";
  }
};

/* The first row from which `got` and `want` (planes of equal shape) differ,
 * or -1. */
int
first_differing_row (const HostPlane & got, const HostPlane & want)
{
  std::atomic<int> first (INT_MAX);
  parallel_rows (got.height, [&](int y0, int y1) {
        for (int y = y0; y < y1 && y < first.load (); ++y)
          if (memcmp (got.at (y), want.at (y), got.row) != 0) {
            int seen = first.load ();
            while (y < seen && !first.compare_exchange_weak (seen, y)) {
            }
            return;
          }
      });
  return first.load () == INT_MAX ? -1 : first.load ();
}

/* The sample at x of row y as a level of `l`'s words, or a byte. */
int
sample (const HostPlane & p, int y, int x, SampleLayout l)
{
  if (!l.deep ())
    return p.at (y)[x];
  uint16_t w;
  memcpy (&w, p.at (y) + 2 * size_t (x), 2);
  return int (w);
}

/* The checks below return what is wrong ("" when nothing is), so that a
 * test fails only once its frames are freed: 12 GiB of device memory left
 * behind by one failing test would starve the next ones. */

/* Where `got` first differs from `want`, or "". */
std::string
planes_differ (const HostPlane & got, const HostPlane & want, SampleLayout l,
    const std::string & what)
{
  const int y = first_differing_row (got, want);
  if (y < 0)
    return "";
  const int samples = int (got.row / size_t (l.bytes));
  int x = 0;
  while (x < samples && sample (got, y, x, l) == sample (want, y, x, l))
    ++x;
  const int g = sample (got, y, x, l), w = sample (want, y, x, l);
  char text[160];
  snprintf (text, sizeof text, ": sample (%d, %d) is 0x%x, expected 0x%x%s", x,
      y, g, w, g == (l.deep () ? kPoisonByte * 0x101 : kPoisonByte) ?
      " (the poison: never written)" : "");
  return what + text;
}

/* Whether each carried plane arrived byte for byte. */
std::string
carried_differ (const LargeFrame & f, HostPlane & scratch, const std::string & what)
{
  for (int c = 0; c < 2; ++c) {
    f.carried_dst[c].download (scratch);
    const std::string wrong = planes_differ (scratch, f.carried[c], SampleLayout { },
        what + ", carried plane " + std::to_string (c) + (c ? " (rows unaligned)" : ""));
    if (!wrong.empty ())
      return wrong;
  }
  return "";
}

using CpuFilter = std::function<void (ConstPlane, Plane)>;

/* The engine on the frame, outputs poisoned first, against `cpu` on the host
 * copy of its plane, the plane read as `samples` (a layout of its words). */
std::string
engine_differs (LargeFrame & f, GpuPlaneFilter & gpu, const CpuFilter & cpu,
    const std::string & what, SampleLayout samples)
{
  const std::string name = what + ", " + f.describe ();
  f.poison (kPoisonByte);
  Stream stream;
  ConstPlane in = f.in ();
  Plane out = f.out ();
  in.samples = out.samples = samples;
  try {
    gpu.enqueue_carrying (in, out, f.carried_planes (), stream.get ());
    stream.synchronize ();
  } catch (const std::exception & e) {
    return name + ": " + e.what ();
  }
  HostPlane got (f.luma.row, f.height), want (f.luma.row, f.height);
  f.dst.download (got);
  ConstPlane host = f.host_in ();
  host.samples = samples;
  cpu (host, Plane (want.bytes.get (), want.row, f.width, f.height, samples));
  const std::string wrong = planes_differ (got, want, samples, name);
  return wrong.empty () ? carried_differ (f, got, name) : wrong;
}

std::string
engine_differs (LargeFrame & f, GpuPlaneFilter & gpu, const CpuFilter & cpu,
    const std::string & what)
{
  return engine_differs (f, gpu, cpu, what, f.samples);
}

/* check (frame) on each large frame, 16-bit (Y444_16LE-like) then 8-bit
 * (Y444-like), until one is wrong; what is, or "". CUDA errors (a kernel
 * fault, memory) count as wrong too. */
template <typename Check>
std::string
on_large_frames (std::initializer_list<int> widths, std::initializer_list<int> depths,
    const Check & check)
{
  try {
    for (int width : widths)
      for (int bytes : depths) {
        LargeFrame frame (width, kSide, bytes);
        const std::string wrong = check (frame);
        if (!wrong.empty ())
          return wrong;
      }
  } catch (const std::exception & e) {
    return e.what ();
  }
  return "";
}

template <typename Check>
std::string
on_large_frames (const Check & check)
{
  return on_large_frames ({kSide}, {2, 1}, check);
}

}  // namespace

/* HistEqGpu: the 16-bit deep kernel, the 10-bit kernel (P010-like: 10 bits
 * at shift 6 of the same words) and the 8-bit single pass, each with
 * temporal smoothing off. */
GST_START_TEST (test_histeq_largest_frames)
{
  const CpuFilter cpu = [](ConstPlane s, Plane d) {
    HistEqCpu ().process (s, d);
  };
  const std::string wrong = on_large_frames ([&](LargeFrame & f) {
        HistEqGpu gpu;
        std::string w = engine_differs (f, gpu, cpu, "HistEqGpu");
        if (w.empty () && f.samples.deep ())
          w = engine_differs (f, gpu, cpu, "HistEqGpu, 10 bits at 6",
              SampleLayout { 2, 10, 6 });
        return w;
      });
  fail_unless (wrong.empty (), "%s", wrong.c_str ());
}
GST_END_TEST;

/* ClaheGpu with 8 x 8 tiles of 4096 x 4096 and clip limit 2. */
GST_START_TEST (test_clahe_largest_frames)
{
  const std::string wrong = on_large_frames ([](LargeFrame & f) {
        ClaheGpu gpu;
        ClaheCpu cpu;
        return engine_differs (f, gpu, [&](ConstPlane s, Plane d) {
              cpu.process (s, d);
            }, "ClaheGpu");
      });
  fail_unless (wrong.empty (), "%s", wrong.c_str ());
}
GST_END_TEST;

/* SharpenGpu, unsharp masking (radius 1, amount 1) and the 3x3 kernel. */
GST_START_TEST (test_sharpen_largest_frames)
{
  const std::string wrong = on_large_frames ([](LargeFrame & f) {
        for (SharpenKernel k : {SharpenKernel::kUnsharp,
                SharpenKernel::kLaplacian3x3}) {
          SharpenParams p;
          p.kernel = k;
          SharpenGpu gpu;
          SharpenCpu cpu;
          gpu.set_params (p);
          cpu.set_params (p);
          const std::string w = engine_differs (f, gpu, [&](ConstPlane s, Plane d) {
                cpu.process (s, d);
              }, k == SharpenKernel::kUnsharp ? "SharpenGpu unsharp" :
              "SharpenGpu 3x3");
          if (!w.empty ())
            return w;
        }
        return std::string ();
      });
  fail_unless (wrong.empty (), "%s", wrong.c_str ());
}
GST_END_TEST;

/* NlmGpu with the element's sizes (patch 7, search 21) at a given strength
 * (10): the CPU takes a minute or more for a whole frame, so it denoises
 * three bands of rows (top, middle, bottom) from crops with the search and
 * patch radius of margin above and below, which give those rows exactly
 * what the whole frame gives (an automatic strength would follow each
 * crop's own noise); within gpu_nlm_tolerance of the GPU. Every output sample must be
 * written: two runs with outputs poisoned with different bytes agree. */
GST_START_TEST (test_nlm_largest_frames)
{
  const std::string wrong = on_large_frames ([](LargeFrame & f) {
        const std::string name = "NlmGpu, " + f.describe ();
        NlmParams p;
        p.auto_strength = false;
        NlmGpu gpu;
        gpu.set_params (p);
        HostPlane got (f.luma.row, f.height), again (f.luma.row, f.height);
        for (int run = 0; run < 2; ++run) {
          f.poison (run == 0 ? kPoisonByte : kPoisonByte ^ 0xFF);
          Stream stream;
          try {
            gpu.enqueue_carrying (f.in (), f.out (), f.carried_planes (),
                stream.get ());
            stream.synchronize ();
          } catch (const std::exception & e) {
            return name + ": " + e.what ();
          }
          f.dst.download (run == 0 ? got : again);
        }
        const std::string unwritten = planes_differ (again, got, f.samples,
            name + ": a sample left unwritten (two runs, two poisons)");
        if (!unwritten.empty ())
          return unwritten;

        const int margin = p.search_size / 2 + p.patch_size / 2;
        const int band = 16;
        const int tolerance = test::gpu_nlm_tolerance (f.samples.bits);
        for (int y0 : {0, f.height / 2 - band / 2, f.height - band}) {
          const int top = std::max (0, y0 - margin);
          const int bottom = std::min (f.height, y0 + band + margin);
          HostPlane crop_out (f.luma.row, bottom - top);
          NlmCpu cpu;
          cpu.set_params (p);
          cpu.process (ConstPlane (f.luma.at (top), f.luma.row, f.width,
                  bottom - top, f.samples), Plane (crop_out.bytes.get (),
                  crop_out.row, f.width, bottom - top, f.samples));
          for (int y = y0; y < y0 + band; ++y)
            for (int x = 0; x < f.width; ++x) {
              const int g = sample (got, y, x, f.samples);
              const int c = sample (crop_out, y - top, x, f.samples);
              if (std::abs (g - c) > tolerance)
                return name + ": sample (" + std::to_string (x) + ", " +
                    std::to_string (y) + ") is " + std::to_string (g) +
                    ", the CPU has " + std::to_string (c) + " (tolerance " +
                    std::to_string (tolerance) + ")";
            }
        }
        return carried_differ (f, got, name);
      });
  fail_unless (wrong.empty (), "%s", wrong.c_str ());
}
GST_END_TEST;

/* A 32767 x 32768 16-bit frame: its carried planes have rows of 65534
 * bytes, 2^31 - 2^16 in all; the unaligned one is copied byte by byte, its
 * last items within a grid's stride of INT_MAX. Every engine whose kernels
 * copy carried planes. */
GST_START_TEST (test_carried_planes_near_int_max)
{
  const std::string wrong = on_large_frames ({kSide - 1}, {2}, [](LargeFrame & f) {
        std::string w;
        {
          HistEqGpu gpu;
          w = engine_differs (f, gpu, [](ConstPlane s, Plane d) {
                HistEqCpu ().process (s, d);
              }, "HistEqGpu");
        }
        if (w.empty ()) {
          ClaheGpu gpu;
          ClaheCpu cpu;
          w = engine_differs (f, gpu, [&](ConstPlane s, Plane d) {
                cpu.process (s, d);
              }, "ClaheGpu");
        }
        if (w.empty ()) {
          SharpenGpu gpu;
          SharpenCpu cpu;
          w = engine_differs (f, gpu, [&](ConstPlane s, Plane d) {
                cpu.process (s, d);
              }, "SharpenGpu");
        }
        return w;
      });
  fail_unless (wrong.empty (), "%s", wrong.c_str ());
}
GST_END_TEST;

static Suite *
large_frames_suite (void)
{
  Suite *s = suite_create ("large-frames-gpu");
  TCase *tc = tcase_create ("gpu");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_histeq_largest_frames);
  tcase_add_test (tc, test_clahe_largest_frames);
  tcase_add_test (tc, test_sharpen_largest_frames);
  tcase_add_test (tc, test_nlm_largest_frames);
  tcase_add_test (tc, test_carried_planes_near_int_max);
  return s;
}

int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  int count = 0;
  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0) {
    g_print ("no usable CUDA device: skipping the large-frame GPU suite\n");
    return 77;
  }
  if (test::skip_large () || test::quick ()) {
    g_print ("large frames skipped (CUDAFILTERS_TEST_SKIP_LARGE or _QUICK)\n");
    return 77;
  }
  size_t free_bytes = 0, total = 0;
  CUDAFILTERS_CHECK (cudaMemGetInfo (&free_bytes, &total));
  const double host_gib = double (sysconf (_SC_PHYS_PAGES)) *
      double (sysconf (_SC_PAGE_SIZE)) / double (1ull << 30);
  if (free_bytes < (size_t (20) << 30) || host_gib < 24) {
    g_print ("large frames need 20 GiB of free device memory (%.1f here) and "
        "24 GiB of host memory (%.1f here): skipped\n",
        double (free_bytes) / double (1ull << 30), host_gib);
    return 77;
  }
  return gst_check_run_suite (large_frames_suite (), "large-frames-gpu",
      __FILE__);
}
