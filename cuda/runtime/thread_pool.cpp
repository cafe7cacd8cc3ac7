#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace cudafilters {

namespace {

// After its last index a worker keeps looking for the next call this long
// before it sleeps: a frame's calls (count, then map) and the next frame's
// come in quick bursts, and waking a sleeping thread costs more than that.
constexpr auto kWorkerSpin = std::chrono::microseconds(100);
// The caller spins this long for workers still finishing its call.
constexpr auto kCallerSpin = std::chrono::microseconds(2000);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// One parallel_for call, on its caller's stack: workers and the caller take
// indices until none are left. The caller returns once every index has run
// and no worker still holds the job.
struct Job {
  void (*body)(const void *, int);
  const void *context;
  int count;
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  // Workers that took the job: raised under the pool's list lock, dropped
  // without it.
  std::atomic<int> holders{0};
  // Set, under the list lock, once a woken worker has woken others for the
  // job's indices.
  bool fanned_out = false;
  // Set by the first body that throws, which then stores its exception:
  // the indices after it are only counted, and the caller rethrows it.
  std::atomic<bool> failed{false};
  std::exception_ptr error;
};

// Guards the list of calls. Its holders only scan a few pointers, and
// fifteen workers that see a call listed at once all take it in turn: a
// std::mutex put each of them to sleep in the kernel and woke them one
// after the other, about a microsecond a turn, which delayed both the
// workers' start and the caller's return (docs/benchmarks.md, "Pageable
// input"). A holder preempted on a machine with more threads than CPUs is
// waited for with yields, not spun for.
class SpinLock {
 public:
  void lock() {
    for (int turns = 0; locked_.exchange(true, std::memory_order_acquire);) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++turns < 1000)
          cpu_relax();
        else
          std::this_thread::yield();
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

std::string read_text(const std::string &path) {
  std::ifstream f(path);
  std::ostringstream s;
  if (f) s << f.rdbuf();
  return s.str();
}

// The threads a pool starts with, the caller's included: the machine's
// cores are not the process's to use where an affinity mask or a cgroup
// quota says otherwise, and more threads than CPUs only take turns (and
// spin while they wait).
int thread_budget() {
  int cpus = detail::affinity_cpus();
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  const int quota =
      detail::cgroup_cpu_limit(read_text("/proc/self/mountinfo"), read_text("/proc/self/cgroup"));
  if (quota > 0) cpus = std::min(cpus, quota);
  return std::max(1, cpus);
}

// Workers carry one name, so that `top -H` or /proc/PID/task/*/comm tell
// the pool's CPU time from the application's threads.
void name_this_thread() {
#ifdef __linux__
  (void)pthread_setname_np(pthread_self(), "cudafilters-cpu");
#endif
}

class Pool {
 public:
  Pool() {
    jobs_.reserve(64);
    const int wanted = thread_budget();
    // Where the system refuses a thread (EAGAIN under a pids or thread
    // limit), the pool runs with those it has: the caller at least. The
    // workers already started use this pool, so it must not throw.
    for (int i = 1; i < wanted; ++i) {
      try {
        std::thread([this] {
          name_this_thread();
          work();
        }).detach();
      } catch (...) {
        break;
      }
      ++workers_;
    }
  }
  int threads() const { return workers_ + 1; }

  void run(int count, void (*body)(const void *, int), const void *context,
           bool caller_first) {
    if (count <= 0) return;
    if (count == 1 || workers_ == 0) {
      for (int i = 0; i < count; ++i) body(context, i);
      return;
    }
    Job job;
    job.body = body;
    job.context = context;
    job.count = count;
    // Index 0 is the caller's: no worker can take it.
    if (caller_first) job.next.store(1);
    {
      std::lock_guard<SpinLock> lock(list_);
      jobs_.push_back(&job);
      posted_.fetch_add(1);
    }
    // Spinning workers see the count change. Sleeping ones are woken one
    // here, and the first to wake wakes as many more as the call has
    // indices for (next_job()): waking them all from here kept the caller
    // in the kernel for several microseconds before it could start on its
    // own indices.
    if (sleepers_.load() > 0) {
      { std::lock_guard<std::mutex> lock(sleep_); }
      wake_.notify_one();
    }
    if (caller_first) run_index(job, 0);
    take_indices(job);
    wait_until_finished(job);
    {
      std::lock_guard<SpinLock> lock(list_);
      jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
    }
    // A worker may have claimed the job between that check and the
    // erasure: it saw the last index still open just before this thread
    // took it. Unlisted, the job gets no more claims; such a worker finds
    // nothing left and lets go at once.
    wait_until_finished(job);
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  static bool finished(const Job &job) {
    return job.done.load() == job.count && job.holders.load() == 0;
  }

  void wait_until_finished(const Job &job) {
    const auto until = std::chrono::steady_clock::now() + kCallerSpin;
    while (!finished(job)) {
      if (std::chrono::steady_clock::now() > until) {
        std::unique_lock<std::mutex> lock(sleep_);
        finished_.wait(lock, [&] { return finished(job); });
        return;
      }
      cpu_relax();
    }
  }

  // A body that throws must neither end a worker (std::terminate) nor leave
  // the caller's job listed after its frame is gone.
  static void run_index(Job &job, int i) {
    if (!job.failed.load(std::memory_order_relaxed)) {
      try {
        job.body(job.context, i);
      } catch (...) {
        if (!job.failed.exchange(true)) job.error = std::current_exception();
      }
    }
    ++job.done;
  }

  static void take_indices(Job &job) {
    for (int i = job.next++; i < job.count; i = job.next++) run_index(job, i);
  }

  // A job with indices left, taken (holders + 1) under the list lock, or
  // null.
  Job *claim() {
    std::lock_guard<SpinLock> lock(list_);
    Job *job = open_job();
    if (job) ++job->holders;
    return job;
  }

  // Looks for a call, then spins for a while watching for new ones, then
  // sleeps until one comes. A spinning worker takes the list lock only when
  // a call has been listed since it last looked: workers that took the
  // pool's mutex on every turn while a call was still listed (its last
  // indices running) held up its caller and each other (docs/benchmarks.md,
  // "Pageable input").
  Job *next_job() {
    uint64_t seen = posted_.load();
    if (Job *job = claim()) return job;
    for (;;) {
      const auto until = std::chrono::steady_clock::now() + kWorkerSpin;
      do {
        const uint64_t now_posted = posted_.load();
        if (now_posted != seen) {
          seen = now_posted;
          if (Job *job = claim()) return job;
        }
        cpu_relax();
      } while (std::chrono::steady_clock::now() < until);
      // Asleep until a call is listed after `seen`. The count of sleepers
      // is raised before the last look at posted_, and a caller raises
      // posted_ before it looks at the sleepers (both sequentially
      // consistent): a call listed meanwhile either is seen here or finds
      // this worker counted, and then wakes it under the same mutex.
      {
        std::unique_lock<std::mutex> lock(sleep_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return posted_.load() != seen; });
        sleepers_.fetch_sub(1);
      }
      seen = posted_.load();
      Job *job = claim();
      // The first worker woken for a call wakes the others from here
      // rather than the caller (which meanwhile starts on its own
      // indices), but no more of them than the calls listed have indices
      // left: waking every sleeper put each of them to spin for kWorkerSpin
      // after a call that had nothing for most of them (a small plane's
      // copies). They are woken at once, as waking them one from another
      // delayed the last ones by several wake-ups. Every call listed that
      // no woken worker has served yet counts, not only the one this
      // worker took: with several callers at once, the worker one caller
      // woke may take another's call.
      if (job != nullptr) {
        int others = 0;
        {
          std::lock_guard<SpinLock> lock(list_);
          for (Job *j : jobs_) {
            const int open = j->count - j->next.load() - (j == job ? 1 : 0);
            if (j->fanned_out || open <= 0) continue;
            j->fanned_out = true;
            others += open;
          }
        }
        others = std::min(others, sleepers_.load());
        if (others > 0) {
          { std::lock_guard<std::mutex> lock(sleep_); }
          for (int i = 0; i < others; ++i) wake_.notify_one();
        }
      }
      if (job != nullptr) return job;
    }
  }

  void work() {
    for (;;) {
      Job *job = next_job();
      take_indices(*job);
      // Only the last worker out tells the caller, which may be asleep. The
      // job may be gone as soon as `holders` reaches 0 once it is unlisted:
      // nothing here touches it after.
      if (job->holders.fetch_sub(1) == 1) {
        // A caller asleep on finished_ checked its condition under the
        // mutex: taking it here orders that check before the notify.
        { std::lock_guard<std::mutex> lock(sleep_); }
        finished_.notify_all();
      }
    }
  }

  Job *open_job() const {
    for (Job *j : jobs_)
      if (j->next.load() < j->count) return j;
    return nullptr;
  }

  SpinLock list_;
  std::vector<Job *> jobs_;  // open and finishing calls, under list_
  // Counts the calls listed so far (changed under list_), for spinning
  // workers to watch without the lock.
  std::atomic<uint64_t> posted_{0};
  // Workers asleep on wake_, and callers asleep on finished_, wait under
  // sleep_.
  std::mutex sleep_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::atomic<int> sleepers_{0};
  int workers_ = 0;  // set by the constructor only
};

// Never destroyed: a streaming thread may still be filtering while the
// process exits, and must not meet a destroyed pool. The workers end with
// the process.
Pool &shared_pool() {
  static Pool *pool = new Pool;
  return *pool;
}

}  // namespace

void parallel_for_indices(int count, void (*body)(const void *, int), const void *context,
                          bool caller_first) {
  shared_pool().run(count, body, context, caller_first);
}

int parallel_threads() { return shared_pool().threads(); }

namespace detail {

int affinity_cpus() {
#ifdef __linux__
  // cpu_set_t holds 1024 CPUs; larger machines need a larger set.
  for (int n = CPU_SETSIZE; n <= (1 << 16); n *= 2) {
    cpu_set_t *set = CPU_ALLOC(n);
    if (set == nullptr) return 0;
    const size_t size = CPU_ALLOC_SIZE(n);
    const bool ok = sched_getaffinity(0, size, set) == 0;
    const int cpus = ok ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (ok) return cpus;
    if (errno != EINVAL) return 0;
  }
#endif
  return 0;
}

namespace {

// A path from /proc/self/mountinfo, where space, tab, newline and backslash
// are escaped as \ooo.
std::string unescape(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool octal = true;
      for (size_t k = 1; k <= 3; ++k) {
        const char d = s[i + k];
        octal = octal && d >= '0' && d <= '7';
        v = v * 8 + (d - '0');
      }
      if (octal) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool has_token(const std::string &list, const std::string &token) {
  std::istringstream s(list);
  std::string t;
  while (std::getline(s, t, ','))
    if (t == token) return true;
  return false;
}

struct CgroupMount {
  std::string root;   // the mounted group, as a cgroup path
  std::string point;  // where it is mounted
  bool v2;
};

// The group a process is in, as a directory under mount `m`.
std::string group_dir(const CgroupMount &m, const std::string &path) {
  if (m.root == "/") return path == "/" ? m.point : m.point + path;
  if (path.compare(0, m.root.size(), m.root) == 0 &&
      (path.size() == m.root.size() || path[m.root.size()] == '/'))
    return m.point + path.substr(m.root.size());
  // A mount of some other group (a container's own, with the host's path
  // in /proc/self/cgroup): the best there is.
  return m.point;
}

// Whole CPUs (rounded up) that `quota` microseconds of every `period`
// allow; 0 for no limit.
int64_t quota_cpus(int64_t quota, int64_t period) {
  if (quota <= 0 || period <= 0) return 0;
  return (quota + period - 1) / period;
}

// The limit of one group directory alone; 0 for none.
int64_t group_limit(const std::string &dir, bool v2) {
  if (v2) {
    std::istringstream s(read_text(dir + "/cpu.max"));
    std::string quota;
    int64_t period = 100000;
    if (!(s >> quota) || quota == "max") return 0;
    s >> period;
    return quota_cpus(std::atoll(quota.c_str()), period);
  }
  int64_t quota = 0, period = 0;
  std::istringstream(read_text(dir + "/cpu.cfs_quota_us")) >> quota;
  std::istringstream(read_text(dir + "/cpu.cfs_period_us")) >> period;
  return quota_cpus(quota, period);
}

}  // namespace

int cgroup_cpu_limit(const std::string &mountinfo, const std::string &proc_cgroup) {
  // The process's group in the unified (v2) hierarchy and in the v1
  // hierarchy that has the cpu controller.
  std::string v2_path, v1_path;
  {
    std::istringstream lines(proc_cgroup);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
      if (b == std::string::npos) continue;
      const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
      const std::string path = line.substr(b + 1);
      if (path.empty() || path[0] != '/') continue;
      if (id == "0" && controllers.empty())
        v2_path = path;
      else if (has_token(controllers, "cpu"))
        v1_path = path;
    }
  }
  int64_t limit = 0;
  std::istringstream lines(mountinfo);
  std::string line;
  while (std::getline(lines, line)) {
    // id parent major:minor root point options [optional fields] - type source super-options
    std::istringstream f(line);
    std::string id, parent, device, root, point, options, field, type, source, super;
    if (!(f >> id >> parent >> device >> root >> point >> options)) continue;
    while (f >> field && field != "-") {
    }
    if (field != "-" || !(f >> type >> source >> super)) continue;
    CgroupMount m{unescape(root), unescape(point), type == "cgroup2"};
    const std::string &path = m.v2 ? v2_path : v1_path;
    if (path.empty() || (!m.v2 && !(type == "cgroup" && has_token(super, "cpu")))) continue;
    // The group's own limit and its ancestors' up to the mount: the
    // smallest applies.
    std::string dir = group_dir(m, path);
    for (;;) {
      const int64_t l = group_limit(dir, m.v2);
      if (l > 0 && (limit == 0 || l < limit)) limit = l;
      if (dir.size() <= m.point.size()) break;
      const size_t slash = dir.rfind('/');
      if (slash == std::string::npos || slash < m.point.size()) break;
      dir.resize(slash);
    }
  }
  return static_cast<int>(std::min<int64_t>(limit, 1 << 20));
}

}  // namespace detail

}  // namespace cudafilters
