"""Benchmark kernels. These modules import torch; everything outside benches/kernels/ does not."""
