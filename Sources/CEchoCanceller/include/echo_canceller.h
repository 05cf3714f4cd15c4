#pragma once
#include <stddef.h>
#include <stdint.h>

/* A minimal C surface over WebRTC's AudioProcessing (libwebrtc-audio-processing 0.3), optionally behind
   Speex's linear echo filter (libspeexdsp), mono 16-bit PCM in
   10 ms frames. A handle is not thread-safe: its owner confines it to one thread or actor. Different handles
   may run on different threads at once, and each one's output depends on its own input only (creating one
   waits for the others' calls in progress). The int functions return OC_AEC_OK or a negative OC_AEC_* code. */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oc_aec oc_aec;

enum {
    OC_AEC_OK = 0,
    OC_AEC_BAD_RATE = -1,       /* not 8, 16, 32 or 48 kHz */
    OC_AEC_BAD_FRAME = -2,      /* not rate / 100 samples */
    OC_AEC_BAD_OPTION = -3,
    OC_AEC_CREATE_FAILED = -4,
    OC_AEC_LIBRARY = -5         /* the library refused the call; oc_aec_last_library_error says how */
};

typedef struct {
    int high_pass_filter;       /* 0 or 1 */
    int noise_suppression;      /* -1 off, else 0..3 (low, moderate, high, very high) */
    int gain_control;           /* 0 off, 1 adaptive digital */
    int suppression_level;      /* echo suppression: 0 low, 1 moderate, 2 high */
    int linear_stage_ms;        /* 0 off, else the echo tail (1..500 ms) of a Speex linear filter run first */
} oc_aec_options;

typedef struct {
    /* The library's running measurements in dB, or INT32_MIN while it has none. */
    int echo_return_loss;
    int echo_return_loss_enhancement;
    /* Delay between the reference and its echo the library estimates, in ms (-1 while unknown). */
    int delay_median_ms;
    int delay_std_ms;
    /* Whether the last processed frame held echo. */
    int stream_has_echo;
} oc_aec_stats;

/* Creates a canceller for `sample_rate` Hz; on failure returns NULL and sets *error. */
oc_aec *oc_aec_create(int sample_rate, const oc_aec_options *options, int *error);
/* One 10 ms frame of what is being played (the far end). */
int oc_aec_analyze_reverse(oc_aec *aec, const int16_t *samples, size_t count);
/* One 10 ms frame of what was captured, cleaned in place. `delay_ms`: how long after its reference the
   echo is expected in the capture (a hint; the library also estimates the delay itself). */
int oc_aec_process(oc_aec *aec, int16_t *samples, size_t count, int delay_ms);
/* oc_aec_process that also copies what WebRTC's canceller was given into `linear` (count samples): the
   linear stage's output, or the capture itself without the stage or where its frame was dropped. */
int oc_aec_process_linear(oc_aec *aec, int16_t *samples, size_t count, int delay_ms, int16_t *linear);
int oc_aec_stats_get(oc_aec *aec, oc_aec_stats *stats);
/* The library's code behind the last OC_AEC_LIBRARY result. */
int oc_aec_last_library_error(const oc_aec *aec);
void oc_aec_destroy(oc_aec *aec);

#ifdef __cplusplus
}
#endif
