/* Copies between host planes and the device (cuda/runtime/host_transfer.cpp, behind
 * GpuFrameRunner and GpuWindowRunner): staging written again only once the
 * copies reading it have run, a failed frame leaving no copy behind it, the
 * frame after a failed one, empty planes, a failed growth of the staging,
 * planes of 2^31 - 2^19 one-byte rows, and planes across two page-locked
 * allocations; pageable planes cut into bands of many sizes (odd widths,
 * strides, planes smaller than a band, many bands), several planes of a
 * frame in flight, two threads sharing the thread pool, and an upload that
 * fails at its first DMA while the pool copies. A host callback holds the
 * stream where a copy must still be queued when the host goes on. Planes a
 * host frame carries, pageable or page-locked on either side. A paced
 * wait (the end of a frame) returns only once the work is done, whatever
 * the frames before it took. Exits 77
 * (skipped) where no GPU is usable. */
#include <cudafilters/cuda_memory.h>
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>

#include "host_transfer.h"
#include "poison.h"
#include "runner_testing.h"

#include "test_common.h"

#include <cuda.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace cudafilters;

namespace {

/* Holds `stream` for `ms` milliseconds: what is queued after this waits. */
void
hold_stream (cudaStream_t stream, int ms)
{
  CUDAFILTERS_CHECK (cudaLaunchHostFunc (stream, [](void *ms) {
            std::this_thread::sleep_for (std::chrono::milliseconds (
                    reinterpret_cast<intptr_t> (ms)));
          }, reinterpret_cast<void *> (intptr_t (ms))));
}

std::vector<uint8_t>
pattern (size_t bytes, unsigned seed)
{
  std::vector<uint8_t> v (bytes);
  for (size_t i = 0; i < bytes; ++i)
    v[i] = uint8_t (i * 7 + (i >> 12) * 13 + seed);
  return v;
}

std::vector<uint8_t>
device_bytes (const uint8_t * d, size_t bytes)
{
  std::vector<uint8_t> v (bytes);
  CUDAFILTERS_CHECK (cudaMemcpy (v.data (), d, bytes, cudaMemcpyDeviceToHost));
  return v;
}

size_t
first_difference (const uint8_t * a, const uint8_t * b, size_t n)
{
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i])
      return i;
  return n;
}

/* equalize_hist_cpu of a host plane, row by row. */
void
check_equalized (ConstPlane src, ConstPlane dst, const char *what)
{
  std::vector<uint8_t> in (size_t (src.width) * src.height), ref (in.size ());
  for (int y = 0; y < src.height; ++y)
    memcpy (in.data () + size_t (y) * src.width, src.data + y * src.stride,
        src.width);
  equalize_hist_cpu (ConstPlane (in.data (), size_t (src.width), src.width,
          src.height), Plane (ref.data (), size_t (src.width), src.width,
          src.height));
  for (int y = 0; y < dst.height; ++y)
    fail_unless (memcmp (dst.data + y * dst.stride,
            ref.data () + size_t (y) * src.width, src.width) == 0,
        "%s: row %d differs from the CPU", what, y);
}

}  // namespace

/* Two frames staged at the same place while the stream is held: the second
 * may only write the staging once the first frame's copies have read it. */
GST_START_TEST (test_staging_rewritten_after_its_copies)
{
  const int w = 1024, h = 1024;         /* two chunks */
  const size_t bytes = size_t (w) * h;
  const std::vector<uint8_t> a = pattern (bytes, 1), b = pattern (bytes, 2);
  Stream stream;
  DeviceArray<uint8_t> x (bytes), y (bytes);
  HostTransfer t (HostWait::paced);
  t.reserve (bytes);
  hold_stream (stream.get (), 200);
  t.upload (ConstPlane (a.data (), size_t (w), w, h), false, x.get (),
      size_t (w), stream.get ());
  /* The frame ends here without a download (its filter threw, say). */
  t.upload (ConstPlane (b.data (), size_t (w), w, h), false, y.get (),
      size_t (w), stream.get ());
  stream.synchronize ();
  const std::vector<uint8_t> got_x = device_bytes (x.get (), bytes);
  const std::vector<uint8_t> got_y = device_bytes (y.get (), bytes);
  const size_t at = first_difference (got_x.data (), a.data (), bytes);
  fail_unless (at == bytes,
      "the first upload's copy read staging the second had overwritten "
      "(first difference at byte %zu)", at);
  fail_unless (got_y == b, "second upload wrong");
}
GST_END_TEST;

/* A frame whose second download fails to queue: when the exception reaches
 * the caller, the copy queued for the first plane must not be left to
 * write the caller's page-locked plane later. */
GST_START_TEST (test_failed_download_leaves_no_copy_behind)
{
  const int w = 1024, h = 512;
  const size_t bytes = size_t (w) * h;
  Stream stream;
  DeviceArray<uint8_t> src (bytes);
  /* On the transfers' stream: a non-blocking stream does not wait for
   * cudaMemset's legacy stream. */
  CUDAFILTERS_CHECK (cudaMemsetAsync (src.get (), 0x33, bytes, stream.get ()));
  PinnedBuffer out, other;
  out.reserve (bytes);
  other.reserve (bytes);
  HostTransfer t (HostWait::paced);
  t.reserve (bytes);
  hold_stream (stream.get (), 200);
  t.queue_download (src.get (), size_t (w), Plane (out.data (), size_t (w), w,
          h), true, stream.get ());
  bool thrown = false;
  try {
    /* A row stride below the row: the copy is refused. */
    t.queue_download (src.get (), size_t (w), Plane (other.data (),
            size_t (w) - 1, w, h), true, stream.get ());
  } catch (const CudaError &) {
    thrown = true;
  }
  fail_unless (thrown, "a download with a stride below its width was queued");
  /* The caller has its planes back and reuses them. */
  memset (out.data (), 0x5A, bytes);
  stream.synchronize ();
  size_t written = 0;
  for (size_t i = 0; i < bytes; ++i)
    written += out.data ()[i] != 0x5A;
  fail_unless (written == 0,
      "%zu bytes of the dropped frame's plane written after the exception",
      written);

  /* The next frame, pageable and page-locked, comes out whole. */
  std::vector<uint8_t> host (bytes, 0);
  CUDAFILTERS_CHECK (cudaMemsetAsync (src.get (), 0x44, bytes, stream.get ()));
  t.queue_download (src.get (), size_t (w), Plane (host.data (), size_t (w),
          w, h), false, stream.get ());
  t.queue_download (src.get (), size_t (w), Plane (out.data (), size_t (w), w,
          h), true, stream.get (), bytes);
  t.finish_downloads ();
  for (size_t i = 0; i < bytes; ++i)
    if (host[i] != 0x44 || out.data ()[i] != 0x44)
      fail ("next frame: byte %zu is %d / %d", i, host[i], out.data ()[i]);
}
GST_END_TEST;

/* A filter that fails its first frame after the runner queued the upload. */
class FailsOnce:public GpuPlaneFilter
{
public:
  void enqueue (ConstPlane src, Plane dst, cudaStream_t stream) override
  {
    if (fail_next_) {
      fail_next_ = false;
      throw std::runtime_error ("dropped frame");
    }
    inner_.enqueue (src, dst, stream);
  }
  void fail_next () { fail_next_ = true; }

private:
  HistEqGpu inner_;
  bool fail_next_ = false;
};

/* Pageable frames through GpuFrameRunner, some of whose frames fail after
 * their upload: each next frame is equalized whole, larger ones too. */
GST_START_TEST (test_frame_after_a_failed_frame)
{
  std::mt19937 rng (3);
  FailsOnce filter;
  GpuFrameRunner runner (kPoisoned);
  const int sizes[][2] = { {1920, 1080}, {1920, 1080}, {3840, 2160},
    {1280, 720}, {4096, 2160} };
  for (const auto & s : sizes) {
    const test::Image bad = test::random_image (rng, s[0], s[1], 0, 90);
    const test::Image good = test::random_image (rng, s[0], s[1], 60, 200);
    test::Image out (s[0], s[1]);
    const Plane to (out.pixels.data (), size_t (s[0]), s[0], s[1]);
    filter.fail_next ();
    bool thrown = false;
    try {
      runner.process_host (filter, ConstPlane (bad.pixels.data (),
              size_t (s[0]), s[0], s[1]), to);
    } catch (const std::runtime_error &) {
      thrown = true;
    }
    fail_unless (thrown);
    const ConstPlane in (good.pixels.data (), size_t (s[0]), s[0], s[1]);
    runner.process_host (filter, in, to);
    check_equalized (in, to, "frame after a failed one");
  }
}
GST_END_TEST;

/* Planes with no rows or no columns copy nothing, pageable or not. */
GST_START_TEST (test_empty_planes)
{
  Stream stream;
  HostTransfer t (HostWait::paced);
  t.reserve (4096);
  std::vector<uint8_t> host (4096, 0x11);
  DeviceArray<uint8_t> dev (4096);
  CUDAFILTERS_CHECK (cudaMemset (dev.get (), 0x22, 4096));
  PinnedBuffer pinned;
  pinned.reserve (4096);
  const int sizes[][2] = { {0, 4}, {64, 0}, {0, 0} };
  for (bool locked : {false, true}) {
    uint8_t *h = locked ? pinned.data () : host.data ();
    for (const auto & wh : sizes) {
      const Plane p (h, 64, wh[0], wh[1]);
      fail_if (locate (p).page_locked, "empty plane %dx%d page-locked",
          wh[0], wh[1]);
      t.upload (p, locked, dev.get (), 64, stream.get ());
      t.download (dev.get (), 64, p, locked, stream.get ());
    }
  }
  fail_if (locate (ConstPlane ()).page_locked);
  stream.synchronize ();
  for (uint8_t v : host)
    fail_unless_equals_int (v, 0x11);
  for (uint8_t v : device_bytes (dev.get (), 4096))
    fail_unless_equals_int (v, 0x22);
}
GST_END_TEST;

/* Staging that failed to grow (no page-locked memory that large) still
 * serves the next frame of the size it had. */
/* Carried planes by DMA that take far longer than the luma (a 64x64 luma
 * beside two 4096x2048 planes): the frame returns only once they are
 * written, whether its luma is streamed (page-locked, rows aligned) or
 * copied (pageable). They are waited for through the frame's own wait. */
GST_START_TEST (test_carried_planes_outlast_the_luma)
{
  const int w = 64, h = 64, cw = 4096, ch = 2048;
  const size_t stride = 64, cstride = 4096, luma = stride * h;
  const size_t chroma = cstride * ch;
  PinnedBuffer c_in, c_out;
  c_in.reserve (2 * chroma);
  c_out.reserve (2 * chroma);
  const std::vector<uint8_t> content = pattern (2 * chroma, 91);
  memcpy (c_in.data (), content.data (), 2 * chroma);
  for (int luma_locked = 0; luma_locked < 2; ++luma_locked) {
    std::vector<uint8_t> y_in_pageable (luma), y_out_pageable (luma);
    PinnedBuffer y_in_pinned, y_out_pinned;
    y_in_pinned.reserve (luma);
    y_out_pinned.reserve (luma);
    uint8_t *y_in = luma_locked ? y_in_pinned.data () : y_in_pageable.data ();
    uint8_t *y_out = luma_locked ? y_out_pinned.data () :
        y_out_pageable.data ();
    const std::vector<uint8_t> y = pattern (luma, 17);
    memcpy (y_in, y.data (), luma);
    GpuFrameRunner runner (kPoisoned);
    HistEqGpu eq;
    for (unsigned f = 0; f < 3; ++f) {
      memset (c_out.data (), 0x5a, 2 * chroma);
      CarriedPlanes carried;
      for (int p = 0; p < 2; ++p)
        carried.push_back ({ConstPlane (c_in.data () + p * chroma, cstride,
                    cw, ch), Plane (c_out.data () + p * chroma, cstride, cw,
                    ch)});
      const ConstPlane src (y_in, stride, w, h);
      runner.process_host (eq, src, Plane (y_out, stride, w, h), carried);
      fail_unless (memcmp (c_out.data (), c_in.data (), 2 * chroma) == 0,
          "luma %s, frame %u: the carried planes were not all written when "
          "the frame returned", luma_locked ? "streamed" : "copied", f);
      fail_unless_equals_int (last_frame_streamed (runner), luma_locked);
      check_equalized (src, ConstPlane (y_out, stride, w, h), "luma");
    }
  }
  /* An empty luma: no download waits for the carried planes. A runner may
   * refuse such a frame (a filter refuses empty planes); if it takes it,
   * the carried planes are written when it returns. */
  GpuFrameRunner runner (kPoisoned);
  HistEqGpu eq;
  memset (c_out.data (), 0x5a, 2 * chroma);
  CarriedPlanes carried;
  for (int p = 0; p < 2; ++p)
    carried.push_back ({ConstPlane (c_in.data () + p * chroma, cstride, cw,
                ch), Plane (c_out.data () + p * chroma, cstride, cw, ch)});
  std::vector<uint8_t> none (16);
  bool taken = true;
  try {
    runner.process_host (eq, ConstPlane (none.data (), 16, 0, 0),
        Plane (none.data () + 8, 16, 0, 0), carried);
  } catch (const std::exception & e) {
    taken = false;
  }
  if (taken)
    fail_unless (memcmp (c_out.data (), c_in.data (), 2 * chroma) == 0,
        "empty luma: the carried planes were not all written when the frame "
        "returned");
}
GST_END_TEST;

/* A frame filtered in place (dst the same plane as src), page-locked with
 * aligned rows (which alone would be streamed) and pageable, alone and
 * beside another frame: copied in and out, never streamed, equal to the
 * CPU's result of the frame as it was, and nothing written past it. */
GST_START_TEST (test_frame_filtered_in_place)
{
  const int w = 640, h = 360;
  const size_t stride = 640, luma = stride * h;
  for (int case_ = 0; case_ < 4; ++case_) {
    const bool locked = case_ & 1, beside = case_ & 2;
    const HostRoute route = beside ? kCopiesOnly : HostRoute ();
    std::vector<uint8_t> pageable (2 * luma);
    PinnedBuffer pinned;
    pinned.reserve (2 * luma);
    uint8_t *frame = locked ? pinned.data () : pageable.data ();
    GpuFrameRunner runner (kPoisoned);
    HistEqGpu eq;
    for (unsigned f = 0; f < 3; ++f) {
      const std::vector<uint8_t> content = pattern (2 * luma, 60 + f + 7 *
          case_);
      memcpy (frame, content.data (), 2 * luma);
      runner.process_host (eq, ConstPlane (frame, stride, w, h),
          Plane (frame, stride, w, h), nullptr, route);
      char what[96];
      snprintf (what, sizeof what, "%s, %s, frame %u", locked ?
          "page-locked" : "pageable", beside ? "beside another frame" :
          "alone", f);
      fail_if (last_frame_streamed (runner), "%s: streamed in place", what);
      check_equalized (ConstPlane (content.data (), stride, w, h),
          ConstPlane (frame, stride, w, h), what);
      fail_unless (memcmp (frame + luma, content.data () + luma, luma) == 0,
          "%s: the bytes after the frame changed", what);
    }
  }
}
GST_END_TEST;

GST_START_TEST (test_staging_after_a_failed_growth)
{
  const int w = 1024, h = 1024;
  const size_t bytes = size_t (w) * h;
  Stream stream;
  HostTransfer t (HostWait::paced);
  t.reserve (bytes);
  bool thrown = false;
  try {
    t.reserve (size_t (1) << 50);
  } catch (const CudaError &) {
    thrown = true;
  }
  fail_unless (thrown, "1 PiB of page-locked staging");
  t.reserve (bytes);
  const std::vector<uint8_t> a = pattern (bytes, 9);
  std::vector<uint8_t> back (bytes, 0);
  DeviceArray<uint8_t> dev (bytes);
  t.upload (ConstPlane (a.data (), size_t (w), w, h), false, dev.get (),
      size_t (w), stream.get ());
  t.download (dev.get (), size_t (w), Plane (back.data (), size_t (w), w, h),
      false, stream.get ());
  fail_unless (back == a, "frame after a failed growth of the staging");
}
GST_END_TEST;

/* A plane one byte wide, with more rows than INT_MAX less a chunk's:
 * 2 GiB through the staging both ways (about 8 GiB of host memory in all). */
GST_START_TEST (test_narrow_plane_of_2g_rows)
{
  const int h = INT_MAX - (1 << 19) + 2;        /* h + 2^19 - 1 > INT_MAX */
  const size_t bytes = size_t (h);
  size_t free_dev = 0, total_dev = 0;
  CUDAFILTERS_CHECK (cudaMemGetInfo (&free_dev, &total_dev));
  const long pages = sysconf (_SC_AVPHYS_PAGES), page = sysconf (_SC_PAGESIZE);
  if (test::skip_large () || free_dev < bytes + (512u << 20) || pages <= 0
      || size_t (pages) * size_t (page) < 5 * bytes) {
    g_print ("skipping a plane of %d one-byte rows: %zu MiB free on the "
        "device, %ld MiB of host memory\n", h, free_dev >> 20,
        pages * (page >> 10) >> 10);
    return;
  }
  std::vector<uint8_t> src (bytes), back (bytes, 0);
  for (size_t i = 0; i < bytes; ++i)
    src[i] = uint8_t (i ^ (i >> 19));
  Stream stream;
  DeviceArray<uint8_t> dev (bytes);
  HostTransfer t (HostWait::paced);
  t.reserve (bytes);
  t.upload (ConstPlane (src.data (), 1, 1, h), false, dev.get (), 1,
      stream.get ());
  t.download (dev.get (), 1, Plane (back.data (), 1, 1, h), false,
      stream.get ());
  const size_t at = first_difference (back.data (), src.data (), bytes);
  fail_unless (at == bytes, "row %zu of %d differs", at, h);
}
GST_END_TEST;

namespace {

/* Bands of host copies and DMAs from one byte (a band per row) to more
 * than a plane, over every thread of the pool (thread_bytes 0), a few (a
 * thread per 128 KB, four at least) or two; the TransferBands the tests
 * below cut planes by. */
const TransferBands kBandings[] = { {1, 1, 0, 0}, {100, 333}, {4096, 4096, 0, 0},
  {4096, 65536}, {65536, 4096, 0, 0}, {4096, 4096, 2, 0}, TransferBands ()
};

/* A pageable plane of w x h bytes at stride `stride` (padding filled with
 * 0xEE), its bytes from `seed`. */
struct HostPlane
{
  HostPlane (int w_, int h_, size_t stride_, unsigned seed)
  : w (w_), h (h_), stride (stride_), bytes (stride_ * size_t (h_), 0xEE)
  {
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        bytes[size_t (y) * stride + x] = uint8_t (x * 31 + y * 17 + seed);
  }
  ConstPlane plane () const { return ConstPlane (bytes.data (), stride, w, h); }
  Plane writable_plane () { return Plane (bytes.data (), stride, w, h); }
  int w, h;
  size_t stride;
  std::vector<uint8_t> bytes;
};

/* The rows of `got` equal those of `want`, and got's padding is untouched
 * (still 0xEE). */
void
check_plane (const HostPlane & got, const HostPlane & want, const char *what)
{
  /* One check per plane: check records every assertion that passes. */
  for (int y = 0; y < got.h; ++y) {
    const uint8_t *g = got.bytes.data () + size_t (y) * got.stride;
    const uint8_t *r = want.bytes.data () + size_t (y) * want.stride;
    const size_t at = first_difference (g, r, size_t (got.w));
    if (at != size_t (got.w))
      fail ("%s: row %d differs at byte %zu", what, y, at);
    for (size_t x = size_t (got.w); x < got.stride; ++x)
      if (g[x] != 0xEE)
        fail ("%s: padding of row %d written at %zu", what, y, x);
  }
}

}  // namespace

/* Pageable planes of odd sizes and strides, to a pitched device plane and
 * back into a plane of another stride, for every banding: the device holds
 * the plane, the host gets it back, padding untouched. */
GST_START_TEST (test_banded_round_trips)
{
  const int sizes[][2] = { {1, 1}, {3, 7}, {17, 2}, {1000, 64}, {1920, 1081},
    {4099, 33}, {1, 5000}, {70000, 3}
  };
  Stream stream;
  for (const TransferBands & bands:kBandings) {
    HostTransfer t (HostWait::paced, bands);
    for (const auto & wh : sizes) {
      const int w = wh[0], h = wh[1];
      char what[128];
      snprintf (what, sizeof what, "%dx%d, copies of %zu bytes, DMAs of %zu",
          w, h, bands.copy_bytes, bands.dma_bytes);
      const HostPlane src (w, h, size_t (w) + 13, unsigned (w + h));
      HostPlane back (w, h, size_t (w) + 64, 0);
      std::fill (back.bytes.begin (), back.bytes.end (), 0xEE);
      DevicePlane dev;
      dev.reserve (w, h);
      t.reserve (size_t (w) * h);
      t.upload (src.plane (), false, dev.data (), dev.pitch (), stream.get ());
      std::vector<uint8_t> on_device (size_t (w) * h);
      stream.synchronize ();
      CUDAFILTERS_CHECK (cudaMemcpy2D (on_device.data (), size_t (w),
              dev.data (), dev.pitch (), size_t (w), size_t (h),
              cudaMemcpyDeviceToHost));
      for (int y = 0; y < h; ++y)
        if (memcmp (on_device.data () + size_t (y) * w,
                src.bytes.data () + size_t (y) * src.stride, size_t (w)) != 0)
          fail ("%s: row %d on the device differs", what, y);
      t.download (dev.data (), dev.pitch (), back.writable_plane (), false,
          stream.get ());
      check_plane (back, src, what);
    }
  }
}
GST_END_TEST;

/* The three planes of an I420-like frame at disjoint parts of the staging,
 * uploaded while the stream is held and downloaded together (all queued
 * before the first is waited for), pageable and page-locked mixed; then
 * the same frame again at the same places. */
GST_START_TEST (test_banded_frame_of_three_planes)
{
  const int w = 1283, h = 721;
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  const size_t luma = size_t (w) * h, chroma = size_t (cw) * ch;
  Stream stream;
  for (const TransferBands & bands:kBandings) {
    HostTransfer t (HostWait::paced, bands);
    t.reserve (luma + 2 * chroma);
    for (int round = 0; round < 2; ++round) {
      const HostPlane y_in (w, h, size_t (w) + 5, 1 + round),
          u_in (cw, ch, size_t (cw) + 3, 2 + round),
          v_in (cw, ch, size_t (cw), 3 + round);
      HostPlane y_out (w, h, size_t (w) + 7, 0), u_out (cw, ch, size_t (cw),
          0);
      std::fill (y_out.bytes.begin (), y_out.bytes.end (), 0xEE);
      std::fill (u_out.bytes.begin (), u_out.bytes.end (), 0xEE);
      PinnedBuffer v_out;
      v_out.reserve (chroma);
      DevicePlane dy, du, dv;
      dy.reserve (w, h);
      du.reserve (cw, ch);
      dv.reserve (cw, ch);
      hold_stream (stream.get (), 50);
      t.upload (y_in.plane (), false, dy.data (), dy.pitch (), stream.get ());
      t.upload (u_in.plane (), false, du.data (), du.pitch (), stream.get (),
          luma);
      t.upload (v_in.plane (), false, dv.data (), dv.pitch (), stream.get (),
          luma + chroma);
      t.queue_download (dy.data (), dy.pitch (), y_out.writable_plane (),
          false, stream.get ());
      t.queue_download (du.data (), du.pitch (), u_out.writable_plane (),
          false, stream.get (), luma);
      t.queue_download (dv.data (), dv.pitch (), Plane (v_out.data (),
              size_t (cw), cw, ch), true, stream.get (), luma + chroma);
      t.finish_downloads ();
      check_plane (y_out, y_in, "luma");
      check_plane (u_out, u_in, "u");
      for (int y = 0; y < ch; ++y)
        if (memcmp (v_out.data () + size_t (y) * cw,
                v_in.bytes.data () + size_t (y) * v_in.stride,
                size_t (cw)) != 0)
          fail ("v: row %d differs", y);
    }
  }
}
GST_END_TEST;

/* As test_staging_rewritten_after_its_copies, cut into many bands: the
 * second frame's host copies (on the pool) wait for every band the first
 * frame queued from the staging. */
GST_START_TEST (test_banded_staging_rewritten_after_its_copies)
{
  const int w = 1000, h = 999;
  const size_t bytes = size_t (w) * h;
  const std::vector<uint8_t> a = pattern (bytes, 4), b = pattern (bytes, 5);
  Stream stream;
  DeviceArray<uint8_t> x (bytes), y (bytes);
  HostTransfer t (HostWait::paced, TransferBands {3000, 20000});
  t.reserve (bytes);
  hold_stream (stream.get (), 200);
  t.upload (ConstPlane (a.data (), size_t (w), w, h), false, x.get (),
      size_t (w), stream.get ());
  t.upload (ConstPlane (b.data (), size_t (w), w, h), false, y.get (),
      size_t (w), stream.get ());
  stream.synchronize ();
  const std::vector<uint8_t> got_x = device_bytes (x.get (), bytes);
  const size_t at = first_difference (got_x.data (), a.data (), bytes);
  fail_unless (at == bytes, "the first upload's bands read staging the "
      "second had overwritten (first difference at byte %zu)", at);
  fail_unless (device_bytes (y.get (), bytes) == b, "second upload wrong");
}
GST_END_TEST;

/* An upload whose DMA is refused (a device pitch below the row) while the
 * pool is staging its bands: the error reaches the caller, nothing is
 * left running, and the next frames through the same staging are whole;
 * a download refused likewise leaves the pageable plane untouched. */
GST_START_TEST (test_banded_upload_that_fails)
{
  const int w = 2048, h = 600;
  const size_t bytes = size_t (w) * h;
  Stream stream;
  DevicePlane dev;
  dev.reserve (w, h);
  HostTransfer t (HostWait::paced, TransferBands {2048, 8192});
  t.reserve (bytes);
  const HostPlane src (w, h, size_t (w), 7);
  for (int round = 0; round < 3; ++round) {
    bool thrown = false;
    try {
      t.upload (src.plane (), false, dev.data (), size_t (w) - 1,
          stream.get ());
    } catch (const CudaError &) {
      thrown = true;
    }
    fail_unless (thrown, "an upload with a pitch below its row was queued");
    HostPlane untouched (w, h, size_t (w), 0);
    std::fill (untouched.bytes.begin (), untouched.bytes.end (), 0x5A);
    thrown = false;
    try {
      t.download (dev.data (), size_t (w) - 1, untouched.writable_plane (),
          false, stream.get ());
    } catch (const CudaError &) {
      thrown = true;
    }
    fail_unless (thrown, "a download with a pitch below its row was queued");
    stream.synchronize ();
    const size_t written = size_t (std::count_if (untouched.bytes.begin (),
            untouched.bytes.end (), [](uint8_t v) { return v != 0x5A; }));
    fail_unless (written == 0, "a refused download wrote %zu bytes of its "
        "plane", written);

    HostPlane back (w, h, size_t (w), 0);
    t.upload (src.plane (), false, dev.data (), dev.pitch (), stream.get ());
    t.download (dev.data (), dev.pitch (), back.writable_plane (), false,
        stream.get ());
    check_plane (back, src, "frame after a refused one");
  }
}
GST_END_TEST;

/* Two threads, each with its own transfer and stream, sharing the thread
 * pool: every round trip comes back whole. */
GST_START_TEST (test_banded_transfers_on_two_threads)
{
  std::atomic<int> wrong {0};
  auto run = [&wrong] (unsigned seed) {
    Stream stream;
    HostTransfer t (HostWait::paced, TransferBands {8192, 65536});
    for (int i = 0; i < 40; ++i) {
      const int w = 640 + int (seed) * 3 + i, h = 480 + i;
      const HostPlane src (w, h, size_t (w) + 1, seed + unsigned (i));
      HostPlane back (w, h, size_t (w) + 1, 0);
      DevicePlane dev;
      dev.reserve (w, h);
      t.reserve (size_t (w) * h);
      t.upload (src.plane (), false, dev.data (), dev.pitch (), stream.get ());
      t.download (dev.data (), dev.pitch (), back.writable_plane (), false,
          stream.get ());
      if (back.bytes != src.bytes)
        ++wrong;
    }
  };
  std::thread other (run, 1u);
  run (2u);
  other.join ();
  fail_unless (wrong.load () == 0, "%d round trips came back wrong",
      wrong.load ());
}
GST_END_TEST;

namespace {

/* Whether the driver tells the allocation of a page-locked address (its
 * buffer id), as locate() asks it. */
bool
driver_tells_allocation (const void *p)
{
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found {};
#if CUDART_VERSION >= 12050
  if (cudaGetDriverEntryPointByVersion ("cuPointerGetAttribute", &fn, 12000,
          cudaEnableDefault, &found) != cudaSuccess
#else
  if (cudaGetDriverEntryPoint ("cuPointerGetAttribute", &fn,
          cudaEnableDefault, &found) != cudaSuccess
#endif
      || found != cudaDriverEntryPointSuccess) {
    (void) cudaGetLastError ();
    return false;
  }
  unsigned long long id = 0;
  return reinterpret_cast<CUresult (*)(void *, CUpointer_attribute,
      CUdeviceptr)> (fn) (&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
      reinterpret_cast<CUdeviceptr> (p)) == CUDA_SUCCESS;
}

/* A frame in three parts of 2 MiB, each page-aligned: `registered` says
 * which are page-locked (cudaHostRegister, one registration each). */
void
check_frame_across_parts (const bool (&registered)[3], const char *what)
{
  const size_t part = 2u << 20, stride = 4096;
  const int width = 4000, height = int (3 * part / stride);
  void *mem = mmap (nullptr, 3 * part, PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  fail_if (mem == MAP_FAILED);
  uint8_t *base = static_cast<uint8_t *> (mem);
  std::mt19937 rng (11);
  std::uniform_int_distribution<int> d (30, 180);
  for (size_t i = 0; i < 3 * part; ++i)
    base[i] = uint8_t (d (rng));
  for (int i = 0; i < 3; ++i)
    if (registered[i])
      CUDAFILTERS_CHECK (cudaHostRegister (base + i * part, part,
              cudaHostRegisterDefault));
  const ConstPlane src (base, stride, width, height);
  const bool tells = driver_tells_allocation (base + (registered[0] ? 0 :
          part));
  int pageable_access = 0;
  (void) cudaDeviceGetAttribute (&pageable_access,
      cudaDevAttrPageableMemoryAccess, 0);
  const HostResidence where = locate (src);
  g_print ("%s: page_locked %d, mapped %d (the driver %s allocations of "
      "page-locked memory; pageable memory access %d)\n", what,
      where.page_locked, where.device != nullptr,
      tells ? "tells" : "does not tell", pageable_access);
  if (tells)
    fail_if (where.page_locked, "%s: a plane across allocations taken as "
        "page-locked", what);

  PinnedBuffer out;
  out.reserve (stride * height);
  const Plane dst (out.data (), stride, width, height);
  HistEqGpu eq;
  GpuFrameRunner runner (kPoisoned);
  FrameLevels levels;
  /* Copied (levels are counted on the device), then streamed if it can. */
  runner.process_host (eq, src, dst, &levels);
  check_equalized (src, dst, what);
  memset (out.data (), 0, stride * height);
  runner.process_host (eq, src, dst);
  check_equalized (src, dst, what);

  for (int i = 0; i < 3; ++i)
    if (registered[i])
      CUDAFILTERS_CHECK (cudaHostUnregister (base + i * part));
  munmap (mem, 3 * part);
}

}  // namespace

GST_START_TEST (test_plane_across_two_registrations)
{
  /* Each part registered on its own, nothing pageable between. */
  const bool registered[3] = { true, true, true };
  check_frame_across_parts (registered, "three adjacent registrations");
}
GST_END_TEST;

/* Last: on the old code a kernel read the pageable middle part through an
 * unmapped device address, a fault that ends the CUDA context. */
GST_START_TEST (test_plane_across_registrations_with_a_gap)
{
  const bool registered[3] = { true, false, true };
  check_frame_across_parts (registered, "registered, pageable, registered");
}
GST_END_TEST;

/* The planes a one-plane filter carries (the chroma of I420 or NV12) go
 * with the frame: by DMA where both sides are page-locked, copied on the
 * host otherwise, and on the host beside another host frame in flight,
 * while the GPU filters the luma. Each side pageable or page-locked in
 * turn, alone and beside another frame, three frames each, outputs filled
 * with a poison value first. */
GST_START_TEST (test_carried_planes_of_a_host_frame)
{
  const int w = 640, h = 360, cw = 320, ch = 180;
  const size_t stride = 704, cstride = 352;
  const size_t luma = stride * h, chroma = cstride * ch;
  const size_t frame = luma + 2 * chroma;
  for (int case_ = 0; case_ < 8; ++case_) {
    const int src_locked = case_ & 1, dst_locked = (case_ >> 1) & 1;
    const bool beside = case_ & 4;
    {
      const HostRoute route = beside ? kCopiesOnly : HostRoute ();
      std::vector<uint8_t> src_pageable (frame), dst_pageable (frame);
      PinnedBuffer src_pinned, dst_pinned;
      src_pinned.reserve (frame);
      dst_pinned.reserve (frame);
      uint8_t *in = src_locked ? src_pinned.data () : src_pageable.data ();
      uint8_t *out = dst_locked ? dst_pinned.data () : dst_pageable.data ();
      GpuFrameRunner runner (kPoisoned);
      HistEqGpu eq;
      for (unsigned f = 0; f < 3; ++f) {
        const std::vector<uint8_t> content = pattern (frame, 40 + f +
            4 * case_);
        memcpy (in, content.data (), frame);
        memset (out, 0x5a, frame);
        const ConstPlane y_in (in, stride, w, h);
        const Plane y_out (out, stride, w, h);
        CarriedPlanes carried;
        for (int p = 0; p < 2; ++p)
          carried.push_back ({ConstPlane (in + luma + p * chroma, cstride, cw,
                      ch), Plane (out + luma + p * chroma, cstride, cw, ch)});
        runner.process_host (eq, y_in, y_out, carried, nullptr, route);
        char what[96];
        snprintf (what, sizeof what, "source %s, output %s, %s, frame %u",
            src_locked ? "page-locked" : "pageable",
            dst_locked ? "page-locked" : "pageable",
            beside ? "beside another frame" : "alone", f);
        check_equalized (y_in, y_out, what);
        for (int p = 0; p < 2; ++p)
          for (int y = 0; y < ch; ++y) {
            const size_t at = luma + p * chroma + y * cstride;
            fail_unless (memcmp (out + at, in + at, cw) == 0,
                "%s: carried plane %d, row %d differs from its source", what,
                p, y);
          }
      }
    }
  }
}
GST_END_TEST;

/* Frames through one paced wait: each writes its own value into page-locked
 * memory after holding the stream, and the host reads it as soon as the
 * wait returns. */
struct PacedFrames {
  static constexpr size_t kBytes = 1 << 20;
  DeviceArray<uint8_t> dev{kBytes};
  PinnedBuffer host;
  Stream stream;
  Event done{kHostWaitEventFlags};
  PacedWait paced { HostWait::paced };

  PacedFrames () { host.reserve (kBytes); }

  /* Runs one frame held `hold_ms`; returns how many bytes did not hold
   * `value` yet when its wait returned. */
  size_t frame (int hold_ms, uint8_t value) {
    CUDAFILTERS_CHECK (cudaMemsetAsync (dev.get (), value, kBytes, stream.get ()));
    if (hold_ms > 0)
      hold_stream (stream.get (), hold_ms);
    CUDAFILTERS_CHECK (cudaMemcpyAsync (host.data (), dev.get (), kBytes,
            cudaMemcpyDeviceToHost, stream.get ()));
    CUDAFILTERS_CHECK (cudaEventRecord (done.get (), stream.get ()));
    paced.wait (done.get (), stream.get ());
    const uint8_t *h = host.data ();
    size_t wrong = 0;
    for (size_t i = 0; i < kBytes; ++i)
      wrong += h[i] != value;
    /* The next frame's memset must not overwrite this before it is read. */
    memset (host.data (), 0, kBytes);
    return wrong;
  }
};

/* A paced wait sleeps through most of a wait as long as the last ones: it
 * must still return only once the work is done when a frame is suddenly
 * shorter or longer than those it learned from. */
GST_START_TEST (test_paced_wait_returns_only_when_done)
{
  PacedFrames frames;
  /* Learns 3 ms, then frames with no hold, a longer one, and so on. */
  const int hold_ms[] = { 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 8, 3, 0, 3, 3, 1, 6, 0 };
  int frame = 0;
  for (int ms : hold_ms) {
    const size_t wrong = frames.frame (ms, uint8_t (17 + frame));
    fail_unless (wrong == 0, "frame %d (held %d ms): %zu bytes not yet there "
        "when the wait returned", frame, ms, wrong);
    ++frame;
  }
  /* What it learned is a time, and frames of 3 ms were waited for. */
  fail_unless (frames.paced.expected ().count () > 0);
}
GST_END_TEST;

/* Long waits that stray by milliseconds (frames held 2 and 5 ms in turn, as
 * a GPU shared with other streams makes them) end blocked: they still
 * return only once the work is done. */
GST_START_TEST (test_irregular_paced_waits_block_until_done)
{
  PacedFrames frames;
  for (int frame = 0; frame < 16; ++frame) {
    const size_t wrong = frames.frame (frame % 2 ? 5 : 2, uint8_t (40 + frame));
    fail_unless (wrong == 0, "frame %d: %zu bytes not yet there when the wait "
        "returned", frame, wrong);
  }
  fail_unless (frames.paced.blocked_waits () > 0, "no wait of frames straying by "
      "3 ms ended blocked");
}
GST_END_TEST;

static Suite *
host_transfer_suite (void)
{
  Suite *s = suite_create ("host-transfer-gpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_staging_rewritten_after_its_copies);
  tcase_add_test (tc, test_failed_download_leaves_no_copy_behind);
  tcase_add_test (tc, test_frame_after_a_failed_frame);
  tcase_add_test (tc, test_empty_planes);
  tcase_add_test (tc, test_paced_wait_returns_only_when_done);
  tcase_add_test (tc, test_irregular_paced_waits_block_until_done);
  tcase_add_test (tc, test_carried_planes_of_a_host_frame);
  tcase_add_test (tc, test_carried_planes_outlast_the_luma);
  tcase_add_test (tc, test_frame_filtered_in_place);
  tcase_add_test (tc, test_staging_after_a_failed_growth);
  tcase_add_test (tc, test_banded_round_trips);
  tcase_add_test (tc, test_banded_frame_of_three_planes);
  tcase_add_test (tc, test_banded_staging_rewritten_after_its_copies);
  tcase_add_test (tc, test_banded_upload_that_fails);
  tcase_add_test (tc, test_banded_transfers_on_two_threads);
  tcase_add_test (tc, test_narrow_plane_of_2g_rows);
  tcase_add_test (tc, test_plane_across_two_registrations);
  tcase_add_test (tc, test_plane_across_registrations_with_a_gap);
  return s;
}

int
main (int argc, char **argv)
{
  return test::run_gpu_suite (argc, argv, host_transfer_suite,
      "host-transfer-gpu");
}
