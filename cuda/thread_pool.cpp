#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cudafilters {

namespace {

// One parallel_for call, on its caller's stack: workers and the caller take
// indices until none are left. The caller returns once every index has run
// and no worker still holds the job.
struct Job {
  void (*body)(const void *, int);
  const void *context;
  int count;
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  int holders = 0;  // workers inside take_indices; under the pool's mutex
};

class Pool {
 public:
  Pool() {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    jobs_.reserve(64);
    for (unsigned i = 1; i < cores; ++i) {
      workers_.emplace_back([this] { work(); });
      workers_.back().detach();
    }
  }
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int count, void (*body)(const void *, int), const void *context) {
    if (count <= 0) return;
    if (count == 1 || workers_.empty()) {
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
    }
    wake_.notify_all();
    take_indices(job);
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return job.done.load() == job.count && job.holders == 0; });
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  }

 private:
  void take_indices(Job &job) {
    for (int i = job.next++; i < job.count; i = job.next++) {
      job.body(job.context, i);
      ++job.done;
    }
  }

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      Job *job = nullptr;
      wake_.wait(lock, [&] { return (job = open_job()) != nullptr; });
      ++job->holders;
      lock.unlock();
      take_indices(*job);
      lock.lock();
      --job->holders;
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
  std::vector<Job *> jobs_;  // open and finishing calls
  std::vector<std::thread> workers_;
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
