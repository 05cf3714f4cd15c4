"""The report page as a person sees it: report.py draws it from benchmark JSON, Debian's chromium renders it
headless (--dump-dom for where each plot is, --screenshot for what is drawn), and every plot must show data
in its data colours. `make bench` runs check_page() on the real run; the unit test runs it on fixtures/.

    python3 -m unittest discover -s tools/bench-report -t tools/bench-report
    python3 tools/bench-report/test_report.py DIR      # check an existing report folder
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# A plot's own pixels in a data colour (a legend's swatches are about 150-300): more than this means data was drawn.
MIN_DATA_PIXELS = 600


def chromium(*args):
    """Runs headless chromium on the page (no sandbox: tests run as root here; no GPU, no scrollbars, scale 1)."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--force-device-scale-factor=1", "--virtual-time-budget=5000", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def check_page(folder):
    """Renders folder/index.html; returns [(plot, data pixels)] and raises when a plot did not load or has no data."""
    import numpy
    from PIL import Image

    # A pixel in a data colour is saturated (channels spread over 60): not the black, grey and white of axes and text.

    url = "file://" + os.path.abspath(os.path.join(folder, "index.html"))
    dom = chromium("--dump-dom", url)
    height = int(re.search(r'data-height="(\d+)"', dom).group(1))
    plots = re.findall(r'<img class="plot" src="plots/([^"]+)\.png"[^>]*data-points="(\d+)"[^>]*data-rect="([\d,]+)"[^>]*data-loaded="(\w+)"', dom)
    if not plots:
        raise AssertionError("no plots found on the page")
    shot = os.path.join(folder, "screenshot.png")
    chromium(f"--window-size=860,{height}", f"--screenshot={shot}", url)
    image = Image.open(shot).convert("RGB")
    found = []
    for name, points, rect, loaded in plots:
        if loaded != "yes":
            raise AssertionError(f"plot {name} did not load")
        x, y, w, h = map(int, rect.split(","))
        crop = image.crop((x, y, x + w, y + h))
        pixels = int((numpy.ptp(numpy.asarray(crop, dtype=numpy.int16), axis=2) > 60).sum())
        found.append((name, int(points), pixels))
    empty = [f"{name} ({points} data points, {pixels} data pixels)" for name, points, pixels in found
             if points == 0 or pixels < MIN_DATA_PIXELS]
    if empty:
        raise AssertionError("plots drawn without data: " + ", ".join(empty))
    return found


@unittest.skipUnless(CHROMIUM or os.environ.get("CI") == "true", "chromium (Debian package chromium) is not installed")
class ReportPageTests(unittest.TestCase):
    def render(self, names):
        folder = tempfile.mkdtemp(prefix="oct-report-")
        self.addCleanup(shutil.rmtree, folder, True)
        for name in names:
            shutil.copy(os.path.join(HERE, "fixtures", f"bench-{name}.json"), folder)
        markdown = os.path.join(folder, "BENCHMARKS.md")
        subprocess.run([sys.executable, os.path.join(HERE, "report.py"), folder, "--markdown", markdown], check=True,
                       capture_output=True, timeout=120)
        return folder, markdown

    def test_every_plot_is_drawn_with_data(self):
        folder, _ = self.render(["talk", "speech", "aec", "uplink"])
        found = check_page(folder)
        self.assertEqual({name for name, _, _ in found},
                         {"talk-latency", "barge-in", "wer-per-clip", "erle", "self-echo", "cpu-memory", "uplink"})

    def test_a_plot_without_data_is_caught(self):
        # Without bench talk the latency, barge-in, self-echo and CPU plots say "not measured": the check must fail.
        folder, _ = self.render(["speech", "aec", "uplink"])
        with self.assertRaises(AssertionError) as caught:
            check_page(folder)
        self.assertIn("talk-latency", str(caught.exception))
        self.assertIn("cpu-memory", str(caught.exception))

    def test_a_soak_report_draws_its_own_plots_with_data(self):
        # bench soak --report DIR: a folder with only the soak gets only its four plots, each with data.
        folder, markdown = self.render(["soak"])
        found = check_page(folder)
        self.assertEqual({name for name, _, _ in found}, {"soak-memory", "soak-cpu", "soak-recovery", "soak-deliveries"})
        text = open(markdown).read()
        self.assertIn("29 spoken, 28 delivered, 1 lost, 0 duplicated, 0 wrong text", text)
        self.assertIn("the daemon never exited", text)

    def test_the_figures_page_gives_each_run_its_date_machine_and_command(self):
        _, markdown = self.render(["talk", "speech", "aec", "uplink"])
        text = open(markdown).read()
        self.assertIn("`openclaw-talk bench talk --json`", text)
        self.assertIn("2026-12-02T16:00:00Z, fixture (2 cores)", text)
        self.assertIn("end of speech to first reply audio: p50", text)
        self.assertIn("self-echo --aec webrtc: interrupted itself in 0 of 3", text)
        self.assertIn("self-echo --aec off: interrupted itself in 3 of 3 (barge-in 3, answered-again 1), echo sent as a turn in 0, reply unfinished in 1", text)


if __name__ == "__main__":
    if len(sys.argv) == 2 and os.path.isdir(sys.argv[1]):
        for name, points, pixels in check_page(sys.argv[1]):
            print(f"  {name}: {points} data points, {pixels} data pixels")
        print("report page: every plot drawn with data")
    else:
        unittest.main()
