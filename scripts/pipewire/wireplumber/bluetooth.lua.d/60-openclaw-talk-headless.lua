-- openclaw-talk's headless PipeWire: no Bluetooth here (BlueZ is on the system bus). WirePlumber starts
-- without this, but would look for BlueZ and logind for nothing.
bluez_monitor.enabled = false
