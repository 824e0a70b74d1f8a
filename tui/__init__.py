"""The Textual dashboard and the `pth-top` command line."""

# Fastest dashboard refresh: NVML and /proc reads cost milliseconds each.
MIN_INTERVAL_S = 0.25
