#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-bus.h>
#include <sys/syscall.h>
#include <unistd.h>

/// The calling thread's kernel id (what rtkit's MakeThreadRealtime takes, not a pthread_t): syscall() is variadic,
/// which Swift cannot call.
static inline pid_t csystemd_gettid(void) { return (pid_t) syscall(SYS_gettid); }
#endif
