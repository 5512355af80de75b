// timerfd (glibc's <sys/timerfd.h>), which Swift's Glibc module does not export: the clock-step
// watcher (Platform's ClockSteps) arms a CLOCK_REALTIME timer with TFD_TIMER_CANCEL_ON_SET, the
// kernel's notice that the wall clock was set.
#include <sys/timerfd.h>
