// timerfd, which Swift's Glibc module does not export: the clock-step watcher (Platform's
// ClockSteps) arms a CLOCK_REALTIME timer with TFD_TIMER_CANCEL_ON_SET, the kernel's notice that
// the wall clock was set.
//
// Declared here rather than by including <sys/timerfd.h>: that header pulls in <time.h>, and the
// clang importer then attributes `timespec` and friends to this module, so every file of a module
// that can see it and uses `timespec` without importing CTimerFD failed to compile with
// MemberImportVisibility. The prototypes are glibc's (sys/timerfd.h), with the struct spelled out
// under a name of its own (the layout of `struct itimerspec`: two `struct timespec`s of a `long`
// seconds and a `long` nanoseconds field, as on every 64-bit Linux and 32-bit ones without
// 64-bit time_t).
#ifndef HEALTHGATE_CTIMERFD_H
#define HEALTHGATE_CTIMERFD_H

struct hg_itimerspec {
    long interval_sec;
    long interval_nsec;
    long value_sec;
    long value_nsec;
};

int timerfd_create(int clockid, int flags);
int timerfd_settime(int fd, int flags, const struct hg_itimerspec *new_value, struct hg_itimerspec *old_value);

/// O_CLOEXEC, TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET (linux/timerfd.h).
static const int HG_TFD_CLOEXEC = 02000000;
static const int HG_TFD_TIMER_ABSTIME = 1;
static const int HG_TFD_TIMER_CANCEL_ON_SET = 2;

#endif
