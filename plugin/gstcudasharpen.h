#pragma once

#include "gstcudafiltersbase.h"

#define GST_TYPE_CUDA_SHARPEN (gst_cuda_sharpen_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaSharpen, gst_cuda_sharpen, GST, CUDA_SHARPEN,
    GstCudaFiltersBase)

#define GST_TYPE_CUDA_SHARPEN_KERNEL (gst_cuda_sharpen_kernel_get_type ())
GType gst_cuda_sharpen_kernel_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudasharpen);
