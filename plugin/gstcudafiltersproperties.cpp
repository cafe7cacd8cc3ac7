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

bool
gst_cuda_filters_refuse_while_running (GstElement * element,
    const GParamSpec * pspec, const GValue * value)
{
  if (!(pspec->flags & GST_PARAM_MUTABLE_READY))
    return false;
  GST_OBJECT_LOCK (element);
  const bool running = GST_STATE (element) > GST_STATE_READY ||
      GST_STATE_PENDING (element) > GST_STATE_READY;
  GST_OBJECT_UNLOCK (element);
  if (running)
    gst_cuda_filters_warn_refused (element, pspec, value,
        "it can be set in the NULL and READY states only");
  return running;
}

void
gst_cuda_filters_warn_refused (GstElement * element, const GParamSpec * pspec,
    const GValue * value, const char *why)
{
  GValue kept = G_VALUE_INIT;
  g_value_init (&kept, pspec->value_type);
  g_object_get_property (G_OBJECT (element), pspec->name, &kept);
  gchar *refused_str = g_strdup_value_contents (value);
  gchar *kept_str = g_strdup_value_contents (&kept);
  g_warning ("%s: refusing %s=%s: %s; %s stays %s", GST_OBJECT_NAME (element),
      pspec->name, refused_str, why, pspec->name, kept_str);
  g_free (refused_str);
  g_free (kept_str);
  g_value_unset (&kept);
}
