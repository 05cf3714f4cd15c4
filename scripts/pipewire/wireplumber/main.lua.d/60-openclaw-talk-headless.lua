-- openclaw-talk's headless PipeWire (scripts/pipewire-headless.sh): no sound card, camera or session bus.
-- The ALSA monitor's device reservation and the flatpak portal need a D-Bus session bus; without one
-- WirePlumber 0.4 exits ("Error acquiring bus address") before it links any stream. The null sink and
-- the virtual microphone come from pipewire-pulse (../pipewire/pipewire-pulse.conf.d).
alsa_monitor.enabled = false
v4l2_monitor.enabled = false
libcamera_monitor.enabled = false
default_access.properties["enable-flatpak-portal"] = false
