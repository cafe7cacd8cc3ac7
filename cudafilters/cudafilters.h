// The engines of gst-cuda-filters, usable without GStreamer: histogram
// equalization, CLAHE, non-local means and sharpening of 8- to 16-bit image
// planes, each on the CPU and on an NVIDIA GPU with the same arithmetic.
// docs/engine-api.md describes the API; link with `pkg-config cudafilters`.
#pragma once

#include "cpu_frame_runner.h"
#include "cpu_plane_filter.h"
#include "cpu_window_filter.h"
#include "cpu_window_runner.h"
#include "cuda_check.h"
#include "cuda_memory.h"
#include "frame_planes.h"
#include "gpu_frame_runner.h"
#include "gpu_plane_filter.h"
#include "gpu_window_filter.h"
#include "gpu_window_runner.h"
#include "packed_filters.h"
#include "packed_pixels.h"
#include "plane.h"
#include "runner_options.h"

#include "clahe_cpu.h"
#include "clahe_gpu.h"
#include "histeq_cpu.h"
#include "histeq_gpu.h"
#include "nlm_cpu.h"
#include "nlm_gpu.h"
#include "sharpen_cpu.h"
#include "sharpen_gpu.h"
