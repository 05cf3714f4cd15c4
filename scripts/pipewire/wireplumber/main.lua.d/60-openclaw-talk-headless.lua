-- openclaw-talk's headless PipeWire (scripts/pipewire-headless.sh): no sound card, camera or session bus.
-- Without a D-Bus session bus WirePlumber 0.4.13 exits (status 70, "Error acquiring bus address: Cannot
-- autolaunch D-Bus without X11 $DISPLAY") unless both the ALSA monitor (its device reservation plugin) and
-- the flatpak portal plugin are off; either one alone is enough to stop it. The null sink and the virtual
-- microphone come from pipewire-pulse (../../pipewire/pipewire-pulse.conf.d).
alsa_monitor.enabled = false
v4l2_monitor.enabled = false
libcamera_monitor.enabled = false
default_access.properties["enable-flatpak-portal"] = false
