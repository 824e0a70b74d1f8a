"""The Textual dashboard and the `pth-top` command line."""

__version__ = "0.1.0"

# Fastest dashboard refresh: NVML and /proc reads cost milliseconds each.
MIN_INTERVAL_S = 0.25
