#pragma once

#include "gstcudafiltersbase.h"

#define GST_TYPE_CUDA_NLM (gst_cuda_nlm_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaNlm, gst_cuda_nlm, GST, CUDA_NLM,
    GstCudaFiltersBase)

#define GST_TYPE_CUDA_NLM_PATCH_WEIGHTING (gst_cuda_nlm_patch_weighting_get_type ())
GType gst_cuda_nlm_patch_weighting_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudanlm);
