"""Command-line options of the reference Gateway."""

import argparse
import os
from pathlib import Path

from shared_dir import SCHEMA, shared_dir

DEFAULT_SCHEMA = shared_dir() / SCHEMA
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def _default_corpus():
    path = shared_dir() / "corpus" / "speech" / "manifest.tsv"
    return str(path) if path.exists() else None


def build_parser():
    p = argparse.ArgumentParser(
        prog="refgw", description="Reference OpenClaw Gateway (test peer and demo Gateway). "
        "Prints one JSON line on stdout once listening; logs go to stderr.")
    net = p.add_argument_group("network")
    net.add_argument("--host", default="127.0.0.1",
                     help="loopback address to bind (127.0.0.1 or ::1)")
    net.add_argument("--port", type=int, default=0, help="WebSocket port (0 = pick a free one)")
    net.add_argument("--control-port", type=int, default=0, help="control channel port (0 = free)")
    net.add_argument("--tls", action="store_true",
                     help="serve wss:// (self-signed cert unless given)")
    net.add_argument("--tls-cert", help="PEM certificate chain to serve (implies --tls)")
    net.add_argument("--tls-key", help="PEM private key for --tls-cert")
    net.add_argument("--public-url", help="URL to put in setup codes (default: the listening URL)")
    auth = p.add_argument_group("auth")
    auth.add_argument("--token", default=os.environ.get("REFGW_TOKEN"),
                      help="shared gateway token (or env REFGW_TOKEN)")
    auth.add_argument("--password", default=os.environ.get("REFGW_PASSWORD"),
                      help="shared gateway password (or env REFGW_PASSWORD)")
    auth.add_argument("--bootstrap-ttl-ms", type=int, default=10 * 60 * 1000)
    auth.add_argument("--bootstrap-profile", default="full",
                      choices=["full", "default", "limited", "node", "voice-node"],
                      help="setup-code profile (upstream's device-bootstrap-profile.ts): full (node + operator with "
                           "admin; default is its old name), limited (no admin), node (node role only), voice-node")
    auth.add_argument("--print-setup-code", action="store_true",
                      help="mint a setup code and put it in the startup JSON")
    auth.add_argument("--auth-failure-limit", type=int, default=20,
                      help="auth failures per key per minute before AUTH_RATE_LIMITED (0 = off)")
    auth.add_argument("--startup-unavailable", type=int, default=0, metavar="N",
                      help="answer the first N connects with UNAVAILABLE (startup-sidecars)")
    auth.add_argument("--startup-retry-after-ms", type=int, default=1000,
                      help="retryAfterMs of those UNAVAILABLE answers")
    pair = p.add_argument_group("pairing")
    pair.add_argument("--auto-approve", action="store_true", help="approve every pairing at once")
    pair.add_argument("--remote", action="store_true",
                      help="act as a remote Gateway: no silent approval of loopback connects (upstream approves "
                           "them silently, so every request waits for 'approve' or --auto-approve)")
    pair.add_argument("--bootstrap-order", default="node-first", choices=["node-first", "any"],
                      help="node-first: a setup code's operator connect waits until its node was approved and "
                           "redeemed (newest upstream); any: both roles may ask at once (one merged request)")
    pair.add_argument("--auto-approve-after-attempts", type=int, default=0, metavar="N")
    pair.add_argument("--auto-approve-after-ms", type=int, default=0, metavar="MS")
    pair.add_argument("--pairing-ttl-ms", type=int, default=5 * 60 * 1000)
    proto = p.add_argument_group("protocol")
    proto.add_argument("--protocol", type=int, default=3, help="the Gateway's protocol version")
    proto.add_argument("--tick-interval-ms", type=int, default=15000)
    proto.add_argument("--max-payload", type=int, default=26214400)
    proto.add_argument("--max-buffered-bytes", type=int, default=52428800)
    proto.add_argument("--attachment-max-bytes", type=int, default=None,
                       help="hello-ok policy.attachments.maxBytes (default 20 MiB)")
    proto.add_argument("--attachment-max-image-bytes", type=int, default=None,
                       help="hello-ok policy.attachments.maxImageBytes (default min(maxBytes, 6 MB))")
    proto.add_argument("--preauth-max-payload", type=int, default=64 * 1024)
    proto.add_argument("--handshake-timeout-ms", type=int, default=15000)
    proto.add_argument("--signature-skew-ms", type=int, default=2 * 60 * 1000)
    proto.add_argument("--signature-versions", default="v3,v2",
                       help="device proof versions accepted, in order (e.g. v2 to refuse v3)")
    proto.add_argument("--allow-any-signed-at", dest="require_challenge_ts", action="store_false",
                       help="accept any signedAt within the skew, not only the challenge ts")
    proto.add_argument("--unified-approvals", action="store_true",
                       help="serve the unified approval.get/approval.resolve methods (newer Gateways)")
    relay = p.add_argument_group("talk relays")
    relay.add_argument("--talk-era", default="unified", choices=("unified", "transitional", "legacy"),
                       help="Talk method and event names (fact sheet 9.8)")
    relay.add_argument("--transcription-uplink", help="transcription input contract, e.g. opus/16000 "
                       "(default g711_ulaw/8000)")
    relay.add_argument("--realtime-uplink", help="realtime input contract (default pcm16/24000)")
    relay.add_argument("--relay-corpus", default=_default_corpus(),
                       help="manifest.tsv of clips whose transcript a matching turn returns")
    check = p.add_argument_group("checking")
    check.add_argument("--schema", default=str(DEFAULT_SCHEMA),
                       help="JSON Schema to validate frames against (default: %(default)s)")
    check.add_argument("--strict", action="store_true",
                       help="exit with status 3 at shutdown if any client frame broke the "
                            "schema")
    check.add_argument("--state-dir", help="keep paired devices, tokens and the TLS cert here")
    check.add_argument("--log-frames", action="store_true", help="log received frames (redacted)")
    check.add_argument("--quiet", action="store_true", help="log only violations and errors")
    return p


def parse_options(argv=None):
    """Parses and checks the options; usage errors exit with status 2."""
    parser = build_parser()
    options = parser.parse_args(argv)
    if options.host not in LOOPBACK_HOSTS:
        parser.error("--host must be a loopback address (127.0.0.1 or ::1)")
    if options.tls_cert:
        options.tls = True
    if options.tls_key and not options.tls_cert:
        parser.error("--tls-key needs --tls-cert")
    versions = tuple(v.strip() for v in options.signature_versions.split(",") if v.strip())
    if not versions or any(v not in ("v2", "v3") for v in versions):
        parser.error("--signature-versions takes v2 and/or v3")
    options.signature_versions = versions
    if options.tick_interval_ms <= 0:
        parser.error("--tick-interval-ms must be positive")
    options.scratch_dir = None
    return options
