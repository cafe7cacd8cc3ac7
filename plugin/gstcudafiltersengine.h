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

#include <functional>
#include <memory>
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

public:
  GstCudaFiltersEngineOf (std::function<Params ()> settings, int radius)
      : settings_ (std::move (settings)), radius_ (radius) {}

  bool whole_frames () const override { return kWindows; }
  int window_radius () const override { return radius_; }
  void open_gpu () override { gpu_ = std::make_unique<Gpu> (); }
  void close_gpu () override { gpu_.reset (); }
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
  cudafilters::CpuPlaneFilter *cpu_plane () override {
    if constexpr (kWindows) return nullptr; else return &cpu_;
  }
  cudafilters::GpuPlaneFilter *gpu_plane () override {
    if constexpr (kWindows) return nullptr; else return gpu_.get ();
  }
  cudafilters::CpuWindowFilter *cpu_window () override {
    if constexpr (kWindows) return &cpu_; else return nullptr;
  }
  cudafilters::GpuWindowFilter *gpu_window () override {
    if constexpr (kWindows) return gpu_.get (); else return nullptr;
  }

private:
  std::function<Params ()> settings_;
  int radius_;
  Cpu cpu_;
  std::unique_ptr<Gpu> gpu_;
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
