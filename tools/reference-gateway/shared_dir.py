"""Where `../shared` is, by the one rule the Swift tests follow too
(Tests/TalkTestSupport/TestInputs.swift):

- `../shared` is `$OPENCLAW_TALK_SHARED` when set, else the folder `shared` beside the package root;
- CI is `$CI` set to anything but empty, `0` or `false`. CI always has `../shared`, so there a test
  that needs it fails instead of skipping.
"""

import os
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "reference/openclaw-protocol.schema.json"


def shared_dir():
    """The shared folder (reference material and corpus); it may not exist."""
    return Path(os.environ.get("OPENCLAW_TALK_SHARED") or PACKAGE_ROOT.parent / "shared")


def is_ci():
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


def corpus_manifest(test):
    """The corpus manifest, for a test that needs it: the test fails without it under CI, else is skipped."""
    manifest = shared_dir() / "corpus" / "speech" / "manifest.tsv"
    if not manifest.exists():
        if is_ci():
            test.fail("../shared/corpus is missing")
        test.skipTest("../shared/corpus is missing")
    return manifest
