-- openclaw-talk's headless PipeWire: no Bluetooth (BlueZ and logind need the system and session buses).
bluez_monitor.enabled = false
