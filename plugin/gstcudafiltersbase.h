/* Base class of this plugin's video filters: GObject and GstBaseTransform
 * glue around the parts that own the work.
 *
 * It holds the properties every element shares (`backend`,
 * `cuda-device-id`, `post-messages`, `message-interval`), negotiates (the
 * memory kind is kept, CUDA memory preferred), and hands each frame to the
 * element's engine (gstcudafiltersengine.h) through a flow
 * (gstcudafiltersflow.h: one plane, or whole frames in windows), on the GPU
 * side (gstcudafiltersgpu.h: context, streams, runners) or on the CPU. An
 * element supplies its engine, its properties and its caps. */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>

#include "gstcudafilterscaps.h"
#include "gstcudafiltersengine.h"
#include "gstcudafiltersframe.h"

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

  /* The element's engine, with its current settings
   * (gst_cuda_filters_engine_new). Called when the element starts, under
   * the object lock; later changes are pushed
   * (gst_cuda_filters_base_push_settings). */
  std::unique_ptr<GstCudaFiltersEngine> (*create_engine) (GstCudaFiltersBase * self);

  /* Whether the element can filter frames of @info with its current
   * properties; posts an element error saying why not and returns FALSE
   * otherwise. Called when caps are set. Optional. */
  gboolean (*check_format) (GstCudaFiltersBase * self, const GstVideoInfo * info);
};

/* The engine of a started element (null otherwise); under the object
 * lock. */
GstCudaFiltersEngine *gst_cuda_filters_base_engine (GstCudaFiltersBase * self);

/* Under @self's object lock: the element's settings are now @params; its
 * engine, if started, filters from the next frame on with them. */
template <typename Params> void
gst_cuda_filters_base_push_settings (GstCudaFiltersBase * self,
    const Params & params)
{
  if (auto *sink = dynamic_cast<GstCudaFiltersSettingsSink<Params> *> (
          gst_cuda_filters_base_engine (self)))
    sink->push (params);
}
