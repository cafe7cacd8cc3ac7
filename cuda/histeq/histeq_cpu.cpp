#include <cudafilters/histeq_cpu.h>

#include "cpu_histogram.h"
#include "equalize_math.h"
#include "input_checks.h"

#include <stdexcept>
#include <vector>

namespace cudafilters {

namespace {

// OpenCV's rule on a histogram of `levels` bins of any fixed point (unit:
// one pixel in it); lut[b] = the output for level b, shifted into place.
template <typename Count, typename Out>
void equalize_lut(const Count *hist, uint32_t levels, float unit, int shift, Out *lut) {
  uint32_t first = 0;
  while (first < levels - 1 && hist[first] == 0) ++first;
  uint64_t total = 0;
  for (uint32_t b = 0; b < levels; ++b) total += hist[b];
  uint64_t cdf = 0;
  for (uint32_t b = 0; b < levels; ++b) {
    cdf += hist[b];
    lut[b] = static_cast<Out>(
        equalized_level_of(static_cast<int>(b), static_cast<int>(first), hist[first], total, cdf,
                           unit, levels - 1)
        << shift);
  }
}

void check_layout(ConstPlane src, Plane dst, SampleLayout levels) {
  check_pointwise_planes(src, dst);
  if (!levels.valid())
    throw std::invalid_argument("significant bits do not fit the plane's samples");
}

}  // namespace

void equalize_hist_cpu(ConstPlane src, Plane dst) {
  if (src.samples.deep()) {
    HistEqCpu().process(src, dst);
    return;
  }
  check_pointwise_planes(src, dst);
  uint32_t hist[kHistBins];
  count_plane(src, hist);
  uint8_t lut[kHistBins];
  equalize_lut(hist, kHistBins, 1.f, 0, lut);
  map_plane(src, dst, lut);
}

struct HistEqCpu::Impl {
  void process(ConstPlane src, Plane dst);

  TemporalHistory temporal_;
  int significant_bits_ = 0;
  std::vector<uint64_t> history_;
  std::vector<uint32_t> hist_, scratch_;
  std::vector<uint16_t> lut16_;
};

HistEqCpu::HistEqCpu() : impl_(std::make_unique<Impl>()) {}
HistEqCpu::~HistEqCpu() = default;
HistEqCpu::HistEqCpu(HistEqCpu &&) noexcept = default;
HistEqCpu &HistEqCpu::operator=(HistEqCpu &&) noexcept = default;

void HistEqCpu::set_params(const HistEqParams &p) {
  check_params(histeq_params_error(p));
  impl_->temporal_.set_smoothing(p.temporal_smoothing);
  impl_->significant_bits_ = p.significant_bits;
}

void HistEqCpu::reset_history() { impl_->temporal_.restart(); }

void HistEqCpu::process(ConstPlane src, Plane dst) { impl_->process(src, dst); }

void HistEqCpu::Impl::process(ConstPlane src, Plane dst) {
  const SampleLayout l = with_significant_bits(src.samples, significant_bits_);
  check_layout(src, dst, l);
  const uint32_t levels = l.levels();
  const HistoryMode mode = temporal_.next_frame(HistoryShape::frame(src.width, src.height, levels));

  hist_.resize(levels);
  if (l.deep())
    count_plane_deep(src, l, scratch_, hist_.data());
  else
    count_plane(src, hist_.data());

  const float unit = mode == HistoryMode::kOff ? 1.f : kHistoryUnit;
  if (mode != HistoryMode::kOff) {
    history_.resize(levels);
    for (uint32_t b = 0; b < levels; ++b)
      history_[b] = next_history_bin(mode, history_[b], hist_[b], temporal_.weight());
  }
  // The LUT from this frame's counts, or from the blended history.
  auto build_lut = [&](auto *lut, int shift) {
    if (mode == HistoryMode::kOff)
      equalize_lut(hist_.data(), levels, unit, shift, lut);
    else
      equalize_lut(history_.data(), levels, unit, shift, lut);
  };
  if (l.deep()) {
    lut16_.resize(levels);
    build_lut(lut16_.data(), l.shift);
    map_plane_deep(src, dst, l, lut16_.data());
    return;
  }
  uint8_t lut[kHistBins];
  build_lut(lut, 0);
  map_plane(src, dst, lut);
}

}  // namespace cudafilters
