#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersproperties.h"

GParamSpec *
gst_cuda_filters_param_spec_temporal_smoothing (void)
{
  return g_param_spec_double ("temporal-smoothing", "Temporal smoothing",
      "Weight of earlier frames in the histograms the mapping comes from "
      "(exponential moving average): 0 maps every frame on its own, higher "
      "values let changes of brightness fade in over more frames instead of "
      "flickering; 1 holds the first frame's mapping. Restarts on new caps, a "
      "flush, a seek and a DISCONT buffer",
      0.0, 1.0, 0.0, (GParamFlags) (G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE |
          G_PARAM_STATIC_STRINGS));
}
