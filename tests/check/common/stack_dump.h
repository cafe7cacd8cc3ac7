/* Every thread's stack on standard error when a test is stopped from
 * outside (SIGTERM, as `timeout` and meson's test timeout send it) or ends
 * in std::terminate: a test that hangs or aborts on the GPU host, where no
 * debugger is at hand, then says where. Frames are printed as
 * "object(+offset)": `addr2line -f -C -e OBJECT OFFSET` names them on the
 * machine the binaries were built on. */
#pragma once

#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace test {

namespace stack_dump {

inline void
write_str (const char *s)
{
  size_t n = 0;
  while (s[n])
    ++n;
  (void) !write (STDERR_FILENO, s, n);
}

/* The calling thread's stack (async-signal-safe once backtrace() has been
 * called once, which loads libgcc). */
inline void
this_thread (const char *why)
{
  char line[96];
  snprintf (line, sizeof line, "--- thread %ld (%s):\n",
      (long) syscall (SYS_gettid), why);
  write_str (line);
  void *frames[64];
  const int n = backtrace (frames, 64);
  backtrace_symbols_fd (frames, n, STDERR_FILENO);
}

inline void
on_dump_signal (int)
{
  this_thread ("stopped");
}

/* Asks every other thread of the process to print its stack, then prints
 * its own, and ends the process as SIGTERM would. */
inline void
on_terminate_signal (int sig)
{
  const long self = syscall (SYS_gettid);
  DIR *tasks = opendir ("/proc/self/task");
  if (tasks) {
    while (struct dirent * t = readdir (tasks)) {
      const long tid = strtol (t->d_name, nullptr, 10);
      if (tid <= 0 || tid == self)
        continue;
      syscall (SYS_tgkill, (long) getpid (), tid, SIGUSR2);
      usleep (20000);
    }
    closedir (tasks);
  }
  this_thread ("got the signal");
  signal (sig, SIG_DFL);
  raise (sig);
}

inline void
on_terminate ()
{
  write_str ("std::terminate");
  if (std::exception_ptr e = std::current_exception ()) {
    try {
      std::rethrow_exception (e);
    } catch (const std::exception & x) {
      write_str (": ");
      write_str (x.what ());
    } catch (...) {
    }
  }
  write_str ("\n");
  this_thread ("terminate");
  abort ();
}

}  // namespace stack_dump

inline void
install_stack_dumps ()
{
  void *warm[1];
  backtrace (warm, 1);
  signal (SIGUSR2, stack_dump::on_dump_signal);
  signal (SIGTERM, stack_dump::on_terminate_signal);
  std::set_terminate (stack_dump::on_terminate);
}

}  // namespace test
