/* The shared pool of worker threads (cuda/runtime/thread_pool.cpp), one process per
 * case, since the pool is made once per process:
 *   thread-pool             bodies that throw, every index run once, several
 *                           callers at once (short calls, some after the
 *                           workers went to sleep), every sleeping worker
 *                           woken for a call with work for all, the cgroup
 *                           CPU quota read, the workers' thread name;
 *   thread-pool-affinity    (TEST_ONE_CPU) a process allowed one CPU, as
 *                           under `taskset -c 0` or a one-CPU cpuset, runs
 *                           on one thread;
 *   thread-pool-no-threads  (TEST_REFUSE_THREADS) thread creation refused
 *                           (EAGAIN, as under a pids or thread limit) after
 *                           the first worker, or at once on fewer than three
 *                           CPUs: the pool runs with the threads it has.
 * Each then checks the CPU engines against the references. */
/* Before gstcheck.h, whose fail() macro meets std::ios::fail(). */
#include <filesystem>
#include <fstream>

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

/* The workers are named cudafilters-cpu, so that `top -H` and
 * /proc/PID/task/TID/comm tell their CPU time from the application's
 * threads; the caller's thread keeps its own name. */
void
check_worker_names (int threads)
{
  std::string mine;
  std::ifstream (std::string ("/proc/self/task/") +
      std::to_string (gettid ()) + "/comm") >> mine;
  /* A worker names itself once it runs: up to 5 s for all of them. */
  int named = 0;
  const auto until = std::chrono::steady_clock::now () + std::chrono::seconds (5);
  do {
    named = 0;
    for (const auto & task :
        std::filesystem::directory_iterator ("/proc/self/task")) {
      std::string name;
      std::getline (std::ifstream (task.path () / "comm"), name);
      named += name == "cudafilters-cpu";
    }
    if (named < threads - 1)
      std::this_thread::sleep_for (std::chrono::milliseconds (10));
  } while (named < threads - 1 && std::chrono::steady_clock::now () < until);
  CHECK (named == threads - 1, "%d threads named cudafilters-cpu, %d workers",
      named, threads - 1);
  CHECK (mine != "cudafilters-cpu", "the caller's thread was renamed");
}

/* Short calls back to back from three threads, now and then after a pause
 * long enough for the workers to go to sleep: every index runs once, and a
 * call returns only once no worker holds it (a job left listed or touched
 * after its caller returned would show as indices run twice or a crash).
 * The pool wakes sleeping workers one by one, and lists calls under a spin
 * lock that workers and callers take at once. */
void
check_short_calls ()
{
  std::vector<std::thread> callers;
  std::atomic<int> wrong { 0 };
  for (int c = 0; c < 3; ++c)
    callers.emplace_back ([&, c] {
          for (int round = 0; round < 300; ++round) {
            const int n = 2 + (round * 7 + c) % 40;
            std::vector<std::atomic<int>> counts (static_cast<size_t> (n));
            cudafilters::parallel_for (n, [&](int i) { counts[size_t (i)]++; });
            for (auto & k : counts)
              wrong += k.load () != 1;
            if (round % 60 == 0)
              std::this_thread::sleep_for (std::chrono::milliseconds (2));
          }
        });
  for (auto & t : callers)
    t.join ();
  CHECK (wrong.load () == 0, "short calls: %d indices not run exactly once",
      wrong.load ());
}

/* A call with an index for every thread, made once every worker is asleep:
 * the first worker woken wakes the others, so all the threads run its
 * bodies at once (each body waits, up to 5 s, until every body has
 * started). Then four callers at once, whose small calls together have an
 * index for every thread: every worker joins them. (The worker a caller
 * wakes may take another caller's call; a pool that then woke nobody for
 * the first caller passed this too on a 16-CPU host, in five runs out of
 * five.) */
void
check_sleepers_all_woken ()
{
  const int threads = cudafilters::parallel_threads ();
  for (int round = 0; round < 3; ++round) {
    /* Past the workers' spin: they sleep. */
    std::this_thread::sleep_for (std::chrono::milliseconds (50));
    std::atomic<int> started { 0 }, together { 0 };
    cudafilters::parallel_for (threads, [&](int) {
          ++started;
          const auto until =
              std::chrono::steady_clock::now () + std::chrono::seconds (5);
          while (started.load () < threads
              && std::chrono::steady_clock::now () < until)
            std::this_thread::yield ();
          if (started.load () == threads)
            ++together;
        });
    CHECK (together.load () == threads,
        "round %d: %d of %d threads ran the call's bodies at once", round,
        together.load (), threads);
  }
  /* Four callers at once, each a call of a quarter of the threads' indices
   * and two more: together their calls have work for every thread, but no
   * one call's workers are all the pool's. */
  const int callers = 4;
  const int per_call = threads / callers + 2;
  std::this_thread::sleep_for (std::chrono::milliseconds (50));
  std::atomic<int> started { 0 }, together { 0 };
  const int bodies = callers + threads - 1;
  std::vector<std::thread> ts;
  for (int c = 0; c < callers; ++c)
    ts.emplace_back ([&] {
          cudafilters::parallel_for (per_call, [&](int) {
                /* Each body waits until as many bodies are running as there
                 * are callers plus workers, then lets the rest run. */
                const int me = ++started;
                const auto until =
                    std::chrono::steady_clock::now () + std::chrono::seconds (5);
                while (me <= bodies && started.load () < bodies
                    && std::chrono::steady_clock::now () < until)
                  std::this_thread::yield ();
                if (me <= bodies && started.load () >= bodies)
                  ++together;
              });
        });
  for (auto & t : ts)
    t.join ();
  CHECK (together.load () == bodies,
      "four callers: %d of %d threads (the callers and every worker) ran "
      "bodies at once", together.load (), bodies);
}

/* The cgroup quota, read from a cgroup tree made in a scratch directory as
 * /proc/self/mountinfo and /proc/self/cgroup would describe it. */
void
check_cgroup_limits ()
{
  namespace fs = std::filesystem;
  char scratch[] = "/tmp/cudafilters-cgroup-XXXXXX";
  if (!mkdtemp (scratch)) {
    std::perror ("mkdtemp");
    ++failures;
    return;
  }
  const std::string root = scratch;
  auto put = [&](const std::string & file, const std::string & text) {
    fs::create_directories (fs::path (root + file).parent_path ());
    std::ofstream (root + file) << text;
  };
  auto v2_mount = [&](const std::string & group_root, const std::string & at) {
    return "30 23 0:26 " + group_root + " " + root + at +
        " rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
  };
  auto v1_mount = [&](const std::string & at, const std::string & controllers) {
    return "32 31 0:29 / " + root + at +
        " rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw," +
        controllers + "\n";
  };
  const std::string other = "21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n";
  using cudafilters::detail::cgroup_cpu_limit;

  /* v2: the smallest quota on the way up, rounded up; "max" is none. */
  put ("/v2/a/cpu.max", "250000 100000\n");
  put ("/v2/a/b/cpu.max", "max 100000\n");
  int l = cgroup_cpu_limit (other + v2_mount ("/", "/v2"), "0::/a/b\n");
  CHECK (l == 3, "v2 quota of the parent, 2.5 CPUs: %d", l);
  put ("/v2/a/b/cpu.max", "50000 100000\n");
  l = cgroup_cpu_limit (v2_mount ("/", "/v2"), "0::/a/b\n");
  CHECK (l == 1, "v2 half a CPU: %d", l);
  l = cgroup_cpu_limit (v2_mount ("/", "/v2"), "0::/\n");
  CHECK (l == 0, "v2 root group, no cpu.max: %d", l);

  /* A container's own group mounted as its root, the host's path in
   * /proc/self/cgroup; a mount point with a space in it. */
  put ("/c d/cpu.max", "400000 100000\n");
  l = cgroup_cpu_limit (v2_mount ("/docker/abc", "/c\\040d"), "0::/docker/abc\n");
  CHECK (l == 4, "v2 container mount: %d", l);
  l = cgroup_cpu_limit (v2_mount ("/docker/abc", "/c\\040d"), "0::/docker/abc/inner\n");
  CHECK (l == 4, "v2 container mount, inner group: %d", l);

  /* v1: the hierarchy with the cpu controller only. */
  put ("/cpu/x/cpu.cfs_quota_us", "150000\n");
  put ("/cpu/x/cpu.cfs_period_us", "100000\n");
  put ("/cpu/cpu.cfs_quota_us", "-1\n");
  put ("/cpu/cpu.cfs_period_us", "100000\n");
  put ("/mem/x/cpu.cfs_quota_us", "10000\n");
  put ("/mem/x/cpu.cfs_period_us", "100000\n");
  const std::string v1 = v1_mount ("/cpu", "cpu,cpuacct") +
      v1_mount ("/mem", "memory");
  const std::string v1_groups = "5:memory:/x\n4:cpu,cpuacct:/x\n0::/\n";
  l = cgroup_cpu_limit (other + v1, v1_groups);
  CHECK (l == 2, "v1 quota 1.5 CPUs: %d", l);
  put ("/cpu/x/cpu.cfs_quota_us", "-1\n");
  l = cgroup_cpu_limit (v1, v1_groups);
  CHECK (l == 0, "v1 without quota: %d", l);
  /* Hybrid: v1 and v2 both mounted, the smaller applies. */
  put ("/cpu/x/cpu.cfs_quota_us", "300000\n");
  l = cgroup_cpu_limit (v1 + v2_mount ("/", "/v2"),
      "4:cpu,cpuacct:/x\n0::/a/b\n");
  CHECK (l == 1, "v1 3 CPUs and v2 half a CPU: %d", l);
  l = cgroup_cpu_limit ("", "");
  CHECK (l == 0, "nothing mounted: %d", l);
  l = cgroup_cpu_limit ("garbage\n- -\n", "garbage\n::\n");
  CHECK (l == 0, "unreadable files: %d", l);

  std::error_code ec;
  fs::remove_all (root, ec);
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
#if defined(TEST_ONE_CPU)
  /* As `taskset -c 0` would start it: one CPU allowed, before the pool. */
  cpu_set_t mine, one;
  CPU_ZERO (&mine);
  CPU_ZERO (&one);
  if (sched_getaffinity (0, sizeof mine, &mine) != 0) {
    std::perror ("sched_getaffinity");
    return 77;
  }
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET (c, &mine)) {
      CPU_SET (c, &one);
      break;
    }
  if (sched_setaffinity (0, sizeof one, &one) != 0) {
    std::perror ("sched_setaffinity");
    return 77;
  }
  const int threads = cudafilters::parallel_threads ();
  CHECK (threads == 1, "%d threads for a process allowed one CPU (%u online)",
      threads, std::thread::hardware_concurrency ());
#elif defined(TEST_REFUSE_THREADS)
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
  check_cgroup_limits ();
  check_worker_names (threads);
  check_indices (1, "one index");
  check_indices (1000, "1000 indices");
  check_engines ("first");
  check_throwing_bodies ();
  check_short_calls ();
  check_sleepers_all_woken ();
  check_indices (1000, "after exceptions");
  check_engines ("after exceptions");
  std::printf ("%s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
