/* Base class for this plugin's video filters.
 *
 * It owns what every element here shares: the `backend`, `cuda-device-id`,
 * `post-messages` and `message-interval` properties, the GstCudaContext
 * (shared with neighbours through GStreamer's context query and messages),
 * caps parsing, frame mapping, the level statistics posted on the bus, when
 * a filter's history of earlier frames must restart, and turning engine
 * failures into element errors. Subclasses supply the algorithm: a GPU
 * engine (cudafilters::GpuPlaneFilter) and a CPU implementation of the same
 * arithmetic.
 *
 * Whole-frame filters (cudafilters::GpuWindowFilter) see every plane and
 * may read a window of frames around the one they filter. With a radius r,
 * the base holds frames back: frame n leaves once frame n + r has arrived,
 * with the timestamps, duration, flags and metas it came with. It reports
 * r frames of latency, filters the last r frames at EOS, and at a caps
 * change, a new segment or a DISCONT buffer filters the frames it holds
 * from the frames before the break only (never across it); a flush drops
 * them. The frames held stay on the GPU (or in host memory on the CPU
 * path), in 2 r + 1 slots reused from frame to frame. This uses
 * GstBaseTransform's submit_input_buffer and generate_output; subclasses
 * with a radius of 0, and every plane filter, keep the plain transform.
 */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>

#include <cudafilters/frame_planes.h>
#include <cudafilters/gpu_plane_filter.h>
#include <cudafilters/gpu_window_filter.h>
#include <cudafilters/plane.h>

#define GST_TYPE_CUDA_FILTERS_BACKEND (gst_cuda_filters_backend_get_type ())
#define GST_TYPE_CUDA_FILTERS_BASE (gst_cuda_filters_base_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstCudaFiltersBase, gst_cuda_filters_base, GST,
    CUDA_FILTERS_BASE, GstBaseTransform)

typedef enum
{
  GST_CUDA_FILTERS_BACKEND_AUTO,
  GST_CUDA_FILTERS_BACKEND_CUDA,
  GST_CUDA_FILTERS_BACKEND_CPU,
} GstCudaFiltersBackend;

GType gst_cuda_filters_backend_get_type (void);

struct _GstCudaFiltersBaseClass
{
  GstBaseTransformClass parent_class;

  /* Creates the subclass's GPU engine. Called from start() with the element's
   * CUDA context current; may throw cudafilters::CudaError. */
  std::unique_ptr<cudafilters::GpuPlaneFilter> (*create_gpu_filter) (GstCudaFiltersBase * self);

  /* Gives the GPU engine the current property values before a frame. Called
   * with the CUDA context current. Optional. */
  void (*configure_gpu_filter) (GstCudaFiltersBase * self,
      cudafilters::GpuPlaneFilter & filter);

  /* Whether the subclass can filter frames of @info with its current
   * properties; posts an element error saying why not and returns FALSE
   * otherwise. Called when caps are set. Optional. */
  gboolean (*check_format) (GstCudaFiltersBase * self, const GstVideoInfo * info);

  /* Filters one plane on the CPU (backend=cpu, or auto without a GPU); may
   * throw std::exception, which becomes an element error. */
  void (*filter_cpu) (GstCudaFiltersBase * self, cudafilters::ConstPlane src,
      cudafilters::Plane dst);

  /* The CPU implementation forgets what it kept of earlier frames (temporal
   * smoothing): the next frame starts a new history. Called on the streaming
   * thread after new caps, a flush, a new segment (a seek) or a DISCONT
   * buffer. The GPU engine is reset by the base
   * (GpuPlaneFilter::reset_history). Optional. */
  void (*reset_cpu_history) (GstCudaFiltersBase * self);

  /* Whole-frame filters set these four instead of create_gpu_filter,
   * configure_gpu_filter and filter_cpu (see the top of this file). */
  /* Creates the GPU engine, as create_gpu_filter. */
  std::unique_ptr<cudafilters::GpuWindowFilter> (*create_gpu_window_filter) (
      GstCudaFiltersBase * self);
  /* Gives the engine the current property values before a frame, as
   * configure_gpu_filter. Optional. */
  void (*configure_gpu_window_filter) (GstCudaFiltersBase * self,
      cudafilters::GpuWindowFilter & filter);
  /* Filters window[center] into @dst on the CPU from window[0, count), host
   * frames in time order; may throw std::exception. */
  void (*filter_window_cpu) (GstCudaFiltersBase * self,
      const cudafilters::FramePlanes * window, int count, int center,
      const cudafilters::FramePlanesOut & dst);
  /* Frames read before and after the one filtered, 0 to 3. Read once, when
   * the element starts: the subclass refuses a new radius while running. */
  guint (*window_radius) (GstCudaFiltersBase * self);
};

/* 8-bit formats whose first plane is luma (or gray): the elements filter
 * that plane and carry the others over unchanged. */
#define GST_CUDA_FILTERS_FORMATS "GRAY8, I420, YV12, NV12, NV21, Y42B, Y444"
/* The same in CUDA memory, less GRAY8: GStreamer's CUDA allocator has no
 * layout for it (1.22 aborts the process when asked for one), so no CUDA
 * element can produce or pool such frames. */
#define GST_CUDA_FILTERS_CUDA_FORMATS "I420, YV12, NV12, NV21, Y42B, Y444"

/* Deeper formats, 10 to 16 bits in 16-bit words: luma (or gray) is filtered
 * at full precision, the other planes are carried. */
#define GST_CUDA_FILTERS_DEEP_FORMATS "GRAY16_LE, P010_10LE, P016_LE, " \
    "I420_10LE, I420_12LE, Y444_10LE, Y444_12LE, Y444_16LE"
/* The same in CUDA memory: those GStreamer's CUDA allocator lays out in
 * every supported version (not GRAY16_LE). */
#define GST_CUDA_FILTERS_DEEP_CUDA_FORMATS "P010_10LE, P016_LE, I420_10LE, " \
    "Y444_16LE"

/* How the first plane of frames of @info stores its samples. */
cudafilters::SampleLayout gst_cuda_filters_sample_layout (const GstVideoInfo * info);

/* Adds the sink and src pad templates: @cuda_formats in CUDA memory, then
 * @formats in system memory; each a comma-separated list of format names. */
void gst_cuda_filters_base_class_add_pad_templates (GstElementClass * klass,
    const gchar * formats, const gchar * cuda_formats);

/* The `temporal-smoothing` property of the equalizing elements: the weight
 * on the past in the exponential moving average of their histograms, 0 to 1
 * (default 0: off), live and controllable. */
GParamSpec *gst_cuda_filters_param_spec_temporal_smoothing (void);

/* Whether plugin_init loaded the CUDA driver library. */
void gst_cuda_filters_set_cuda_loaded (gboolean loaded);

