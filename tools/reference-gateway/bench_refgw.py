#!/usr/bin/env python3
"""Measures refgw with the minimal client: connect-to-hello-ok time (ws, wss) and memory per
connection. Run: python3 tools/reference-gateway/bench_refgw.py"""

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from minimal_client import Identity, handshake  # noqa: E402

ROUNDS = 50
CONNECTIONS = 200


def rss_kib(pid):
    with open("/proc/%d/status" % pid, encoding="ascii") as handle:
        return int(handle.read().split("VmRSS:")[1].split()[0])


async def measure(extra):
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "refgw.py"), "--auto-approve",
                             "--quiet", *extra], stdout=subprocess.PIPE, text=True)
    info = json.loads(proc.stdout.readline())
    startup_ms = (time.perf_counter() - started) * 1000
    try:
        identity = Identity()
        client, res = await handshake(info["url"], identity)
        auth = {"token": res["payload"]["auth"]["deviceToken"]}
        await client.close()
        times = []
        for _ in range(ROUNDS):
            begun = time.perf_counter()
            client, res = await handshake(info["url"], identity, auth=auth)
            times.append((time.perf_counter() - begun) * 1000)
            await client.close()
        before = rss_kib(proc.pid)
        clients = [(await handshake(info["url"], identity, auth=auth))[0]
                   for _ in range(CONNECTIONS)]
        grown = rss_kib(proc.pid) - before
        for client in clients:
            await client.close()
    finally:
        proc.terminate()
        proc.wait()
    times.sort()
    print("%-4s startup %.0f ms; connect->hello-ok median %.2f ms, p90 %.2f ms (%d rounds); "
          "RSS +%.1f KiB per connection (%d open)"
          % ("wss" if extra else "ws", startup_ms, statistics.median(times),
             times[int(len(times) * 0.9) - 1], ROUNDS, grown / CONNECTIONS, CONNECTIONS))


async def main():
    await measure([])
    await measure(["--tls"])


if __name__ == "__main__":
    asyncio.run(main())
