#include "echo_canceller.h"

#include <climits>
#include <cstring>
#include <new>

#include <pthread.h>

#include <speex/speex_echo.h>

#include <webrtc/modules/audio_processing/include/audio_processing.h>
#include <webrtc/modules/interface/module_common_types.h>

// Sub-frames of reference queued for the linear stage: the caller feeds a whole 20 ms frame's reference
// before processing its capture, one 10 ms sub-frame at a time.
enum { kQueuedFar = 8, kMaxSubFrame = 480 };

struct oc_aec {
    webrtc::AudioProcessing *apm;
    int sample_rate;
    int last_library_error;
    webrtc::AudioFrame frame;
    SpeexEchoState *linear;  // null when the linear stage is off
    int16_t far[kQueuedFar][kMaxSubFrame];
    int far_count;
    int16_t linear_out[kMaxSubFrame];
};

// WebRTC 0.3 keeps its echo canceller's and FFT's fastest routines in process-wide function pointers, and
// creating a canceller first sets them to the plain C routines, then back to the SSE2 ones. A canceller
// running meanwhile computes some blocks with the others, which round differently: its output then depends
// on when another was created, and a recorded capture no longer replays to what the live one passed on. So
// creating and destroying hold this lock alone; processing shares it. A waiting creator goes first, or
// cancellers processing on other threads, one sub-frame after another, could keep it waiting for ever.
static pthread_rwlock_t *library_lock() {
    static pthread_rwlock_t *lock = [] {
        static pthread_rwlock_t made;
        pthread_rwlockattr_t attr;
        pthread_rwlockattr_init(&attr);
        pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        pthread_rwlock_init(&made, &attr);
        pthread_rwlockattr_destroy(&attr);
        return &made;
    }();
    return lock;
}

// Holds the library lock for a scope: alone (creating, destroying) or shared (processing).
class LibraryLock {
  public:
    explicit LibraryLock(bool alone) {
        if (alone) pthread_rwlock_wrlock(library_lock());
        else pthread_rwlock_rdlock(library_lock());
    }
    ~LibraryLock() { pthread_rwlock_unlock(library_lock()); }
    LibraryLock(const LibraryLock &) = delete;
    LibraryLock &operator=(const LibraryLock &) = delete;
};

static int check(oc_aec *aec, int result) {
    if (result == webrtc::AudioProcessing::kNoError) return OC_AEC_OK;
    aec->last_library_error = result;
    return OC_AEC_LIBRARY;
}

static int configure(webrtc::AudioProcessing *apm, const oc_aec_options &o) {
    using webrtc::AudioProcessing;
    webrtc::EchoCancellation *ec = apm->echo_cancellation();
    static const webrtc::EchoCancellation::SuppressionLevel levels[] = {
        webrtc::EchoCancellation::kLowSuppression, webrtc::EchoCancellation::kModerateSuppression,
        webrtc::EchoCancellation::kHighSuppression};
    if (o.suppression_level < 0 || o.suppression_level > 2) return OC_AEC_BAD_OPTION;
    if (o.linear_stage_ms < 0 || o.linear_stage_ms > 500) return OC_AEC_BAD_OPTION;
    if (o.noise_suppression < -1 || o.noise_suppression > 3) return OC_AEC_BAD_OPTION;
    if (o.gain_control < 0 || o.gain_control > 1) return OC_AEC_BAD_OPTION;
    int r = ec->Enable(true);
    if (r == AudioProcessing::kNoError) r = ec->set_suppression_level(levels[o.suppression_level]);
    if (r == AudioProcessing::kNoError) r = ec->enable_metrics(true);
    if (r == AudioProcessing::kNoError) r = ec->enable_delay_logging(true);
    if (r == AudioProcessing::kNoError) r = apm->high_pass_filter()->Enable(o.high_pass_filter != 0);
    if (r == AudioProcessing::kNoError && o.noise_suppression >= 0) {
        static const webrtc::NoiseSuppression::Level ns[] = {
            webrtc::NoiseSuppression::kLow, webrtc::NoiseSuppression::kModerate,
            webrtc::NoiseSuppression::kHigh, webrtc::NoiseSuppression::kVeryHigh};
        r = apm->noise_suppression()->set_level(ns[o.noise_suppression]);
        if (r == AudioProcessing::kNoError) r = apm->noise_suppression()->Enable(true);
    }
    if (r == AudioProcessing::kNoError && o.gain_control) {
        r = apm->gain_control()->set_mode(webrtc::GainControl::kAdaptiveDigital);
        if (r == AudioProcessing::kNoError) r = apm->gain_control()->Enable(true);
    }
    return r == AudioProcessing::kNoError ? OC_AEC_OK : OC_AEC_CREATE_FAILED;
}

static void destroy(oc_aec *aec);

extern "C" oc_aec *oc_aec_create(int sample_rate, const oc_aec_options *options, int *error) {
    LibraryLock alone(true);
    int ignored;
    if (!error) error = &ignored;
    if (sample_rate != 8000 && sample_rate != 16000 && sample_rate != 32000 && sample_rate != 48000) {
        *error = OC_AEC_BAD_RATE;
        return nullptr;
    }
    oc_aec_options defaults = {0, -1, 0, 0, 0};
    const oc_aec_options &o = options ? *options : defaults;
    // The delay-agnostic mode and the extended filter (as PulseAudio's module-echo-cancel sets them) let the
    // canceller find and follow an echo path whose delay we only know roughly: a sound server's latency
    // estimate, a loudspeaker's distance.
    webrtc::Config config;
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
    webrtc::AudioProcessing *apm = webrtc::AudioProcessing::Create(config);
    if (!apm) {
        *error = OC_AEC_CREATE_FAILED;
        return nullptr;
    }
    int r = apm->Initialize(sample_rate, sample_rate, sample_rate, webrtc::AudioProcessing::kMono,
                            webrtc::AudioProcessing::kMono, webrtc::AudioProcessing::kMono);
    if (r == webrtc::AudioProcessing::kNoError) r = configure(apm, o);
    else r = OC_AEC_CREATE_FAILED;
    if (r != OC_AEC_OK) {
        delete apm;
        *error = r;
        return nullptr;
    }
    oc_aec *aec = new (std::nothrow) oc_aec();
    if (!aec) {
        delete apm;
        *error = OC_AEC_CREATE_FAILED;
        return nullptr;
    }
    aec->apm = apm;
    aec->sample_rate = sample_rate;
    aec->last_library_error = 0;
    aec->far_count = 0;
    aec->linear = nullptr;
    if (o.linear_stage_ms > 0) {
        aec->linear = speex_echo_state_init(sample_rate / 100, sample_rate / 1000 * o.linear_stage_ms);
        int rate = sample_rate;
        if (!aec->linear || speex_echo_ctl(aec->linear, SPEEX_ECHO_SET_SAMPLING_RATE, &rate) != 0) {
            destroy(aec);
            *error = OC_AEC_CREATE_FAILED;
            return nullptr;
        }
    }
    *error = OC_AEC_OK;
    return aec;
}

static double energy(const int16_t *samples, size_t count) {
    double sum = 0;
    for (size_t i = 0; i < count; i++) sum += static_cast<double>(samples[i]) * samples[i];
    return sum;
}

static void drop_far(oc_aec *aec) {
    std::memmove(aec->far[0], aec->far[1], (aec->far_count - 1) * sizeof aec->far[0]);
    aec->far_count--;
}

static int load(oc_aec *aec, const int16_t *samples, size_t count) {
    if (count != static_cast<size_t>(aec->sample_rate / 100) || !samples) return OC_AEC_BAD_FRAME;
    webrtc::AudioFrame &f = aec->frame;
    f.sample_rate_hz_ = aec->sample_rate;
    f.num_channels_ = 1;
    f.samples_per_channel_ = count;
    std::memcpy(f.data_, samples, count * sizeof(int16_t));
    return OC_AEC_OK;
}

extern "C" int oc_aec_analyze_reverse(oc_aec *aec, const int16_t *samples, size_t count) {
    LibraryLock shared(false);
    int r = load(aec, samples, count);
    if (r != OC_AEC_OK) return r;
    if (aec->linear) {
        if (aec->far_count == kQueuedFar) drop_far(aec);
        std::memcpy(aec->far[aec->far_count++], samples, count * sizeof(int16_t));
    }
    return check(aec, aec->apm->AnalyzeReverseStream(&aec->frame));
}

extern "C" int oc_aec_process(oc_aec *aec, int16_t *samples, size_t count, int delay_ms) {
    return oc_aec_process_linear(aec, samples, count, delay_ms, nullptr);
}

extern "C" int oc_aec_process_linear(oc_aec *aec, int16_t *samples, size_t count, int delay_ms, int16_t *linear) {
    LibraryLock shared(false);
    if (count != static_cast<size_t>(aec->sample_rate / 100) || !samples) return OC_AEC_BAD_FRAME;
    const int16_t *input = samples;
    if (aec->linear) {
        // Speex's adaptive filter subtracts its estimate of the echo and nothing else, so the user's speech
        // passes it whole; WebRTC's canceller then meets a weaker echo beside it, and its suppressor takes
        // less of the user with the echo.
        static const int16_t silence[kMaxSubFrame] = {0};
        speex_echo_cancellation(aec->linear, samples, aec->far_count > 0 ? aec->far[0] : silence, aec->linear_out);
        if (aec->far_count > 0) drop_far(aec);
        // A filter that adds sound is subtracting an echo that is not there (its reference misplaced, the
        // path changed): its frame is dropped until it has learnt the path again.
        if (energy(aec->linear_out, count) <= energy(samples, count)) input = aec->linear_out;
    }
    if (linear) std::memcpy(linear, input, count * sizeof(int16_t));
    int r = load(aec, input, count);
    if (r != OC_AEC_OK) return r;
    // The library clamps a delay outside 0..500 ms and says so with a warning code; the frame is still
    // processed, so that is not an error here.
    int d = aec->apm->set_stream_delay_ms(delay_ms);
    if (d != webrtc::AudioProcessing::kNoError && d != webrtc::AudioProcessing::kBadStreamParameterWarning)
        return check(aec, d);
    r = check(aec, aec->apm->ProcessStream(&aec->frame));
    if (r != OC_AEC_OK) return r;
    std::memcpy(samples, aec->frame.data_, count * sizeof(int16_t));
    return OC_AEC_OK;
}

extern "C" int oc_aec_stats_get(oc_aec *aec, oc_aec_stats *stats) {
    if (!stats) return OC_AEC_BAD_OPTION;
    LibraryLock shared(false);
    webrtc::EchoCancellation *ec = aec->apm->echo_cancellation();
    webrtc::EchoCancellation::Metrics m;
    std::memset(&m, 0, sizeof m);
    if (ec->GetMetrics(&m) == webrtc::AudioProcessing::kNoError) {
        stats->echo_return_loss = m.echo_return_loss.average;
        stats->echo_return_loss_enhancement = m.echo_return_loss_enhancement.average;
    } else {
        stats->echo_return_loss = INT_MIN;
        stats->echo_return_loss_enhancement = INT_MIN;
    }
    int median = -1, std_dev = -1;
    if (ec->GetDelayMetrics(&median, &std_dev) != webrtc::AudioProcessing::kNoError) median = std_dev = -1;
    stats->delay_median_ms = median;
    stats->delay_std_ms = std_dev;
    stats->stream_has_echo = ec->stream_has_echo() ? 1 : 0;
    return OC_AEC_OK;
}

extern "C" int oc_aec_last_library_error(const oc_aec *aec) { return aec->last_library_error; }

static void destroy(oc_aec *aec) {
    if (aec->linear) speex_echo_state_destroy(aec->linear);
    delete aec->apm;
    delete aec;
}

extern "C" void oc_aec_destroy(oc_aec *aec) {
    if (!aec) return;
    LibraryLock alone(true);
    destroy(aec);
}
