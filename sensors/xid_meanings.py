"""What common Xid codes mean, in NVIDIA's words, shortened (docs.nvidia.com/deploy/xid-errors)."""

from __future__ import annotations

XID_MEANINGS: dict[int, str] = {
    8: "GPU stopped processing (driver or application error)",
    13: "graphics engine exception (often an application error: illegal memory access)",
    31: "GPU memory page fault (an application's illegal memory access, or a driver bug)",
    32: "invalid or corrupted push buffer stream (PCIe or driver problem)",
    38: "driver firmware error",
    43: "GPU stopped processing (the application hit a software-induced fault)",
    45: "preemptive cleanup, due to previous errors (a process was killed or hit an error)",
    48: "double-bit ECC error (uncorrectable memory error)",
    56: "display engine error",
    57: "error programming video memory interface",
    61: "internal micro-controller breakpoint or warning",
    62: "internal micro-controller halt",
    63: "ECC page retirement or row remapping recorded",
    64: "ECC page retirement or row remapper recording failure",
    68: "video processor exception",
    69: "graphics engine class error",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error (the application was stopped; the GPU goes on)",
    95: "uncontained ECC error (every application on the GPU is affected; reset the GPU)",
    109: "context switch timeout",
    119: "GSP RPC timeout",
    120: "GSP error",
    121: "C2C link corrected error",
    140: "unrecovered ECC error",
}


def xid_meaning(code: int) -> str:
    """The meaning of Xid `code` in words, or a pointer to NVIDIA's catalog for a code not in the table."""
    return XID_MEANINGS.get(code, "see NVIDIA's Xid catalog")
