/* A sampling CPU profiler to preload into a benchmark: every SAMPLER_US
 * microseconds of a thread's CPU time (default 1000; the kernel's tick
 * bounds it) a SIGPROF records the thread's name and call stack; at exit the samples, and each
 * address's module and offset, go to $SAMPLER_OUT. studies/element-cpu/
 * profile.py turns them into inclusive and exclusive times per function.
 * (The GPU host has no perf.) Build:
 *   gcc -O2 -shared -fPIC -o sampler.so sampler.c -ldl -lpthread -lrt */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#define MAX_SAMPLES 400000
#define DEPTH 40

static void *stacks[MAX_SAMPLES][DEPTH];
static unsigned char depths[MAX_SAMPLES];
static char names[MAX_SAMPLES][16];
static double times[MAX_SAMPLES];
static atomic_int count;
static atomic_int armed;
static long period_us = 1000;

static void on_sample(int sig, siginfo_t *info, void *ctx) {
  (void)sig; (void)info; (void)ctx;
  /* Once the samples are being written out, other threads' timers may
   * still fire: they must not write into them. */
  if (!atomic_load(&armed)) return;
  int i = atomic_fetch_add(&count, 1);
  if (i >= MAX_SAMPLES) return;
  int saved = errno;
  depths[i] = (unsigned char)backtrace(stacks[i], DEPTH);
  prctl(PR_GET_NAME, names[i], 0, 0, 0);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  times[i] = ts.tv_sec + ts.tv_nsec * 1e-9;
  errno = saved;
}

/* Each thread's own CPU-time timer signals it every period of CPU time it
 * uses, so samples fall where threads run, never where they sleep. */
static void arm_thread_timer(void) {
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGPROF;
  sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t t;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t) != 0) return;
  struct itimerspec its = {{0, period_us * 1000}, {0, period_us * 1000}};
  timer_settime(t, 0, &its, NULL);
}

struct start_args {
  void *(*fn)(void *);
  void *arg;
};

static void *start_thread(void *p) {
  struct start_args a = *(struct start_args *)p;
  free(p);
  arm_thread_timer();
  return a.fn(a.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
  if (!real) real = dlsym(RTLD_NEXT, "pthread_create");
  struct start_args *a = atomic_load(&armed) ? malloc(sizeof *a) : NULL;
  if (!a) return real(thread, attr, fn, arg);
  a->fn = fn;
  a->arg = arg;
  const int r = real(thread, attr, start_thread, a);
  if (r != 0) free(a);
  return r;
}

__attribute__((constructor)) static void start(void) {
  const char *out = getenv("SAMPLER_OUT");
  if (!out || !*out) return;
  void *warm[4];
  backtrace(warm, 4); /* loads libgcc_s outside the handler */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sample;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  const char *us = getenv("SAMPLER_US");
  if (us) period_us = atol(us);
  atomic_store(&armed, 1);
  arm_thread_timer();
}

__attribute__((destructor)) static void finish(void) {
  if (!atomic_exchange(&armed, 0)) return;
  sigset_t prof;
  sigemptyset(&prof);
  sigaddset(&prof, SIGPROF);
  pthread_sigmask(SIG_BLOCK, &prof, NULL);
  int n = atomic_load(&count);
  if (n > MAX_SAMPLES) n = MAX_SAMPLES;
  if (n == 0) return;
  FILE *f = fopen(getenv("SAMPLER_OUT"), "w");
  if (!f) return;
  fprintf(f, "period_us %ld\n", period_us);
  /* Stacks as addresses, then each distinct address once, with its module,
   * offset and nearest exported symbol. Return addresses point after their
   * call: the call itself is one byte before. */
  size_t cap = 1 << 16, used = 0;
  void **seen = calloc(cap, sizeof *seen);
  for (int i = 0; i < n; ++i) {
    fprintf(f, "S %.6f %.16s", times[i], names[i]);
    for (int d = 0; d < depths[i]; ++d) {
      void *q = d > 0 ? (char *)stacks[i][d] - 1 : stacks[i][d];
      fprintf(f, " %lx", (unsigned long)q);
      if (!seen) continue;
      size_t h = ((unsigned long)q * 11400714819323198485ull) >> 48 & (cap - 1);
      while (seen[h] && seen[h] != q) h = (h + 1) & (cap - 1);
      if (!seen[h] && used < cap / 2) { seen[h] = q; ++used; }
    }
    fputc('\n', f);
  }
  for (size_t h = 0; seen && h < cap; ++h) {
    if (!seen[h]) continue;
    Dl_info dl;
    if (dladdr(seen[h], &dl) && dl.dli_fname) {
      const char *base = strrchr(dl.dli_fname, '/');
      fprintf(f, "A %lx %s %lx %s\n", (unsigned long)seen[h], base ? base + 1 : dl.dli_fname,
              (unsigned long)((char *)seen[h] - (char *)dl.dli_fbase),
              dl.dli_sname ? dl.dli_sname : "?");
    }
  }
  free(seen);
  fclose(f);
}
