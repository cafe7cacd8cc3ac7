#pragma once

#include "gstcudafiltersbase.h"

#define GST_TYPE_CUDA_HIST_EQ (gst_cuda_hist_eq_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaHistEq, gst_cuda_hist_eq, GST, CUDA_HIST_EQ,
    GstCudaFiltersBase)

GST_ELEMENT_REGISTER_DECLARE (cudahisteq);
