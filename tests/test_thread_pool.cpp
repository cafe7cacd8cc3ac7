/* The shared pool of worker threads (cuda/thread_pool.cpp), one process per
 * case, since the pool is made once per process:
 *   thread-pool             bodies that throw, every index run once, several
 *                           callers at once;
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
#include <chrono>
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

/* Bodies that throw: the caller gets the first exception once every call
 * under way has returned, the indices not yet started are left out, and
 * the pool goes on, for this caller and others. */
void
check_throwing_bodies ()
{
  bool caught = false;
  try {
    cudafilters::parallel_for (1000, [](int i) {
          throw std::runtime_error ("index " + std::to_string (i));
        });
  } catch (const std::runtime_error & e) {
    caught = std::string (e.what ()).rfind ("index ", 0) == 0;
  }
  CHECK (caught, "no exception from bodies that all throw");

  std::vector<std::atomic<int>> runs (1000);
  caught = false;
  try {
    cudafilters::parallel_for (1000, [&](int i) {
          runs[size_t (i)]++;
          if (i == 500)
            throw std::out_of_range ("500");
        });
  } catch (const std::out_of_range &) {
    caught = true;
  }
  CHECK (caught, "no exception from the body of index 500");
  int twice = 0;
  for (auto & r : runs)
    twice += r.load () > 1;
  CHECK (runs[500].load () == 1 && twice == 0,
      "index 500 ran %d times, %d indices more than once", runs[500].load (),
      twice);

  /* Only on workers, with indices long enough for them to take some. */
  const std::thread::id caller = std::this_thread::get_id ();
  std::atomic<int> on_workers { 0 };
  caught = false;
  try {
    cudafilters::parallel_for (2000, [&](int) {
          if (std::this_thread::get_id () != caller) {
            on_workers++;
            throw std::logic_error ("on a worker");
          }
          const auto until = std::chrono::steady_clock::now () +
              std::chrono::microseconds (10);
          while (std::chrono::steady_clock::now () < until) {
          }
        });
  } catch (const std::logic_error &) {
    caught = true;
  }
  CHECK (caught == (on_workers.load () > 0),
      "%d bodies threw on workers, %s reached the caller", on_workers.load (),
      caught ? "an exception" : "none");

  /* Four callers at once, one of them throwing. */
  std::vector<std::thread> callers;
  std::atomic<int> wrong { 0 }, thrown { 0 };
  for (int c = 0; c < 4; ++c)
    callers.emplace_back ([&, c] {
          for (int round = 0; round < 20; ++round) {
            std::vector<std::atomic<int>> counts (300);
            try {
              cudafilters::parallel_for (300, [&](int i) {
                    counts[size_t (i)]++;
                    if (c == 0 && i == 150)
                      throw std::runtime_error ("caller 0");
                  });
            } catch (const std::runtime_error &) {
              thrown++;
              continue;
            }
            for (auto & n : counts)
              wrong += n.load () != 1;
          }
        });
  for (auto & t : callers)
    t.join ();
  CHECK (thrown.load () == 20 && wrong.load () == 0,
      "concurrent callers: %d of 20 exceptions, %d indices wrong",
      thrown.load (), wrong.load ());
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
  check_throwing_bodies ();
  check_indices (1000, "after exceptions");
  check_engines ("after exceptions");
  std::printf ("%s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
