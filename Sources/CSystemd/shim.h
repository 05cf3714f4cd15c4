#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
