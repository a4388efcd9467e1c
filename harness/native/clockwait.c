/*
 * ackbench's companion to libfaketime for a live run's scaled consumer clock: the timed waits
 * on an explicit clock that libfaketime 0.9.10 (Debian 12's) leaves alone.
 *
 * sem_clockwait() and pthread_cond_clockwait() (glibc 2.30) take an absolute deadline on a
 * clock the caller names. A program under libfaketime computes that deadline from its faked
 * clock, which runs `x` times faster and, in libfaketime's offset mode, reads far from the
 * kernel's (its CLOCK_MONOTONIC is an epoch time); the kernel then waits for the faked deadline
 * on its own clock: decades. CPython 3.11 takes every lock with a timeout this way
 * (threading.Event.wait, Condition.wait, queue.get), libstdc++ its condition_variable waits.
 *
 * Each wait here is turned into the same wait on the kernel's clock: time left on the faked
 * clock, divided by the speed, from the kernel's now; then libc's own function waits. libc's,
 * not the next in the chain: a libfaketime that converts these itself (0.9.11 and later) would
 * convert twice. sem_timedwait() is converted the same way: 0.9.10 scales its deadline by the
 * speed instead of its inverse.
 *
 * The speed is FAKETIME's `x` factor (1 without one). Loaded before libfaketime:
 * LD_PRELOAD=libackbench_clockwait.so:libfaketime.so.1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double speed(void) {
  const char *faketime = getenv("FAKETIME");
  const char *x = faketime ? strchr(faketime, 'x') : NULL;
  double s = x ? strtod(x + 1, NULL) : 1.0;
  return s > 0 ? s : 1.0;
}

/* The faked deadline `abs` on `clock`, as a deadline on the kernel's `clock`. */
static struct timespec kernel_deadline(clockid_t clock, const struct timespec *abs) {
  struct timespec faked_now, kernel_now, out;
  clock_gettime(clock, &faked_now);               /* through libfaketime */
  syscall(SYS_clock_gettime, clock, &kernel_now); /* the kernel's own */
  double left = (double)(abs->tv_sec - faked_now.tv_sec) +
                (double)(abs->tv_nsec - faked_now.tv_nsec) / 1e9;
  if (left < 0) left = 0;
  left /= speed();
  long long whole = (long long)left;
  long long ns = (long long)kernel_now.tv_nsec + (long long)((left - (double)whole) * 1e9);
  out.tv_sec = kernel_now.tv_sec + (time_t)whole + (time_t)(ns / 1000000000LL);
  out.tv_nsec = (long)(ns % 1000000000LL);
  return out;
}

/* libc's own definition of `name`. */
static void *libc_function(const char *name) {
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  return libc ? dlsym(libc, name) : NULL;
}

int sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *abs) {
  static int (*libc)(sem_t *, clockid_t, const struct timespec *);
  if (!libc) libc = (int (*)(sem_t *, clockid_t, const struct timespec *))libc_function("sem_clockwait");
  if (!libc) {
    errno = ENOSYS;
    return -1;
  }
  struct timespec deadline = kernel_deadline(clock, abs);
  return libc(sem, clock, &deadline);
}

int sem_timedwait(sem_t *sem, const struct timespec *abs) {
  static int (*libc)(sem_t *, const struct timespec *);
  if (!libc) libc = (int (*)(sem_t *, const struct timespec *))libc_function("sem_timedwait");
  if (!libc) {
    errno = ENOSYS;
    return -1;
  }
  struct timespec deadline = kernel_deadline(CLOCK_REALTIME, abs);
  return libc(sem, &deadline);
}

int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                           const struct timespec *abs) {
  static int (*libc)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
  if (!libc)
    libc = (int (*)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *))
        libc_function("pthread_cond_clockwait");
  if (!libc) return ENOSYS;
  struct timespec deadline = kernel_deadline(clock, abs);
  return libc(cond, mutex, clock, &deadline);
}
