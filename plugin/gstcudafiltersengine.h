/* The filter an element runs, as the engines of the cudafilters library run
 * it: the CPU engine, and the GPU engine once the element has a GPU.
 *
 * There are two kinds, told apart by the engines' types: a plane engine
 * (cudafilters::CpuPlaneFilter / GpuPlaneFilter: histeq, clahe, sharpen)
 * filters one plane of each frame, a window engine (CpuWindowFilter /
 * GpuWindowFilter: nlm) filters whole frames, each from the frames within a
 * radius fixed for the engine's life.
 *
 * An element builds its engine on its settings when it starts:
 *
 *   return gst_cuda_filters_engine_new<cudafilters::HistEqCpu,
 *       cudafilters::HistEqGpu> (self->params);
 *
 * The engine reads those settings (a field of the element, of the type
 * both engines' set_params take: anything else does not compile) before
 * each frame that follows a change, which the element marks under its
 * object lock with gst_cuda_filters_base_settings_changed
 * (gstcudafiltersbase.h). */
#pragma once

#include <glib.h>

#include <cudafilters/cpu_plane_filter.h>
#include <cudafilters/cpu_window_filter.h>
#include <cudafilters/gpu_plane_filter.h>
#include <cudafilters/gpu_window_filter.h>
#include <cudafilters/packed_filters.h>

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

template <typename CpuFilter, typename GpuFilter>
class GstCudaFiltersEngineOfKind;
using GstCudaFiltersPlaneEngine = GstCudaFiltersEngineOfKind<
    cudafilters::CpuPlaneFilter, cudafilters::GpuPlaneFilter>;
class GstCudaFiltersWindowEngine;

/* What every engine does, whatever its kind. */
class GstCudaFiltersEngine
{
public:
  virtual ~GstCudaFiltersEngine () = default;

  /* Creates the GPU engine in the current CUDA context (may throw
   * cudafilters::CudaError), and drops it (in its context). */
  virtual void open_gpu () = 0;
  virtual void close_gpu () = 0;
  /* Drops the GPU engine without freeing its device memory, where its
   * context cannot be made current: the context frees it when it goes. */
  virtual void abandon_gpu () = 0;

  /* Under the element's object lock: the element's settings, for the next
   * frame, where they changed since the last call (@version moves on at
   * each change). */
  virtual void collect_settings (guint64 version) = 0;
  /* The next frame starts a new history (temporal smoothing). */
  virtual void reset_history () = 0;
  /* Frames from the next one on pack their pixels so (null: they are
   * planes); the filters then take them packed, as planes of bytes. */
  virtual void set_packing (const cudafilters::PackedPixels * pixels) = 0;

  /* The engine as its kind: one of the two is null. */
  virtual GstCudaFiltersPlaneEngine * planes () = 0;
  virtual GstCudaFiltersWindowEngine * windows () = 0;
};

/* An engine of the kind whose CPU filters are @CpuFilter and GPU filters
 * @GpuFilter. cpu () and gpu () return the filter of the next frame with
 * the settings collected last; gpu () only while the GPU engine is open. */
template <typename CpuFilter, typename GpuFilter>
class GstCudaFiltersEngineOfKind : public GstCudaFiltersEngine
{
public:
  virtual CpuFilter & cpu () = 0;
  virtual GpuFilter & gpu () = 0;
};

class GstCudaFiltersWindowEngine : public GstCudaFiltersEngineOfKind<
    cudafilters::CpuWindowFilter, cudafilters::GpuWindowFilter>
{
public:
  /* Frames within this radius of the one filtered are read; fixed. */
  virtual int radius () const = 0;
};

template <typename Gpu>
constexpr bool gst_cuda_filters_engine_has_windows =
    std::is_base_of_v<cudafilters::GpuWindowFilter, Gpu>;

/* The engine of the CPU engine type @Cpu and the GPU engine type @Gpu,
 * which both take @Params through set_params. */
template <typename Cpu, typename Gpu, typename Params>
class GstCudaFiltersEngineOf final
    : public std::conditional_t<gst_cuda_filters_engine_has_windows<Gpu>,
        GstCudaFiltersWindowEngine, GstCudaFiltersPlaneEngine>
{
  static constexpr bool kWindows = gst_cuda_filters_engine_has_windows<Gpu>;
  static_assert (kWindows == std::is_base_of_v<cudafilters::CpuWindowFilter, Cpu>,
      "the CPU and GPU engines filter the same kind of input");
  using CpuFilter = std::conditional_t<kWindows, cudafilters::CpuWindowFilter,
      cudafilters::CpuPlaneFilter>;
  using GpuFilter = std::conditional_t<kWindows, cudafilters::GpuWindowFilter,
      cudafilters::GpuPlaneFilter>;
  using CpuPacked = std::conditional_t<kWindows,
      cudafilters::CpuPackedWindowFilter, cudafilters::CpuPackedPlaneFilter>;
  using GpuPacked = std::conditional_t<kWindows,
      cudafilters::GpuPackedWindowFilter, cudafilters::GpuPackedPlaneFilter>;

public:
  /* @source: the element's settings, read under its object lock. */
  GstCudaFiltersEngineOf (const Params & source, int radius)
      : source_ (source), settings_ (source), radius_ (radius) {
    cpu_.set_params (settings_);
  }

  int radius () const { return radius_; }

  void open_gpu () override {
    auto gpu = std::make_unique<Gpu> ();
    auto packed = std::make_unique<GpuPacked> (*gpu);
    gpu->set_params (settings_);
    if (pixels_)
      packed->set_pixels (*pixels_);
    gpu_packed_ = std::move (packed);
    gpu_ = std::move (gpu);
    gpu_stale_ = false;
  }
  void close_gpu () override {
    gpu_packed_.reset ();
    gpu_.reset ();
  }
  void abandon_gpu () override {
    (void) gpu_packed_.release ();
    (void) gpu_.release ();
  }

  void collect_settings (guint64 version) override {
    if (version == collected_)
      return;
    settings_ = source_;
    collected_ = version;
    cpu_stale_ = gpu_stale_ = true;
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

  GstCudaFiltersPlaneEngine * planes () override {
    if constexpr (kWindows)
      return nullptr;
    else
      return this;
  }
  GstCudaFiltersWindowEngine * windows () override {
    if constexpr (kWindows)
      return this;
    else
      return nullptr;
  }

  CpuFilter & cpu () override {
    if (cpu_stale_) {
      cpu_.set_params (settings_);
      cpu_stale_ = false;
    }
    return pixels_ ? static_cast<CpuFilter &> (cpu_packed_) : cpu_;
  }
  GpuFilter & gpu () override {
    if (gpu_stale_) {
      gpu_->set_params (settings_);
      gpu_stale_ = false;
    }
    return pixels_ ? static_cast<GpuFilter &> (*gpu_packed_) : *gpu_;
  }

private:
  /* The element's: under its object lock. */
  const Params & source_;
  /* Collected: the streaming thread's. */
  Params settings_;
  guint64 collected_ = 0;
  bool cpu_stale_ = false;
  bool gpu_stale_ = false;
  const int radius_;
  Cpu cpu_;
  CpuPacked cpu_packed_ { cpu_ };
  std::unique_ptr<Gpu> gpu_;
  std::unique_ptr<GpuPacked> gpu_packed_;
  std::optional<cudafilters::PackedPixels> pixels_;
};

/* The engine of an element whose settings are @params (a field of the
 * element that outlives the engine), for filters of whole frames with
 * @radius. */
template <typename Cpu, typename Gpu, typename Params>
std::unique_ptr<GstCudaFiltersEngine>
gst_cuda_filters_engine_new (const Params & params, int radius = 0)
{
  return std::make_unique<GstCudaFiltersEngineOf<Cpu, Gpu, Params>> (params,
      radius);
}
/* The engine reads @params for its whole life: a temporary does not do. */
template <typename Cpu, typename Gpu, typename Params>
std::unique_ptr<GstCudaFiltersEngine>
gst_cuda_filters_engine_new (const Params && params, int radius = 0) = delete;
