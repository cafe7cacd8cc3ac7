/* The filter an element runs, as the engines of the cudafilters library run
 * it: the CPU engine, and the GPU engine once the element has a GPU, each
 * given the element's current settings before every frame. An element is
 * its properties, its caps and the engine it builds:
 *
 *   return gst_cuda_filters_engine_new<cudafilters::HistEqCpu,
 *       cudafilters::HistEqGpu> ([self] { return snapshot_params (self); });
 *
 * Filters of one plane (cudafilters::CpuPlaneFilter, GpuPlaneFilter) and
 * filters of whole frames in windows (CpuWindowFilter, GpuWindowFilter) are
 * told apart by the engines' types. */
#pragma once

#include <cudafilters/cpu_plane_filter.h>
#include <cudafilters/cpu_window_filter.h>
#include <cudafilters/gpu_plane_filter.h>
#include <cudafilters/gpu_window_filter.h>
#include <cudafilters/packed_filters.h>

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

class GstCudaFiltersEngine
{
public:
  virtual ~GstCudaFiltersEngine () = default;

  /* Filters of whole frames read the frames within this radius of the one
   * they filter; fixed for the engine's life. */
  virtual bool whole_frames () const = 0;
  virtual int window_radius () const = 0;

  /* Creates the GPU engine in the current CUDA context (may throw
   * cudafilters::CudaError), and drops it (in its context). */
  virtual void open_gpu () = 0;
  virtual void close_gpu () = 0;

  /* Gives the element's current settings to the engine that filters the
   * next frame: the GPU's, or the CPU's. */
  virtual void configure (bool gpu) = 0;
  /* The next frame starts a new history (temporal smoothing). */
  virtual void reset_history () = 0;
  /* Frames from the next one on pack their pixels so (null: they are
   * planes); the filters below then take them packed, as planes of bytes. */
  virtual void set_packing (const cudafilters::PackedPixels * pixels) = 0;

  /* The engines of the filter's kind; null for the other kind, and for the
   * GPU before open_gpu. */
  virtual cudafilters::CpuPlaneFilter *cpu_plane () = 0;
  virtual cudafilters::GpuPlaneFilter *gpu_plane () = 0;
  virtual cudafilters::CpuWindowFilter *cpu_window () = 0;
  virtual cudafilters::GpuWindowFilter *gpu_window () = 0;
};

/* An engine of the CPU engine type @Cpu and the GPU engine type @Gpu,
 * which both take @Params through set_params. */
template <typename Cpu, typename Gpu, typename Params>
class GstCudaFiltersEngineOf final : public GstCudaFiltersEngine
{
  static constexpr bool kWindows =
      std::is_base_of_v<cudafilters::GpuWindowFilter, Gpu>;
  static_assert (kWindows == std::is_base_of_v<cudafilters::CpuWindowFilter, Cpu>,
      "the CPU and GPU engines filter the same kind of input");
  using CpuPacked = std::conditional_t<kWindows,
      cudafilters::CpuPackedWindowFilter, cudafilters::CpuPackedPlaneFilter>;
  using GpuPacked = std::conditional_t<kWindows,
      cudafilters::GpuPackedWindowFilter, cudafilters::GpuPackedPlaneFilter>;

public:
  GstCudaFiltersEngineOf (std::function<Params ()> settings, int radius)
      : settings_ (std::move (settings)), radius_ (radius) {}

  bool whole_frames () const override { return kWindows; }
  int window_radius () const override { return radius_; }
  void open_gpu () override {
    auto gpu = std::make_unique<Gpu> ();
    auto packed = std::make_unique<GpuPacked> (*gpu);
    if (pixels_)
      packed->set_pixels (*pixels_);
    gpu_packed_ = std::move (packed);
    gpu_ = std::move (gpu);
  }
  void close_gpu () override {
    gpu_packed_.reset ();
    gpu_.reset ();
  }
  void configure (bool gpu) override {
    const Params p = settings_ ();
    if (gpu)
      gpu_->set_params (p);
    else
      cpu_.set_params (p);
  }
  void reset_history () override {
    cpu_.reset_history ();
    if (gpu_)
      gpu_->reset_history ();
  }
  void set_packing (const cudafilters::PackedPixels * pixels) override {
    pixels_.reset ();
    if (pixels) {
      pixels_ = *pixels;
      cpu_packed_.set_pixels (*pixels);
      if (gpu_packed_)
        gpu_packed_->set_pixels (*pixels);
    }
  }
  cudafilters::CpuPlaneFilter *cpu_plane () override {
    if constexpr (kWindows) return nullptr; else return cpu ();
  }
  cudafilters::GpuPlaneFilter *gpu_plane () override {
    if constexpr (kWindows) return nullptr; else return gpu ();
  }
  cudafilters::CpuWindowFilter *cpu_window () override {
    if constexpr (kWindows) return cpu (); else return nullptr;
  }
  cudafilters::GpuWindowFilter *gpu_window () override {
    if constexpr (kWindows) return gpu (); else return nullptr;
  }

private:
  using CpuBase = std::conditional_t<kWindows, cudafilters::CpuWindowFilter,
      cudafilters::CpuPlaneFilter>;
  using GpuBase = std::conditional_t<kWindows, cudafilters::GpuWindowFilter,
      cudafilters::GpuPlaneFilter>;
  /* The filter frames go through: the engine itself, or its wrapper for
   * packed pixels. */
  CpuBase *cpu () {
    return pixels_ ? static_cast<CpuBase *> (&cpu_packed_) : &cpu_;
  }
  GpuBase *gpu () {
    if (!gpu_)
      return nullptr;
    return pixels_ ? static_cast<GpuBase *> (gpu_packed_.get ()) : gpu_.get ();
  }
  std::function<Params ()> settings_;
  int radius_;
  Cpu cpu_;
  CpuPacked cpu_packed_ { cpu_ };
  std::unique_ptr<Gpu> gpu_;
  std::unique_ptr<GpuPacked> gpu_packed_;
  std::optional<cudafilters::PackedPixels> pixels_;
};

/* The engine of an element whose settings @settings () returns (under the
 * element's lock), for filters of whole frames with @radius. */
template <typename Cpu, typename Gpu, typename Settings>
std::unique_ptr<GstCudaFiltersEngine>
gst_cuda_filters_engine_new (Settings settings, int radius = 0)
{
  using Params = std::invoke_result_t<Settings>;
  return std::make_unique<GstCudaFiltersEngineOf<Cpu, Gpu, Params>> (
      std::move (settings), radius);
}
