/**
 * SECTION:element-cudahisteq
 * @title: cudahisteq
 *
 * Global histogram equalization of 8-bit frames on an NVIDIA GPU. The
 * histogram, its prefix sum and the equalization run as kernels chained on
 * one CUDA stream; the host waits once per frame. The output is bit-identical
 * to OpenCV's cv::equalizeHist.
 *
 * Without a usable GPU, `backend=auto` (the default) runs the same algorithm
 * on the CPU and posts a warning on the bus; `backend=cuda` fails to start.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=in.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 ! cudahisteq ! pngenc ! filesink location=out.png
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=GRAY8 ! cudahisteq ! videoconvert ! autovideosink
 * ]|
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudahisteq.h"

#include "histeq_cpu.h"
#include "histeq_gpu.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_hist_eq_debug);
#define GST_CAT_DEFAULT gst_cuda_hist_eq_debug

struct _GstCudaHistEq
{
  GstCudaFiltersBase parent;
};

#define gst_cuda_hist_eq_parent_class parent_class
G_DEFINE_TYPE (GstCudaHistEq, gst_cuda_hist_eq, GST_TYPE_CUDA_FILTERS_BASE);
GST_ELEMENT_REGISTER_DEFINE (cudahisteq, "cudahisteq", GST_RANK_NONE,
    GST_TYPE_CUDA_HIST_EQ);

static std::unique_ptr<cudafilters::GpuPlaneFilter>
gst_cuda_hist_eq_create_gpu_filter (GstCudaFiltersBase *)
{
  return std::make_unique<cudafilters::HistEqGpu> ();
}

static void
gst_cuda_hist_eq_filter_cpu (GstCudaFiltersBase *, cudafilters::ConstPlane src,
    cudafilters::Plane dst)
{
  cudafilters::equalize_hist_cpu (src, dst);
}

static void
gst_cuda_hist_eq_class_init (GstCudaHistEqClass * klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaFiltersBaseClass *filter_class = GST_CUDA_FILTERS_BASE_CLASS (klass);

  gst_element_class_set_static_metadata (element_class,
      "CUDA histogram equalization", "Filter/Effect/Video/Hardware",
      "Equalizes the histogram of 8-bit video frames on an NVIDIA GPU "
      "(bit-identical to OpenCV's equalizeHist)",
      "cudafilters developers");
  gst_cuda_filters_base_class_add_pad_templates (element_class,
      GST_CUDA_FILTERS_FORMATS, GST_CUDA_FILTERS_CUDA_FORMATS);

  filter_class->create_gpu_filter = gst_cuda_hist_eq_create_gpu_filter;
  filter_class->filter_cpu = gst_cuda_hist_eq_filter_cpu;

  GST_DEBUG_CATEGORY_INIT (gst_cuda_hist_eq_debug, "cudahisteq", 0,
      "CUDA histogram equalization");
}

static void
gst_cuda_hist_eq_init (GstCudaHistEq *)
{
}
