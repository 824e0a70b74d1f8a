"""Reads the machine (psutil, NVML) into immutable snapshots. No UI imports, no torch."""
