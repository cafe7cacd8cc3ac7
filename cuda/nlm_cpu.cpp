#include "nlm_cpu.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

namespace cudafilters {

namespace {

constexpr int kBandRows = 16;

// The frame with a mirrored border of `pad` pixels on every side, as floats.
struct PaddedImage {
  int pad, width, stride;
  std::vector<float> px;

  PaddedImage(ConstPlane src, int pad_)
      : pad(pad_), width(src.width), stride(src.width + 2 * pad_),
        px(size_t(stride) * (src.height + 2 * pad_)) {
    for (int y = 0; y < src.height + 2 * pad; ++y) {
      const uint8_t *row = src.data + size_t(reflect101(y - pad, src.height)) * src.stride;
      float *out = &px[size_t(y) * stride];
      for (int x = 0; x < stride; ++x) out[x] = row[reflect101(x - pad, src.width)];
    }
  }
  // Pixel at image coordinates (x, y), which may lie up to `pad` outside.
  const float *row(int y) const { return &px[size_t(y + pad) * stride + pad]; }
};

void nlm_band(const PaddedImage &img, Plane dst, const NlmParams &p, int y0, int y1) {
  const int rp = p.patch_size / 2, rs = p.search_size / 2;
  const int w = dst.width, rows = y1 - y0, hrows = rows + 2 * rp;
  const NlmWeightCoeffs c = nlm_weight_coeffs(p);
  const auto g = nlm_gaussian_taps(p.patch_size);

  std::vector<float> acc_w(size_t(rows) * w, 0.f), acc_v(size_t(rows) * w, 0.f);
  std::vector<float> d(size_t(w) + 2 * rp), hsum(size_t(hrows) * w);

  for (int dy = -rs; dy <= rs; ++dy) {
    for (int dx = -rs; dx <= rs; ++dx) {
      // Horizontal patch sums of squared differences, rows y0-rp .. y1+rp-1.
      for (int r = 0; r < hrows; ++r) {
        const float *ref = img.row(y0 - rp + r);
        const float *sh = img.row(y0 - rp + r + dy);
        for (int k = 0; k < w + 2 * rp; ++k) {
          const float diff = ref[k - rp] - sh[k - rp + dx];
          d[k] = diff * diff;
        }
        float *h = &hsum[size_t(r) * w];
        if (p.gaussian) {
          for (int x = 0; x < w; ++x) {
            float s = g[0] * d[x];
            for (int k = 1; k <= 2 * rp; ++k) s = std::fmaf(g[k], d[x + k], s);
            h[x] = s;
          }
        } else {
          float s = 0.f;
          for (int k = 0; k <= 2 * rp; ++k) s += d[k];
          h[0] = s;
          for (int x = 1; x < w; ++x) h[x] = h[x - 1] + d[x + 2 * rp] - d[x - 1];
        }
      }
      // Vertical patch sums, the weight, and the weighted accumulation.
      for (int x = 0; x < w; ++x) {
        float v = 0.f;
        if (!p.gaussian)
          for (int k = 0; k <= 2 * rp; ++k) v += hsum[size_t(k) * w + x];
        for (int y = 0; y < rows; ++y) {
          if (p.gaussian) {
            v = g[0] * hsum[size_t(y) * w + x];
            for (int k = 1; k <= 2 * rp; ++k) v = std::fmaf(g[k], hsum[size_t(y + k) * w + x], v);
          } else if (y > 0) {
            v = v + hsum[size_t(y + 2 * rp) * w + x] - hsum[size_t(y - 1) * w + x];
          }
          const float wgt = std::exp2f(std::fminf(std::fmaf(v, c.a, c.b), 0.f));
          const size_t i = size_t(y) * w + x;
          acc_w[i] += wgt;
          acc_v[i] = std::fmaf(wgt, img.row(y0 + y + dy)[x + dx], acc_v[i]);
        }
      }
    }
  }

  for (int y = 0; y < rows; ++y) {
    uint8_t *out = dst.data + size_t(y0 + y) * dst.stride;
    for (int x = 0; x < w; ++x) {
      const size_t i = size_t(y) * w + x;
      const long v = std::lrintf(acc_v[i] / acc_w[i]);
      out[x] = uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
    }
  }
}

}  // namespace

void nlm_cpu(ConstPlane src, Plane dst, const NlmParams &p) {
  const PaddedImage img(src, p.search_size / 2 + p.patch_size / 2);
  const int bands = (src.height + kBandRows - 1) / kBandRows;
  const int workers = std::max(1, std::min<int>(bands, std::thread::hardware_concurrency()));

  std::atomic<int> next{0};
  auto work = [&] {
    for (int b = next++; b < bands; b = next++)
      nlm_band(img, dst, p, b * kBandRows, std::min(src.height, (b + 1) * kBandRows));
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < workers; ++i) pool.emplace_back(work);
  work();
  for (auto &t : pool) t.join();
}

}  // namespace cudafilters
