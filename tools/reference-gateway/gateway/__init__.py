"""The reference OpenClaw Gateway: a test peer and demo Gateway for openclaw-talk."""

VERSION = "0.1.0-refgw"
