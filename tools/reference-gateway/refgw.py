#!/usr/bin/env python3
"""Runs the reference OpenClaw Gateway: python3 tools/reference-gateway/refgw.py --help"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gateway.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
