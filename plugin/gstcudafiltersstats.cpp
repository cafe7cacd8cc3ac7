#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudafiltersstats.h"

GstClockTime
gst_cuda_filters_running_time (GstBaseTransform * trans, GstClockTime pts)
{
  if (trans->segment.format != GST_FORMAT_TIME)
    return GST_CLOCK_TIME_NONE;
  return gst_segment_to_running_time (&trans->segment, GST_FORMAT_TIME, pts);
}

GstClockTime
gst_cuda_filters_stream_time (GstBaseTransform * trans, GstClockTime pts)
{
  if (trans->segment.format != GST_FORMAT_TIME)
    return GST_CLOCK_TIME_NONE;
  return gst_segment_to_stream_time (&trans->segment, GST_FORMAT_TIME, pts);
}

bool
GstCudaFiltersStats::due (GstBaseTransform * trans, GstBuffer * buf,
    const Settings & s)
{
  if (!s.enabled)
    return false;
  const GstClockTime now = gst_cuda_filters_running_time (trans,
      GST_BUFFER_PTS (buf));
  if (!GST_CLOCK_TIME_IS_VALID (now))
    return true;
  if (GST_CLOCK_TIME_IS_VALID (last_) && now >= last_ &&
      now - last_ < s.interval)
    return false;
  last_ = now;
  return true;
}

namespace {

/* A GstValueArray of n values of `type`, set(value, i) each. */
template <typename Set>
GValue
array_value (int n, GType type, Set set)
{
  GValue array = G_VALUE_INIT;
  gst_value_array_init (&array, n);
  for (int i = 0; i < n; ++i) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, type);
    set (&v, i);
    gst_value_array_append_and_take_value (&array, &v);
  }
  return array;
}

}  // namespace

void
GstCudaFiltersStats::post (GstBaseTransform * trans, GstBuffer * buf,
    const cudafilters::FrameLevels & levels)
{
  const GstClockTime pts = GST_BUFFER_PTS (buf);
  const cudafilters::LevelSummary in = cudafilters::summarize_levels (levels.input);
  const cudafilters::LevelSummary out =
      cudafilters::summarize_levels (levels.output);
  GstElementFactory *factory = gst_element_get_factory (GST_ELEMENT (trans));
  const gchar *name = factory ? GST_OBJECT_NAME (factory) :
      G_OBJECT_TYPE_NAME (trans);

  GstStructure *s = gst_structure_new (name,
      "timestamp", G_TYPE_UINT64, pts,
      "duration", G_TYPE_UINT64, GST_BUFFER_DURATION (buf),
      "running-time", G_TYPE_UINT64, gst_cuda_filters_running_time (trans, pts),
      "stream-time", G_TYPE_UINT64, gst_cuda_filters_stream_time (trans, pts),
      "input-min", G_TYPE_UINT, (guint) in.min,
      "input-max", G_TYPE_UINT, (guint) in.max,
      "input-mean", G_TYPE_DOUBLE, in.mean,
      "output-min", G_TYPE_UINT, (guint) out.min,
      "output-max", G_TYPE_UINT, (guint) out.max,
      "output-mean", G_TYPE_DOUBLE, out.mean,
      "noise-sigma", G_TYPE_DOUBLE, levels.noise_sigma, nullptr);
  if (levels.noise_sigma_chroma >= 0)
    gst_structure_set (s, "noise-sigma-chroma", G_TYPE_DOUBLE,
        levels.noise_sigma_chroma, nullptr);
  GValue curve = array_value (cudafilters::kNoiseCurveBands, G_TYPE_DOUBLE,
      [&](GValue * v, int b) { g_value_set_double (v, levels.noise_curve[b]); });
  gst_structure_take_value (s, "noise-curve", &curve);
  GValue hist = array_value (cudafilters::kHistBins, G_TYPE_UINT,
      [&](GValue * v, int b) { g_value_set_uint (v, levels.input[b]); });
  gst_structure_take_value (s, "histogram", &hist);
  gst_element_post_message (GST_ELEMENT (trans),
      gst_message_new_element (GST_OBJECT (trans), s));
}
