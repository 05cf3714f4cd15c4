"""Entry point: `python3 tools/reference-gateway/refgw.py [options]` (see README.md)."""

import asyncio
import json
import os
import signal
import sys
import tempfile

from . import VERSION
from .config import parse_options
from .control import ControlServer
from .schema_check import SchemaChecker
from .server import Gateway

EXIT_VIOLATIONS = 3


def load_checker(path):
    """The schema checker, or None (said plainly on stderr) when the file is absent."""
    if not path or not os.path.exists(path):
        print("refgw: schema not found at %s: running WITHOUT schema validation" % path,
              file=sys.stderr, flush=True)
        return None
    return SchemaChecker(os.path.normpath(os.path.abspath(path)))


async def run(options):
    checker = load_checker(options.schema)
    scratch = None
    if options.tls and not options.tls_cert and not options.state_dir:
        scratch = tempfile.TemporaryDirectory(prefix="refgw-")
        options.scratch_dir = scratch.name
    gateway = Gateway(options, checker)
    await gateway.listen()
    control = ControlServer(gateway, options.host)
    await control.start(options.control_port)
    startup = {"url": gateway.url, "port": gateway.port, "tls": gateway.ssl_context is not None,
               "tlsFingerprint": gateway.fingerprint,
               "control": "%s:%d" % (options.host, control.port), "controlPort": control.port,
               "protocol": options.protocol, "version": VERSION,
               "tickIntervalMs": options.tick_interval_ms, "authMode": gateway.auth_config.mode,
               "schema": checker.path if checker else None, "stateDir": options.state_dir,
               "pid": os.getpid()}
    if options.print_setup_code:
        minted = gateway.mint_setup_code()
        startup.update({"setupCode": minted["setupCode"],
                        "bootstrapToken": minted["bootstrapToken"],
                        "setupCodeExpiresAtMs": minted["expiresAtMs"]})
    print(json.dumps(startup), flush=True)
    gateway.log("listening on %s, control on %s:%d, schema %s" % (
        gateway.url, options.host, control.port, "on" if checker else "OFF"))
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, lambda: gateway.spawn(gateway.shutdown("shutdown")))
    await gateway.stopped.wait()
    control.server.close()
    if scratch is not None:
        scratch.cleanup()
    count = len(gateway.violations.entries)
    if count:
        print("refgw: %d schema/framing violation(s) were recorded" % count, file=sys.stderr,
              flush=True)
    if gateway.violations.server_entries:
        print("refgw: %d frame(s) sent by refgw broke the schema (refgw bug)"
              % len(gateway.violations.server_entries), file=sys.stderr, flush=True)
    return EXIT_VIOLATIONS if options.strict and count else 0


def main(argv=None):
    options = parse_options(argv)
    try:
        return asyncio.run(run(options))
    except OSError as failure:
        print("refgw: cannot listen: %s" % failure, file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
