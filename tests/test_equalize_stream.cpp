/* Temporal smoothing of the equalizing elements, exact against the
 * arithmetic docs/cudahisteq.md and docs/cudaclahe.md define (the checks are
 * in smoothing.h). Built twice: `equalize-stream` on the CPU backend
 * (everywhere) and `equalize-stream-gpu` on the CUDA backend; the latter
 * exits 77 (skipped) without a GPU. The history's restarts and the
 * statistics messages: elements/cudafiltersbase.cpp. */
#include "smoothing.h"

using namespace test;

GST_START_TEST (test_smoothing_matches_model)
{
  for (const Equalizer & e : kEqualizers)
    check_smoothing_matches_model (e);
}
GST_END_TEST;

GST_START_TEST (test_still_frames_equalize_fully)
{
  for (const Equalizer & e : kEqualizers)
    check_still_frames_equalize_fully (e);
}
GST_END_TEST;

GST_START_TEST (test_smoothing_reduces_flicker)
{
  for (const Equalizer & e : kEqualizers)
    check_smoothing_reduces_flicker (e);
}
GST_END_TEST;

GST_START_TEST (test_live_smoothing_changes)
{
  for (const Equalizer & e : kEqualizers)
    check_live_smoothing_changes (e);
}
GST_END_TEST;

static Suite *
equalize_stream_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("equalize-stream"));
  TCase *tc = tcase_create ("stream");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_smoothing_matches_model);
  tcase_add_test (tc, test_still_frames_equalize_fully);
  tcase_add_test (tc, test_smoothing_reduces_flicker);
  tcase_add_test (tc, test_live_smoothing_changes);
  return s;
}

int
main (int argc, char **argv)
{
  return run_suite (argc, argv, equalize_stream_suite,
      TEST_SUITE_NAME ("equalize-stream"));
}
