/* The environment variables the plugin reads: every one of them is read
 * here and nowhere else, and docs/deployment.md ("Environment variables")
 * documents them. The engine library reads none: the plugin hands it what
 * they say (cudafilters::RunnerOptions). The test switches are read only by
 * the plugin the tests build (tests/plugin, CUDAFILTERS_TEST_SWITCHES); the
 * shipped plugin leaves them at their defaults. */
#pragma once

#include <glib.h>

#include <cudafilters/runner_options.h>

#include <cstddef>

struct GstCudaFiltersEnvironment
{
  /* CUDAFILTERS_HOST_WAIT=poll|block: how the host waits for frames
   * (default paced). Test switch CUDAFILTERS_POISON_OUTPUT=1: outputs
   * poisoned before every frame (the test suites set it). */
  cudafilters::RunnerOptions runners;
  /* Test switch CUDAFILTERS_HOST_SYNC=1: every frame in CUDA memory waited for before
   * it is pushed, as with GStreamer 1.22; the comparison point of tests and
   * benchmarks. */
  bool host_sync = false;
  /* Test switch CUDAFILTERS_TEST_OTHER_DEVICE=1: CUDA memory of any other context counts
   * as another device's, so that tests take the cross-device path on one
   * GPU. */
  bool other_device_for_tests = false;

  /* As the environment says now: each element reads it when it is made. */
  static GstCudaFiltersEnvironment read ();
  /* CUDAFILTERS_HOST_REGISTRY_BYTES: what the process's registry of
   * page-locked memory keeps pinned at most; @otherwise where unset or not
   * a number. */
  static size_t host_registry_bytes (size_t otherwise);
};
