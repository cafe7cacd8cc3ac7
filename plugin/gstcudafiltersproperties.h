/* Setting an element's parameters from GObject properties, where the valid
 * value of one property depends on others (NLM's patch-size at most its
 * search-size) and GLib's range checks cannot refuse it. */
#pragma once

#include <gst/gst.h>

#include "gstcudafiltersbase.h"

#include <string>
#include <type_traits>

/* The `temporal-smoothing` property of the equalizing elements: the weight
 * on the past in the exponential moving average of their histograms, 0 to 1
 * (default 0: off), live and controllable. */
GParamSpec *gst_cuda_filters_param_spec_temporal_smoothing (void);

/* Warns that @element refuses @value for @pspec because of @why, and
 * names the value that stays: "cudanlm0: refusing patch-size=9: ...;
 * patch-size stays 7". */
void gst_cuda_filters_warn_refused (GstElement * element,
    const GParamSpec * pspec, const GValue * value, const char *why);

/* Whether @element refuses @value for @pspec because the property can be
 * set in the NULL and READY states only (GST_PARAM_MUTABLE_READY) and the
 * element is running: it then says so with a warning, "cudanlm0: refusing
 * temporal-radius=2: it can be set in the NULL and READY states only;
 * temporal-radius stays 1", and the value stays. */
bool gst_cuda_filters_refuse_while_running (GstElement * element,
    const GParamSpec * pspec, const GValue * value);

/* Defines type_name_get_type (), the enum type @TypeName of the
 * GEnumValue entries that follow, registered at the first call: GLib's
 * G_DEFINE_ENUM_TYPE (2.74, newer than the plugin's minimum) with a
 * description of each value. */
#define GST_CUDA_FILTERS_DEFINE_ENUM_TYPE(TypeName, type_name, ...) \
GType \
type_name##_get_type (void) \
{ \
  static GType type = 0; \
  static const GEnumValue values[] = { __VA_ARGS__, {0, nullptr, nullptr} }; \
  if (g_once_init_enter (&type)) { \
    GType t = g_enum_register_static (#TypeName, values); \
    g_once_init_leave (&type, t); \
  } \
  return type; \
}

/* A copy of @self's parameters (its `params`), taken under its object
 * lock. */
template <typename Element> auto
gst_cuda_filters_snapshot_params (Element * self)
{
  GST_OBJECT_LOCK (self);
  auto params = self->params;
  GST_OBJECT_UNLOCK (self);
  return params;
}

/* Applies @change to a copy of @params under @self's object lock and keeps
 * the result if @check (candidate, current) returns no error, for the
 * element's engine (gst_cuda_filters_base_settings_changed). Otherwise the
 * parameters stay as they are, and a warning names the property, the value
 * refused, why, and the value that stays: "cudanlm0: refusing
 * patch-size=9: patch-size (9) must not exceed search-size (7): raise
 * search-size first; patch-size stays 7". */
template <typename Params, typename Change, typename Check> void
gst_cuda_filters_update_params (GstCudaFiltersBase * self, Params & params,
    const GParamSpec * pspec, const GValue * value, Change change, Check check)
{
  GST_OBJECT_LOCK (self);
  Params candidate = params;
  change (candidate);
  const std::string error = check (candidate, params);
  if (error.empty ()) {
    params = candidate;
    gst_cuda_filters_base_settings_changed (self);
  }
  GST_OBJECT_UNLOCK (self);
  if (!error.empty ())
    gst_cuda_filters_warn_refused (GST_ELEMENT (self), pspec, value,
        error.c_str ());
}

/* Properties that are each one field of an element's parameters, in one
 * table per element:
 *
 *   static const GstCudaFiltersField<cudafilters::ClaheParams> kFields[] = {
 *     gst_cuda_filters_field<&cudafilters::ClaheParams::clip_limit> (PROP_CLIP_LIMIT),
 *     ...
 *   };
 *
 * gst_cuda_filters_set_field applies a new value through
 * gst_cuda_filters_update_params (refused with a warning where @check says
 * why) and gst_cuda_filters_get_field reads one back; both return FALSE for
 * a property not in the table. Fields of type double, float, int, bool and
 * of enum types (enum properties) are supported. */
template <typename Params>
struct GstCudaFiltersField
{
  guint prop_id;
  void (*set) (Params &, const GValue *);
  void (*get) (const Params &, GValue *);
};

template <typename T> T
gst_cuda_filters_value_get (const GValue * v)
{
  if constexpr (std::is_same_v<T, double>)
    return g_value_get_double (v);
  else if constexpr (std::is_same_v<T, float>)
    return g_value_get_float (v);
  else if constexpr (std::is_same_v<T, bool>)
    return g_value_get_boolean (v);
  else if constexpr (std::is_same_v<T, int>)
    return g_value_get_int (v);
  else {
    static_assert (std::is_enum_v<T>, "a field of another type");
    return static_cast<T> (g_value_get_enum (v));
  }
}

template <typename T> void
gst_cuda_filters_value_set (GValue * v, T x)
{
  if constexpr (std::is_same_v<T, double>)
    g_value_set_double (v, x);
  else if constexpr (std::is_same_v<T, float>)
    g_value_set_float (v, x);
  else if constexpr (std::is_same_v<T, bool>)
    g_value_set_boolean (v, x);
  else if constexpr (std::is_same_v<T, int>)
    g_value_set_int (v, x);
  else {
    static_assert (std::is_enum_v<T>, "a field of another type");
    g_value_set_enum (v, static_cast<gint> (x));
  }
}

template <auto Member> struct GstCudaFiltersMember;
template <typename P, typename T, T P::*Member>
struct GstCudaFiltersMember<Member>
{
  using Params = P;
  using Type = T;
};

/* The table row of property @prop_id, the field @Member. */
template <auto Member>
GstCudaFiltersField<typename GstCudaFiltersMember<Member>::Params>
gst_cuda_filters_field (guint prop_id)
{
  using P = typename GstCudaFiltersMember<Member>::Params;
  using T = typename GstCudaFiltersMember<Member>::Type;
  return {prop_id,
    [](P & p, const GValue * v) { p.*Member = gst_cuda_filters_value_get<T> (v); },
    [](const P & p, GValue * v) { gst_cuda_filters_value_set<T> (v, p.*Member); }};
}

template <typename Params, size_t N, typename Check> gboolean
gst_cuda_filters_set_field (GstCudaFiltersBase * self, Params & params,
    const GstCudaFiltersField<Params> (&fields)[N], guint prop_id,
    const GValue * value, const GParamSpec * pspec, Check check)
{
  for (const auto & f : fields)
    if (f.prop_id == prop_id) {
      gst_cuda_filters_update_params (self, params, pspec, value,
          [&f, value](Params & p) { f.set (p, value); }, check);
      return TRUE;
    }
  return FALSE;
}

template <typename Params, size_t N> gboolean
gst_cuda_filters_get_field (const Params & params,
    const GstCudaFiltersField<Params> (&fields)[N], guint prop_id,
    GValue * value)
{
  for (const auto & f : fields)
    if (f.prop_id == prop_id) {
      f.get (params, value);
      return TRUE;
    }
  return FALSE;
}

/* set_property and get_property of an element whose properties are all
 * fields of its parameters (cudanlm reads its own so, but sets some with
 * checks of its own): @Cast is its type's cast (GST_CUDA_CLAHE), @Fields
 * its table, @Check what is wrong with a set of parameters (empty when
 * nothing is), for gst_cuda_filters_set_field to refuse a change that makes
 * them invalid and say why. */
template <auto Cast, auto & Fields, auto Check> void
gst_cuda_filters_set_field_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  auto *self = Cast (object);
  using Params = decltype (self->params);
  if (gst_cuda_filters_refuse_while_running (GST_ELEMENT (self), pspec, value))
    return;
  if (!gst_cuda_filters_set_field (GST_CUDA_FILTERS_BASE (self), self->params,
          Fields, prop_id, value, pspec,
          [](const Params & p, const Params &) { return Check (p); }))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

template <auto Cast, auto & Fields> void
gst_cuda_filters_get_field_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  if (!gst_cuda_filters_get_field (gst_cuda_filters_snapshot_params
          (Cast (object)), Fields, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}
