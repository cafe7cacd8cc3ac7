// Non-local means on the CPU: the same arithmetic as the GPU kernel (levels
// in 8-bit units, see nlm_level_unit; exact integer-valued patch distances
// for box patches on 8-bit frames; the same weight formula and accumulation
// order), spread over the CPU's cores in tiles. Memory per tile is
// O(tile + search window), whatever the frame size. The widest instruction
// set the CPU has (AVX-512, AVX2) is picked at run time.
#pragma once

#include "cpu_plane_filter.h"
#include "cpu_window_filter.h"
#include "frame_planes.h"
#include "nlm_params.h"
#include "plane.h"

#include <memory>

namespace cudafilters {

class NlmCpu final : public CpuPlaneFilter, public CpuWindowFilter {
 public:
  NlmCpu();
  ~NlmCpu() override;
  NlmCpu(NlmCpu &&) noexcept;
  NlmCpu &operator=(NlmCpu &&) noexcept;

  // Throws std::invalid_argument with nlm_params_error(p)'s reason
  // when it is not empty, keeping the parameters it had. Takes effect from the
  // next frame.
  void set_params(const NlmParams &p);
  // With auto_strength, the next frame's noise estimate starts afresh.
  void reset_history() override;

  // One frame's luma (or gray) plane: src and dst are host planes of equal
  // size and sample layout, 8- or 16-bit. Borders are mirrored
  // (reflect-101).
  void process(ConstPlane src, Plane dst) override;

  // Whole frames, and several of them: denoises window[center] into dst,
  // searching the same window of offsets in every frame of window[0, count)
  // (temporal non-local means; the frames in time order, all of one size
  // and layout, 1 <= count <= 2 * kNlmMaxTemporalRadius + 1). Luma always;
  // chroma, where the frames have it, with both channels together when the
  // parameters denoise chroma (nlm_denoises_chroma), else copied from
  // window[center]. With one frame, luma is exactly process()'s. Host
  // planes; throws std::invalid_argument if the frames do not match dst.
  void process_window(const FramePlanes *window, int count, int center,
                      const FramePlanesOut &dst) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters
