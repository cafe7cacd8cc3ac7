#!/usr/bin/env python3
"""The pictures of docs/cudaclahe.md; now part of scripts/make-pictures.py,
which makes every picture of the docs. This runs its `clahe` set:

    GST_PLUGIN_PATH=build/plugin scripts/make-clahe-pictures.py [--out docs/img] [--backend cpu|cuda]

is `scripts/make-pictures.py --only clahe [--out ...] [--backend ...]`: it
writes clahe.png, clahe-moon.png, clahe-hubble_deep_field.png,
clahe-camera.png and clahe-clip-limits.png, and fails if an output differs
from OpenCV's.
"""
import os
import sys

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make-pictures.py")
os.execv(sys.executable, [sys.executable, script, "--only", "clahe"] + sys.argv[1:])
