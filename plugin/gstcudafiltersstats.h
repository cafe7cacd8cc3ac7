/* The statistics message an element posts when `post-messages` is on: the
 * filtered plane's input histogram, its input and output minimum, maximum
 * and mean, and its input's noise (a standard deviation in 8-bit units;
 * chroma's too where the element measures it), named after the element,
 * for the first frame after a start or flush and then once per
 * `message-interval` of running time. */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

#include <cudafilters/plane_levels.h>

class GstCudaFiltersStats
{
public:
  /* The properties' values; under the element's object lock. */
  struct Settings
  {
    bool enabled = false;
    GstClockTime interval = GST_SECOND / 10;
  };

  /* Whether the frame of @buf posts its statistics: the first frame after
   * a start or flush, then one per interval of running time; frames
   * without a running time each post one. */
  bool due (GstBaseTransform * trans, GstBuffer * buf, const Settings & s);
  /* The next frame posts (start, flush, new segment). */
  void restart () { last_ = GST_CLOCK_TIME_NONE; }
  /* Posts the message of the frame of @buf. */
  static void post (GstBaseTransform * trans, GstBuffer * buf,
      const cudafilters::FrameLevels & levels);

private:
  /* Running time of the last message; NONE: none since the start or the
   * last flush. */
  GstClockTime last_ = GST_CLOCK_TIME_NONE;
};

/* A buffer's running and stream time in the current segment; NONE where
 * there is none (no timestamp, outside the segment, or a segment not in
 * time, such as appsrc's default bytes). */
GstClockTime gst_cuda_filters_running_time (GstBaseTransform * trans,
    GstClockTime pts);
GstClockTime gst_cuda_filters_stream_time (GstBaseTransform * trans,
    GstClockTime pts);
