"""Reusable Textual widgets that know nothing of psutil, NVML or torch."""
