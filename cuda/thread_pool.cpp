#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

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
  std::atomic<int> holders{0};  // workers that took the job; changed under the pool's mutex
  // Set by the first body that throws, which then stores its exception:
  // the indices after it are only counted, and the caller rethrows it.
  std::atomic<bool> failed{false};
  std::exception_ptr error;
};

// The threads a pool starts with, the caller's included.
int thread_budget() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

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
        std::thread([this] { work(); }).detach();
      } catch (...) {
        break;
      }
      ++workers_;
    }
  }
  int threads() const { return workers_ + 1; }

  void run(int count, void (*body)(const void *, int), const void *context) {
    if (count <= 0) return;
    if (count == 1 || workers_ == 0) {
      for (int i = 0; i < count; ++i) body(context, i);
      return;
    }
    Job job;
    job.body = body;
    job.context = context;
    job.count = count;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(&job);
      listed_.store(static_cast<int>(jobs_.size()));
    }
    wake_.notify_all();
    take_indices(job);
    wait_until_finished(job);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
      listed_.store(static_cast<int>(jobs_.size()));
    }
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
        std::unique_lock<std::mutex> lock(mutex_);
        finished_.wait(lock, [&] { return finished(job); });
        return;
      }
      cpu_relax();
    }
  }

  // A body that throws must neither end a worker (std::terminate) nor leave
  // the caller's job listed after its frame is gone.
  static void take_indices(Job &job) {
    for (int i = job.next++; i < job.count; i = job.next++) {
      if (!job.failed.load(std::memory_order_relaxed)) {
        try {
          job.body(job.context, i);
        } catch (...) {
          if (!job.failed.exchange(true)) job.error = std::current_exception();
        }
      }
      ++job.done;
    }
  }

  // A job with indices left, taken (holders + 1) under the mutex, or null.
  Job *claim() {
    Job *job = open_job();
    if (job) ++job->holders;
    return job;
  }

  // Spins for a while on the list of calls, then sleeps until one comes.
  Job *next_job() {
    const auto until = std::chrono::steady_clock::now() + kWorkerSpin;
    do {
      if (listed_.load() > 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (Job *job = claim()) return job;
      }
      cpu_relax();
    } while (std::chrono::steady_clock::now() < until);
    std::unique_lock<std::mutex> lock(mutex_);
    Job *job = nullptr;
    wake_.wait(lock, [&] { return (job = claim()) != nullptr; });
    return job;
  }

  void work() {
    for (;;) {
      Job *job = next_job();
      take_indices(*job);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --job->holders;
      }
      finished_.notify_all();
    }
  }

  Job *open_job() const {
    for (Job *j : jobs_)
      if (j->next.load() < j->count) return j;
    return nullptr;
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::vector<Job *> jobs_;     // open and finishing calls
  std::atomic<int> listed_{0};  // jobs_.size(), for spinning workers to read without the mutex
  int workers_ = 0;             // set by the constructor only
};

// Never destroyed: a streaming thread may still be filtering while the
// process exits, and must not meet a destroyed pool. The workers end with
// the process.
Pool &shared_pool() {
  static Pool *pool = new Pool;
  return *pool;
}

}  // namespace

void parallel_for_indices(int count, void (*body)(const void *, int), const void *context) {
  shared_pool().run(count, body, context);
}

int parallel_threads() { return shared_pool().threads(); }

}  // namespace cudafilters
