#pragma once
/* libwebrtc-audio-processing is C++ only: Swift reaches it through the CEchoCanceller target's C API.
   This target exists for pkg-config (its include folder, the WEBRTC_POSIX and
   WEBRTC_AUDIO_PROCESSING_ONLY_BUILD defines, and the library to link), which it hands to CEchoCanceller. */
