// HistEqGpu with one of its launch paths forced, for tests and benchmarks:
//
//   HistEqGpu two_pass = make_histeq_gpu(HistEqLaunch::kTwoPass);
//
// The public constructor takes kSinglePass where the device can. Private to
// the engine library, its tests and benchmarks.
#pragma once

#include <cudafilters/histeq_gpu.h>

namespace cudafilters {

enum class HistEqLaunch {
  // One cooperative launch: histogram, grid barrier, LUT and mapping in the
  // same kernel (8-bit planes; deep planes: one cooperative kernel, of one
  // grid barrier up to 4096 levels, of steps with barriers between them
  // beyond). Falls back to kTwoPass where the GPU cannot launch
  // cooperatively, and from the first frame whose cooperative grid the
  // device refuses as larger than it holds at once (MPS, green contexts).
  kSinglePass,
  // A histogram kernel whose last block builds the LUT, then a mapping
  // kernel; on compute capability 9.0+ the second may start (and copy
  // carried planes) while the first finishes (programmatic dependent launch).
  kTwoPass,
  // kTwoPass without the overlap, as it runs on GPUs before compute
  // capability 9.0: lets the tests cover that path on newer GPUs.
  // Deep planes take one launch per step in both two-pass modes.
  kTwoPassSerial,
};

// Reaches the state behind HistEqGpu's pointer (histeq_gpu.cu).
struct HistEqGpuAccess {
  // The launch path of `eq`'s frames; before its first frame.
  static void set_launch(HistEqGpu &eq, HistEqLaunch launch);
};

// A HistEqGpu whose frames take `launch`.
inline HistEqGpu make_histeq_gpu(HistEqLaunch launch) {
  HistEqGpu eq;
  HistEqGpuAccess::set_launch(eq, launch);
  return eq;
}

}  // namespace cudafilters
