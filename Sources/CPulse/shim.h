#pragma once
#include <pulse/pulseaudio.h>
#include <sys/time.h>

/* The mainloop API is a table of function pointers; these wrappers let Swift arm and free a one-shot
   timer (used for reconnect polling) without a context, which may not exist while the server is down. */
static inline pa_time_event *shim_pa_timer_new(pa_mainloop_api *api, pa_usec_t delay_usec,
                                               pa_time_event_cb_t cb, void *userdata) {
    struct timeval tv;
    pa_gettimeofday(&tv);
    pa_timeval_add(&tv, delay_usec);
    return api->time_new(api, &tv, cb, userdata);
}

static inline void shim_pa_timer_free(pa_mainloop_api *api, pa_time_event *e) {
    api->time_free(e);
}
