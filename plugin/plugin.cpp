#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif
#include <gst/gst.h>

#include "gstcudafilterscontext.h"

#include "gstcudaclahe.h"
#include "gstcudahisteq.h"
#include "gstcudalowlight.h"
#include "gstcudanlm.h"
#include "gstcudasharpen.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_filters_plugin_debug);
#define GST_CAT_DEFAULT gst_cuda_filters_plugin_debug

static gboolean
plugin_init (GstPlugin * plugin)
{
  GST_DEBUG_CATEGORY_INIT (gst_cuda_filters_plugin_debug, "cudafilters", 0,
      "cudafilters plugin");

  /* Without the driver library the elements still register and run on the
   * CPU (backend=auto) or fail cleanly at start (backend=cuda). */
  gboolean loaded = GstCudaFiltersContext::load_driver ();
  if (!loaded)
    GST_WARNING ("CUDA driver library not loaded: elements will use the CPU");
#ifdef HAVE_GST_CUDA
  if (loaded)
    gst_cuda_memory_init_once ();
#endif

  gboolean ok = GST_ELEMENT_REGISTER (cudahisteq, plugin);
  ok &= GST_ELEMENT_REGISTER (cudaclahe, plugin);
  ok &= GST_ELEMENT_REGISTER (cudanlm, plugin);
  ok &= GST_ELEMENT_REGISTER (cudasharpen, plugin);
  ok &= GST_ELEMENT_REGISTER (cudalowlight, plugin);
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudafilters,
    "Video filters on NVIDIA GPUs (histogram equalization, CLAHE, non-local means, sharpening, low-light enhancement)",
    plugin_init, VERSION, "LGPL", PACKAGE_NAME, GST_PACKAGE_ORIGIN)
