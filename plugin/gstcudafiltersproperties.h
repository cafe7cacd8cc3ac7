/* Setting an element's parameters from GObject properties, where the valid
 * value of one property depends on others (NLM's patch-size at most its
 * search-size) and GLib's range checks cannot refuse it. */
#pragma once

#include <gst/gst.h>

#include <string>

/* The `temporal-smoothing` property of the equalizing elements: the weight
 * on the past in the exponential moving average of their histograms, 0 to 1
 * (default 0: off), live and controllable. */
GParamSpec *gst_cuda_filters_param_spec_temporal_smoothing (void);

/* Applies @change to a copy of @params under @self's object lock and keeps
 * the result if @check (candidate, current) returns no error. Otherwise the
 * parameters stay as they are, and a warning names the property, the value
 * refused, why, and the value that stays: "cudanlm0: refusing
 * patch-size=9: patch-size (9) must not exceed search-size (7): raise
 * search-size first; patch-size stays 7". */
template <typename Params, typename Change, typename Check> void
gst_cuda_filters_update_params (GstObject * self, Params & params,
    const GParamSpec * pspec, const GValue * value, Change change, Check check)
{
  GST_OBJECT_LOCK (self);
  Params candidate = params;
  change (candidate);
  const std::string error = check (candidate, params);
  if (error.empty ())
    params = candidate;
  GST_OBJECT_UNLOCK (self);
  if (error.empty ())
    return;

  GValue kept = G_VALUE_INIT;
  g_value_init (&kept, pspec->value_type);
  g_object_get_property (G_OBJECT (self), pspec->name, &kept);
  gchar *refused_str = g_strdup_value_contents (value);
  gchar *kept_str = g_strdup_value_contents (&kept);
  g_warning ("%s: refusing %s=%s: %s; %s stays %s", GST_OBJECT_NAME (self),
      pspec->name, refused_str, error.c_str (), pspec->name, kept_str);
  g_free (refused_str);
  g_free (kept_str);
  g_value_unset (&kept);
}
