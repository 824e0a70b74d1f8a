"""Benchmark kernels: the only modules that import torch (the rest of the child imports it lazily, or not at all)."""
