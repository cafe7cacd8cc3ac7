#pragma once

#include "gstcudafiltersbase.h"

#define GST_TYPE_CUDA_CLAHE (gst_cuda_clahe_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaClahe, gst_cuda_clahe, GST, CUDA_CLAHE,
    GstCudaFiltersBase)

GST_ELEMENT_REGISTER_DECLARE (cudaclahe);
