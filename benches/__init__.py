"""Torch benchmarks. Only the kernel modules import torch; the protocol and launcher modules do not.

`python -m benches` runs inside the environment being measured (any interpreter with torch) and
streams JSON lines on stdout, so the dashboard never imports torch itself.
"""
