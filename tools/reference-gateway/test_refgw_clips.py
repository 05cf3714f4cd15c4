"""The transcription relay's stand-in recogniser (`ClipIndex.match`): the corpus clip a turn holds, whatever sound
comes before or after it in the turn, and no clip for a turn of the reply's echo alone.

Run: python3 -m unittest test_refgw_clips (from tools/reference-gateway)
"""

import os
import shutil
import subprocess
import tempfile
import unittest

from shared_dir import corpus_manifest

from gateway.talk_audio import ClipIndex, read_wav

RATE = 16000
REPLY = ("Sure, here is what I found about that. The forecast stays mild and clear all week, with a light breeze. "
         "Mornings begin cool, and by noon the sun warms the valley. Rain is unlikely before Sunday evening.")


def espeak(text, words_per_minute):
    """(samples, rate) of espeak-ng's en-us voice: the local voice's reply, whose echo a turn may hold."""
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "reply.wav")
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", str(words_per_minute), "-w", path, "--", text], check=True)
        return read_wav(path)


class ClipMatchTests(unittest.TestCase):
    def setUp(self):
        manifest = corpus_manifest(self)
        self.index = ClipIndex(str(manifest))
        self.clip = self._clip(manifest, "ps_goforward.wav")
        self.other = self._clip(manifest, "arctic_aew_a0002.wav")

    def _clip(self, manifest, name):
        samples, rate = read_wav(str(manifest.parent / name))
        self.assertEqual(rate, RATE, name)
        return samples

    def _heard(self, samples):
        match = self.index.match(samples, RATE)
        return match and match[1]

    def test_the_clip_alone_gives_its_transcript(self):
        self.assertEqual(self._heard(self.clip + [0] * RATE), "go forward ten meters")

    def test_a_clip_after_other_speech_gives_its_transcript(self):
        """As a turn that opened on the reply's echo a moment before the user spoke."""
        tenth = RATE // 10
        loudest = max(range(0, len(self.other) - tenth, tenth), key=lambda i: sum(map(abs, self.other[i:i + tenth])))
        for lead_ms in (300, 1000, 2500):
            with self.subTest(lead_ms=lead_ms):
                start = max(0, loudest - lead_ms * RATE // 2000)  # the other speech's loudest part in the lead
                lead = self.other[start:start + lead_ms * RATE // 1000]
                self.assertEqual(self._heard(lead + self.clip + [0] * RATE), "go forward ten meters")

    def test_a_clip_with_speech_after_it_gives_its_transcript(self):
        self.assertEqual(self._heard(self.clip + self.other[:RATE * 3 // 2]), "go forward ten meters")

    def test_the_replys_echo_alone_gives_no_clip(self):
        """Turns of 2 to 6 s of the local voice's speech (what a turn of echo holds), at its default and a fast
        rate: no corpus clip is inside them."""
        if not shutil.which("espeak-ng"):
            self.skipTest("espeak-ng is not installed")
        for words_per_minute in (175, 260):
            samples, rate = espeak(REPLY, words_per_minute)
            for seconds in (2, 4, 6):
                for start in range(0, len(samples) - seconds * rate, rate):
                    with self.subTest(wpm=words_per_minute, seconds=seconds, start_s=start // rate):
                        turn = samples[start:start + seconds * rate] + [0] * (rate * 4 // 5)
                        self.assertIsNone(self.index.match(turn, rate))


if __name__ == "__main__":
    unittest.main()
