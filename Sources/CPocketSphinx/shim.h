#pragma once
#include <pocketsphinx.h>
#include <sphinxbase/cmd_ln.h>
#include <sphinxbase/err.h>
#include <sphinxbase/logmath.h>
#include <stdarg.h>
#include <stdio.h>

/// A non-variadic log sink Swift can implement: sphinxbase's callback is variadic, which Swift cannot import.
typedef void (*ocl_ps_log_sink)(int level, const char *message);

static ocl_ps_log_sink ocl_ps_current_sink = NULL;

static void ocl_ps_forward_log(void *user_data, err_lvl_t level, const char *format, ...) {
    (void)user_data;
    ocl_ps_log_sink sink = ocl_ps_current_sink;
    if (sink == NULL) return;
    char message[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    sink((int)level, message);
}

/// Routes every sphinxbase/pocketsphinx log line to `sink` (NULL silences them all).
static inline void ocl_ps_set_log_sink(ocl_ps_log_sink sink) {
    ocl_ps_current_sink = sink;
    err_set_callback(ocl_ps_forward_log, NULL);
    // Some output (the configuration table) is written straight to the log file, not through the callback.
    err_set_logfp(NULL);
}

/// Builds a decoder configuration from an argv-style array (strict: unknown or duplicate names fail).
static inline cmd_ln_t *ocl_ps_config_from_argv(int argc, char **argv) {
    return cmd_ln_parse_r(NULL, ps_args(), argc, argv, TRUE);
}
