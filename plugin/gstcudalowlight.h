#pragma once

#include <gst/gst.h>

#define GST_TYPE_CUDA_LOW_LIGHT (gst_cuda_low_light_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaLowLight, gst_cuda_low_light, GST, CUDA_LOW_LIGHT,
    GstBin)

GST_ELEMENT_REGISTER_DECLARE (cudalowlight);
