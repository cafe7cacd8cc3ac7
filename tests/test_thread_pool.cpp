/* The shared pool of worker threads (cuda/thread_pool.cpp), one process per
 * case, since the pool is made once per process:
 *   thread-pool             every index run once;
 *   thread-pool-no-threads  (TEST_REFUSE_THREADS) thread creation refused
 *                           (EAGAIN, as under a pids or thread limit) after
 *                           the first worker, or at once on fewer than three
 *                           CPUs: the pool runs with the threads it has.
 * Each then checks the CPU engines against the references. */
#include "equalize_reference.h"
#include "thread_pool.h"

#include <cudafilters/clahe_cpu.h>
#include <cudafilters/histeq_cpu.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

#define CHECK(cond, ...)                                         \
  do {                                                           \
    if (!(cond)) {                                               \
      std::fprintf (stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf (stderr, __VA_ARGS__);                        \
      std::fprintf (stderr, "\n");                               \
      ++failures;                                                \
    }                                                            \
  } while (0)

int
allowed_cpus ()
{
  cpu_set_t set;
  CPU_ZERO (&set);
  if (sched_getaffinity (0, sizeof set, &set) != 0)
    return 0;
  return CPU_COUNT (&set);
}

/* The CPU engines against the references, on frames large enough to be
 * split over the pool. */
void
check_engines (const char *when)
{
  std::mt19937 rng (7);
  const int w = 640, h = 480;
  const test::Image frames[] = { test::natural_image (w, h),
    test::random_image (rng, w, h, 20, 200) };
  cudafilters::HistEqCpu histeq;
  cudafilters::ClaheCpu clahe;
  for (const test::Image & src : frames) {
    const cudafilters::ConstPlane in (src.pixels.data (), size_t (w), w, h);
    test::Image out (w, h);
    const cudafilters::Plane to (out.pixels.data (), size_t (w), w, h);
    histeq.process (in, to);
    CHECK (out.pixels == test::reference_equalize (src).pixels,
        "HistEqCpu differs from the reference (%s)", when);
    clahe.process (in, to);
    CHECK (out.pixels == test::reference_clahe (src, 2.0, 8, 8).pixels,
        "ClaheCpu differs from the reference (%s)", when);
  }
}

/* Every index of several calls runs exactly once. */
void
check_indices (int count, const char *when)
{
  std::vector<std::atomic<int>> runs (static_cast<size_t> (count));
  cudafilters::parallel_for (count, [&](int i) { runs[size_t (i)]++; });
  int wrong = 0;
  for (auto & r : runs)
    wrong += r.load () != 1;
  CHECK (wrong == 0, "%d of %d indices not run exactly once (%s)", wrong,
      count, when);
}

}  // namespace

#ifdef TEST_REFUSE_THREADS
/* pthread_create as the C library has it, except that once armed it lets
 * `allowance` calls through and refuses the rest with EAGAIN. Defined in
 * the executable, it comes before the C library's for every caller
 * (std::thread in libstdc++ included), and works the same under valgrind. */
namespace {
std::atomic<bool> armed { false };
std::atomic<int> allowance { 0 };
std::atomic<int> started { 0 }, refused { 0 };
}

extern "C" int
pthread_create (pthread_t * thread, const pthread_attr_t * attr,
    void *(*start) (void *), void *arg) noexcept
{
  using Real = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
      void *);
  static const Real real =
      reinterpret_cast<Real> (dlsym (RTLD_NEXT, "pthread_create"));
  if (armed.load ()) {
    if (allowance.fetch_sub (1) <= 0) {
      refused++;
      return EAGAIN;
    }
    started++;
  }
  return real (thread, attr, start, arg);
}
#endif

int
main ()
{
#if defined(TEST_REFUSE_THREADS)
  const int allow = allowed_cpus () >= 3 ? 1 : 0;
  allowance = allow;
  armed = true;
  int threads = 0;
  try {
    threads = cudafilters::parallel_threads ();
  } catch (const std::exception & e) {
    std::fprintf (stderr, "the pool failed to start: %s\n", e.what ());
    return 1;
  }
  armed = false;
  std::printf ("%d workers started, %d refused\n", started.load (),
      refused.load ());
  CHECK (threads == 1 + started.load (),
      "%d threads, with %d workers started", threads, started.load ());
  CHECK (started.load () <= allow, "%d workers started, %d allowed",
      started.load (), allow);
#else
  const int threads = cudafilters::parallel_threads ();
#endif
  std::printf ("%d threads, %d CPUs allowed, %u online\n", threads,
      allowed_cpus (), std::thread::hardware_concurrency ());
  check_indices (1, "one index");
  check_indices (1000, "1000 indices");
  check_engines ("first");
  check_indices (1000, "again");
  check_engines ("again");
  std::printf ("%s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
