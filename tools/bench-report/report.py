#!/usr/bin/env python3
"""The benchmark report: plots and a page from the JSON `openclaw-talk bench ... --report DIR` and `make bench` write.

    report.py DIR [--markdown FILE]

Reads DIR/bench-*.json (each with a "run" object: date, machine, command, version), draws every plot into
DIR/plots/ with matplotlib and writes DIR/index.html; with --markdown it also writes the figures page
(docs/BENCHMARKS.md) from the same files, so the numbers in the docs and the pictures come from one run.
A plot whose data is missing is drawn as a "not measured" panel naming why, never as empty axes.
"""
import argparse
import html
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Every data series is drawn in one of these colours; axes and text never are (the page test looks for them).
DATA_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]
NAMES = ["speech", "speech-grammar", "audio", "aec", "talk", "gateway", "synth", "uplink", "soak"]
# `bench soak` (`make soak`, not `make bench`) has plots of its own; a folder with only it gets only those.
SOAK_NOTE = ("Not part of `make bench`: `make soak` runs `openclaw-talk bench soak` for 10 minutes (the daemon against its own "
             "sound server and the reference Gateway, an utterance every 20 s, a fault every 30 s) and writes its JSON and page "
             "to `out/soak/`; its figures go in the issue's closing note.")
SOAK_FAULTS = ["gatewayDrop", "gatewayRestart", "soundServerRestart", "captureDeviceLoss", "sighup", "controlFlood"]


def load(folder):
    runs = {}
    for name in NAMES:
        path = os.path.join(folder, f"bench-{name}.json")
        if os.path.exists(path):
            with open(path) as f:
                runs[name] = json.load(f)
    return runs


def dig(obj, *keys):
    for key in keys:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


class Plot:
    """One figure: a title, what it shows, and how many data points went into it (0: not measured)."""

    def __init__(self, key, title, caption):
        self.key, self.title, self.caption = key, title, caption
        self.points = 0
        self.missing = None
        self.fig, self.ax = plt.subplots(figsize=(8, 3.6), dpi=100)

    def save(self, folder):
        if self.points == 0:
            self.ax.clear()
            self.ax.set_axis_off()
            self.ax.text(0.5, 0.5, f"not measured: {self.missing or 'no data'}", ha="center", va="center", wrap=True)
        self.ax.set_title(self.title)
        self.fig.tight_layout()
        self.fig.savefig(os.path.join(folder, "plots", f"{self.key}.png"))
        plt.close(self.fig)


def histogram(plot, series, unit="ms"):
    """series: [(label, values)] drawn as overlapping histograms."""
    values = [(label, [v for v in vs if v is not None]) for label, vs in series if vs]
    if not any(vs for _, vs in values):
        return
    top = max(max(vs) for _, vs in values if vs)
    bins = [top * i / 24 for i in range(25)] if top > 0 else 10
    for i, (label, vs) in enumerate(values):
        plot.ax.hist(vs, bins=bins, alpha=0.6, color=DATA_COLOURS[i], label=f"{label} (n={len(vs)})")
        plot.points += len(vs)
    plot.ax.set_xlabel(unit)
    plot.ax.set_ylabel("count")
    plot.ax.legend(fontsize=8)


def bars(plot, labels, groups, ylabel):
    """groups: [(label, values per x label)] drawn side by side."""
    width = 0.8 / max(1, len(groups))
    for i, (label, values) in enumerate(groups):
        xs = [x + i * width for x in range(len(labels))]
        drawn = [v if v is not None else 0 for v in values]
        plot.ax.bar(xs, drawn, width=width, color=DATA_COLOURS[i], label=label)
        plot.points += sum(1 for v in values if v is not None)
    plot.ax.set_xticks([x + width * (len(groups) - 1) / 2 for x in range(len(labels))])
    plot.ax.set_xticklabels(labels, rotation=60 if len(labels) > 8 else 0, ha="right" if len(labels) > 8 else "center", fontsize=7)
    plot.ax.set_ylabel(ylabel)
    if len(groups) > 1:
        plot.ax.legend(fontsize=8)


def plots(runs):
    out = bench_plots(runs) if any(name != "soak" for name in runs) else []
    if "soak" in runs:
        out += soak_plots(runs["soak"])
    return out


def soak_plots(soak):
    """bench soak: the daemon's memory, descriptors and CPU over the run, each fault's recovery, each request's delivery."""
    out = []
    samples = dig(soak, "resources", "samples") or []
    t = [s["t"] / 60 for s in samples]

    p = Plot("soak-memory", "bench soak: the daemon's resident memory and open descriptors over the run",
             "Sampled every 10 s; growth compares the first and last ten minutes (a third of a shorter run).")
    if samples:
        p.ax.plot(t, [s["rssMB"] for s in samples], color=DATA_COLOURS[0], label="resident memory (MB)")
        p.ax.set_xlabel("minutes")
        p.ax.set_ylabel("MB")
        twin = p.ax.twinx()
        twin.plot(t, [s["fds"] for s in samples], color=DATA_COLOURS[1], label="open descriptors")
        twin.set_ylabel("descriptors")
        p.ax.legend(loc="upper left", fontsize=8)
        twin.legend(loc="upper right", fontsize=8)
        p.points = len(samples)
    p.missing = "no resource samples"
    out.append(p)

    p = Plot("soak-cpu", "bench soak: the daemon's CPU over the run",
             "Percent of one core over each 10 s; faults strike at the dotted lines.")
    if samples:
        p.ax.plot(t, [s["cpuPercent"] for s in samples], color=DATA_COLOURS[0], label="CPU (% of a core)")
        for fault in soak.get("faults") or []:
            p.ax.axvline(fault["atSeconds"] / 60, color="#999999", linestyle=":", linewidth=0.8)
        p.ax.set_xlabel("minutes")
        p.ax.set_ylabel("% of a core")
        p.ax.legend(fontsize=8)
        p.points = len(samples)
    p.missing = "no resource samples"
    out.append(p)

    p = Plot("soak-recovery", "bench soak: time from each fault's end to recovery (target 2 s)",
             "Connected again after the Gateway is back; capturing again after the sound server or microphone is; "
             "status answered after SIGHUP and the flood. A cross at the top: never recovered.")
    faults = soak.get("faults") or []
    if faults:
        top = 0
        for i, kind in enumerate(SOAK_FAULTS):
            mine = [f for f in faults if f["kind"] == kind]
            times = [(f["atSeconds"] / 60, f.get("gatewayBackMs") or f.get("captureBackMs") or f.get("controlBackMs")) for f in mine]
            got = [(x, y) for x, y in times if y is not None]
            if got:
                p.ax.scatter([x for x, _ in got], [y for _, y in got], color=DATA_COLOURS[i % 4],
                             marker="o" if i < 4 else "s", s=40, label=kind)
                top = max(top, max(y for _, y in got))
                p.points += len(got)
        missed = [f["atSeconds"] / 60 for f in faults if not f.get("recovered")]
        if missed:
            p.ax.scatter(missed, [max(top, 2000) * 1.1] * len(missed), color=DATA_COLOURS[3], marker="x", s=60, label="never")
            p.points += len(missed)
        p.ax.axhline(dig(soak, "targets", "recoveryMs") or 2000, color="#999999", linestyle="--", linewidth=0.8)
        p.ax.set_xlabel("minutes")
        p.ax.set_ylabel("ms")
        p.ax.legend(fontsize=7, ncol=3)
    p.missing = "no faults"
    out.append(p)

    p = Plot("soak-deliveries", "bench soak: each utterance, from its end to its request at the Gateway",
             "Counted from the Gateway's records; a cross at the bottom: lost (no request).")
    utterances = soak.get("utterances") or []
    if utterances:
        xs = [u["atSeconds"] / 60 for u in utterances if u.get("deliveryMs") is not None]
        ys = [u["deliveryMs"] for u in utterances if u.get("deliveryMs") is not None]
        lost = [u["atSeconds"] / 60 for u in utterances if u.get("keys", 0) == 0]
        p.ax.scatter(xs, ys, color=DATA_COLOURS[0], s=30, label="delivered")
        if lost:
            p.ax.scatter(lost, [0] * len(lost), color=DATA_COLOURS[3], marker="x", s=60, label="lost")
        p.ax.set_xlabel("minutes")
        p.ax.set_ylabel("ms")
        p.ax.legend(fontsize=8)
        p.points = len(xs) + len(lost)
    p.missing = "nothing spoken"
    out.append(p)
    return out


def bench_plots(runs):
    talk, speech, aec, uplink = runs.get("talk"), runs.get("speech"), runs.get("aec"), runs.get("uplink")
    out = []

    p = Plot("talk-latency", "End of speech to transcript sent and to first reply audio",
             "bench talk: each clip of the corpus through `run` with the reference Gateway answering at once.")
    samples = dig(talk, "samples") or {}
    histogram(p, [("to transcript sent", samples.get("speechEndToTranscriptSentMs")),
                  ("to first reply audio", samples.get("speechEndToFirstReplyAudioMs"))])
    p.missing = dig(talk, "liveUnavailable") if talk else "bench talk did not run"
    out.append(p)

    p = Plot("barge-in", "Barge-in in the file session: the session's reported speech start to the decision, decision to silence",
             "bench talk: each next clip of the corpus starting 1.8 s into the reply to the one before, no echo; "
             "the live rows' detection (from the user's sound) is in the live figures.")
    histogram(p, [("the session's reported speech start to decision", samples.get("bargeInDetectionMs")),
                  ("decision to playback silent", samples.get("bargeInToSilentMs"))])
    p.missing = "bench talk did not run" if not talk else "no barge-in"
    out.append(p)

    p = Plot("wer-per-clip", "Word errors per clip: openclaw-talk and pocketsphinx_continuous (same model)",
             "bench speech --baseline: word errors over reference words, per clip.")
    files = dig(speech, "files") or []
    if files:
        labels = [os.path.splitext(os.path.basename(f["file"]))[0] for f in files]
        words = [max(1, f.get("words") or len(f["reference"].split())) for f in files]
        ours = [f["errors"] / w for f, w in zip(files, words)]
        base = [(f["baseline_errors"] / w if f.get("baseline_errors") is not None else None) for f, w in zip(files, words)]
        bars(p, labels, [("openclaw-talk", ours)] + ([("pocketsphinx_continuous", base)] if any(b is not None for b in base) else []),
             "word error rate")
    p.missing = "bench speech did not run"
    out.append(p)

    p = Plot("erle", "Echo return loss enhancement (higher removes more echo)",
             "bench aec: synthetic echo paths and the sound server's loopback; bench talk: the reply's own voice.")
    labels, values = [], []
    for s in dig(aec, "synthetic") or []:
        labels.append(f"synthetic {s['delayMs']} ms")
        values.append(s["erleDb"])
    if dig(aec, "loopback", "erleDb") is not None:
        labels.append("live loopback")
        values.append(aec["loopback"]["erleDb"])
    if dig(talk, "live", "erleDb") is not None:
        labels.append("reply's voice, live")
        values.append(talk["live"]["erleDb"])
    if labels:
        bars(p, labels, [("ERLE", values)], "dB")
    p.missing = "bench aec did not run"
    out.append(p)

    p = Plot("self-echo", "Self-echo trials: did the reply's echo cut it, get it answered again, or did it never end?",
             "bench talk: live sessions on the loopback, the reply heard by its own microphone.")
    modes = dig(talk, "live", "selfEcho") or {}
    if modes:
        names = sorted(modes, reverse=True)
        trials = [modes[m]["trials"] for m in names]
        cut = [modes[m]["selfInterruptions"] for m in names]
        turns = [modes[m]["echoTurns"] for m in names]
        unfinished = [modes[m].get("replyUnfinished", 0) for m in names]
        bars(p, [f"--aec {m}" for m in names], [("trials", trials), ("interrupted itself", cut), ("echo sent as a turn", turns),
                                                ("reply unfinished", unfinished)], "sessions")
    p.missing = dig(talk, "liveUnavailable") or "bench talk's live half did not run"
    out.append(p)

    p = Plot("cpu-memory", "CPU and memory of a live Talk session over time",
             "bench talk: the `run` child sampled every 250 ms, idle, hearing the clip, speaking the reply.")
    timeline = dig(talk, "live", "timeline", "samples") or []
    if timeline:
        t = [s["t"] for s in timeline]
        p.ax.plot(t, [s["cpuPercent"] for s in timeline], color=DATA_COLOURS[0], label="CPU (% of a core)")
        p.ax.set_xlabel("seconds since the session started")
        p.ax.set_ylabel("% of a core")
        twin = p.ax.twinx()
        twin.plot(t, [s["rssMB"] for s in timeline], color=DATA_COLOURS[1], label="resident memory (MB)")
        twin.set_ylabel("MB")
        for mark in dig(talk, "live", "timeline", "marks") or []:
            p.ax.axvline(mark["t"], color="#999999", linestyle=":")
            p.ax.text(mark["t"], p.ax.get_ylim()[1], mark["label"], fontsize=7, rotation=90, va="top")
        p.ax.legend(loc="upper left", fontsize=8)
        twin.legend(loc="upper right", fontsize=8)
        p.points = len(timeline)
    p.missing = dig(talk, "liveUnavailable") or "bench talk's live half did not run"
    out.append(p)

    p = Plot("uplink", "Relay uplink: bytes per second on the wire, per encoding",
             "bench uplink: the corpus encoded as each relay contract, base64 in its append frame.")
    encodings = [k for k in ("opus 16 kHz", "pcm16 24 kHz", "g711_ulaw 8 kHz") if dig(uplink, k)]
    if encodings:
        bars(p, encodings, [("wire bytes/s", [uplink[k]["wireBytesPerSecond"] for k in encodings])], "bytes per second")
    p.missing = "bench uplink did not run"
    out.append(p)
    return out


def run_line(run):
    if not run:
        return "not recorded"
    return f"{run.get('date', '?')}, {run.get('machine', '?')}: `{run.get('command', '?')}` ({run.get('version', '?')})"


def write_html(folder, runs, drawn):
    rows = "".join(f"<tr><td>bench {html.escape(n)}</td><td>{html.escape(run_line(r.get('run')))}</td></tr>"
                   for n, r in runs.items())
    figures = "".join(
        f'<figure><img class="plot" src="plots/{p.key}.png" alt="{html.escape(p.title)}" width="800" height="360" '
        f'data-points="{p.points}"><figcaption>{html.escape(p.caption)}</figcaption></figure>'
        for p in drawn)
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>openclaw-talk benchmarks</title>
<style>body{{font-family:sans-serif;margin:1em;width:820px}} figure{{margin:0 0 1em 0}} img{{display:block}}
figcaption{{font-size:small;color:#555}} td{{font-size:small;padding-right:1em}}</style></head>
<body><h1>openclaw-talk benchmarks</h1>
<table>{rows}</table>
{figures}
<script>
// For the page test: where each plot is drawn and whether its image loaded.
window.addEventListener('load', () => {{
  for (const img of document.querySelectorAll('img.plot')) {{
    const r = img.getBoundingClientRect();
    img.dataset.rect = [r.left, r.top + window.scrollY, r.width, r.height].map(Math.round).join(',');
    img.dataset.loaded = img.complete && img.naturalWidth > 0 ? 'yes' : 'no';
  }}
  document.body.dataset.height = document.documentElement.scrollHeight;
}});
</script></body></html>
"""
    with open(os.path.join(folder, "index.html"), "w") as f:
        f.write(page)


def markdown(runs, drawn):
    """The figures page: each run's date, machine and command, and its figures, all read from the JSON."""
    lines = ["# Benchmarks", "",
             "Generated by `make bench` (tools/bench-report/report.py) from the JSON it wrote; do not edit by hand.",
             "The plots are in the report page beside the JSON (`out/bench/index.html`).", ""]
    for name, r in runs.items():
        lines += [f"## bench {name}", "", f"Run: {run_line(r.get('run'))}", ""]
        lines += [f"- {line}" for line in summary(name, r)] + [""]
    if "soak" not in runs:
        lines += ["## bench soak", "", SOAK_NOTE, ""]
    lines += ["## Plots", ""] + [f"- {p.title}: {p.points} data points" + ("" if p.points else f" (not measured: {p.missing})")
                                 for p in drawn]
    return "\n".join(lines) + "\n"


def fmt(value, unit=""):
    """A figure with the digits it deserves: whole above 100, one decimal above 1, three significant below."""
    if value is None:
        return "not measured"
    if isinstance(value, float):
        value = round(value) if abs(value) >= 100 else round(value, 1) if abs(value) >= 1 else float(f"{value:.3g}")
    return f"{value}{unit}"


def pair(obj, key, unit=" ms"):
    v = dig(obj, key) or {}
    return f"p50 {fmt(v.get('p50'), unit)}, p95 {fmt(v.get('p95'), unit)} (n={v.get('count', '?')})"


def summary(name, r):
    if name in ("speech", "speech-grammar"):
        b = r.get("baseline") or {}
        out = [f"WER {fmt(r['wer'] * 100, ' %')} over {r['words']} words ({len(r['files'])} clips)"
               + (" (the Talk command grammar on dictation clips: its speed and memory are the point, not its WER)"
                  if name == "speech-grammar" else ""),
               f"real-time factor {fmt(r['rtf'])}; finalize p50 {fmt(r['finalize_ms']['p50'], ' ms')}, p95 {fmt(r['finalize_ms']['p95'], ' ms')}",
               f"CPU {fmt(r['cpu_seconds'], ' s')}, peak RSS {fmt(r['peak_rss_mb'], ' MB')}"]
        if b:
            out.append(f"baseline {b['engine']}: WER {fmt(b['wer'] * 100, ' %')}")
        return out
    if name == "talk":
        out = [f"{r['clips']} clips, silence window {r['silenceMs']} ms, {r['transcriptsSent']} transcripts sent, {r['bargeIns']} barge-ins",
               f"end of speech to transcript sent: {pair(r, 'speechEndToTranscriptSentMs')}",
               f"end of speech to first reply audio: {pair(r, 'speechEndToFirstReplyAudioMs')} "
               f"(target p95 {fmt(dig(r, 'targets', 'firstReplyAudioP95Ms'), ' ms')}); the agent's share {pair(r, 'agentMs')}",
               f"barge-in (the file session, no echo): the session's reported speech start to decision {pair(r, 'bargeInDetectionMs')}; "
               f"decision to silence {pair(r, 'bargeInToSilentMs')}"]
        live = r.get("live")
        if live:
            cpu = live.get("cpuPercent", {})
            out.append(f"live on {live['sink']} -> {live['source']}: ERLE of the reply's voice {fmt(live.get('erleDb'), ' dB')}; "
                       f"CPU p50 idle {fmt(dig(cpu, 'idle', 'p50'), ' %')}, speaking {fmt(dig(cpu, 'speaking', 'p50'), ' %')} of a core"
                       + (f" (by trial {' '.join(fmt(v) for v in cpu['byTrial']['speaking'])}; over the whole reply p50 "
                          f"{fmt(dig(cpu, 'wholeReply', 'p50'), ' %')})" if dig(cpu, 'byTrial', 'speaking') else ""))
            for mode, e in sorted(live.get("selfEcho", {}).items(), reverse=True):
                reasons = ", ".join(f"{r} {n}" for r, n in e.get("byReason", {}).items() if n)
                out.append(f"self-echo --aec {mode}: interrupted itself in {e['selfInterruptions']} of {e['trials']}"
                           + (f" ({reasons})" if reasons else "")
                           + f", echo sent as a turn in {e['echoTurns']}, reply unfinished in {e.get('replyUnfinished', 0)}")
        else:
            out.append(f"live half not measured: {r.get('liveUnavailable')}")
        return out
    if name == "aec":
        out = ["ERLE on synthetic paths: " + ", ".join(f"{s['delayMs']} ms {fmt(s['erleDb'], ' dB')}" for s in r.get("synthetic", []))]
        loop = r.get("loopback")
        out.append(f"ERLE live loopback: {fmt(loop['erleDb'], ' dB')}" if loop else f"live loopback not measured: {r.get('loopbackUnavailable')}")
        out.append(f"double talk kept at correlation {fmt(r.get('doubleTalkCorrelation'))}; {fmt(r.get('microsecondsPerFrameMedian'), ' µs')} per 20 ms frame")
        return out
    if name == "uplink":
        out = []
        for k in ("opus 16 kHz", "pcm16 24 kHz", "g711_ulaw 8 kHz"):
            u = r.get(k)
            if u:
                lat = u.get("speechEndToFinalMs")
                tail = f"; end of speech to relay final median {fmt(lat['median'], ' ms')}" if lat else ""
                out.append(f"{k}: {fmt(u['wireBytesPerSecond'], ' B/s')} on the wire, {fmt(u['cpuCoreShare'] * 100, ' %')} of a core{tail}")
        return out
    if name == "synth":
        v = r.get("firstVoicedAudioMs") or {}
        return [f"first audio after a sentence arrives: p50 {fmt(r['firstAudioMs']['p50'], ' ms')}, p95 {fmt(r['firstAudioMs']['p95'], ' ms')} "
                f"(target {fmt(r.get('targetFirstAudioMs'), ' ms')}); first audio with speech in it p95 {fmt(v.get('p95'), ' ms')}",
                f"engine start {fmt(r.get('coldFirstAudioMs'), ' ms')}; real-time factor {fmt(r.get('rtf'))} CPU, {fmt(r.get('wallRtf'))} wall"]
    if name == "gateway":
        c = r.get("connectToHelloOkMs", {})
        cs = r.get("chatSendMs", {})
        return [f"connect to hello-ok median: ws {fmt(dig(c, 'ws', 'median'), ' ms')}, wss {fmt(dig(c, 'wss', 'median'), ' ms')}",
                f"reconnect after the Gateway is back: median {fmt(dig(r, 'reconnectAfterRestartMs', 'afterGatewayBack', 'median'), ' ms')}",
                f"memory per connection: ws {fmt(dig(r, 'memoryPerConnectionKiB', 'ws'), ' KiB')}, wss {fmt(dig(r, 'memoryPerConnectionKiB', 'wss'), ' KiB')}",
                "talk.speak decode CPU per second of audio (median): " + ", ".join(
                    f"{k} {fmt(dig(v, 'decodeMsPerAudioSecond', 'median'), ' ms')}" for k, v in (r.get("talkSpeakDecode") or {}).items()),
                f"chat.send to ack p50 {fmt(dig(cs, 'toAck', 'p50'), ' ms')}, p95 {fmt(dig(cs, 'toAck', 'p95'), ' ms')}; "
                f"to first delta p50 {fmt(dig(cs, 'toFirstDelta', 'p50'), ' ms')}, p95 {fmt(dig(cs, 'toFirstDelta', 'p95'), ' ms')}"]
    if name == "soak":
        q = r.get("requests") or {}
        rec = r.get("recovery") or {}
        res = r.get("resources") or {}
        out = [f"{fmt(r.get('minutes'))} min on {r.get('server')}, a fault every {fmt(r.get('faultEverySeconds'))} s "
               f"({len(r.get('faults') or [])} faults); the daemon {'EXITED' if r.get('daemonExited') else 'never exited'}",
               f"requests at the Gateway: {q.get('spoken')} spoken, {q.get('delivered')} delivered, {q.get('lost')} lost, "
               f"{q.get('duplicated')} duplicated, {q.get('wrongText')} wrong text; end of utterance to request "
               f"p50 {fmt(dig(q, 'deliveryMs', 'p50'), ' ms')}, p95 {fmt(dig(q, 'deliveryMs', 'p95'), ' ms')}"]
        for kind in SOAK_FAULTS:
            k = rec.get(kind) or {}
            if k.get("count"):
                out.append(f"{kind}: recovered p50 {fmt(dig(k, 'ms', 'p50'), ' ms')}, max {fmt(k.get('maxMs'), ' ms')} "
                           f"({k['count'] - k.get('notRecovered', 0)} of {k['count']})")
        out.append(f"growth first to last window: RSS {fmt(res.get('rssGrowthPercent'), ' %')}, "
                   f"descriptors {fmt(res.get('fdGrowthPercent'), ' %')}")
        return out
    if name == "audio":
        o = r.get("opus", {})
        p = r.get("pulse") or {}
        start = dig(p, "playbackStartLatencyMs", "median")
        return [f"Opus encode {fmt(o.get('encodeMicrosecondsMedian'), ' µs')}, decode {fmt(o.get('decodeMicrosecondsMedian'), ' µs')} "
                f"per 20 ms frame, {fmt(o.get('bytesPerSecond'), ' B/s')}",
                f"capture latency p50 {fmt(p.get('captureLatencyP50Ms'), ' ms')}, p95 {fmt(p.get('captureLatencyP95Ms'), ' ms')}; "
                f"idle capture CPU {fmt(p.get('idleCaptureCPUPercent'), ' %')}",
                f"playback start {fmt(start, ' ms') if start is not None else 'not measured: ' + str(p.get('playbackStartUnmeasured'))}, "
                f"stop {fmt(dig(p, 'playbackStopLatencyMs', 'median'), ' ms')} (median)"]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--markdown", help="also write the figures page here (docs/BENCHMARKS.md)")
    args = parser.parse_args()
    runs = load(args.folder)
    if not runs:
        sys.exit(f"no bench-*.json in {args.folder}")
    os.makedirs(os.path.join(args.folder, "plots"), exist_ok=True)
    drawn = plots(runs)
    for p in drawn:
        p.save(args.folder)
    write_html(args.folder, runs, drawn)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(runs, drawn))
    empty = [p.key for p in drawn if p.points == 0]
    print(f"report: {os.path.join(args.folder, 'index.html')} ({len(drawn) - len(empty)} of {len(drawn)} plots with data"
          + (f"; not measured: {', '.join(empty)})" if empty else ")"))


if __name__ == "__main__":
    main()
