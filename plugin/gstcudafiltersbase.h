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

  /* The element's engine, on its settings (gst_cuda_filters_engine_new).
   * Called when the element starts, under the object lock; later changes
   * are marked (gst_cuda_filters_base_settings_changed). */
  std::unique_ptr<GstCudaFiltersEngine> (*create_engine) (GstCudaFiltersBase * self);

  /* Whether the element can filter frames of @info with its current
   * properties; posts an element error saying why not and returns FALSE
   * otherwise. Called when caps are set. Optional. */
  gboolean (*check_format) (GstCudaFiltersBase * self, const GstVideoInfo * info);

  /* Whether the element takes interlaced frames: only a pointwise filter
   * (cudahisteq) may; one that mixes neighbouring rows would mix the two
   * fields, and refuses them at negotiation with an error. */
  bool takes_interlaced;
};

/* Under @self's object lock: the settings the element's engine reads
 * (gst_cuda_filters_engine_new) changed; the next frame takes them. */
void gst_cuda_filters_base_settings_changed (GstCudaFiltersBase * self);
