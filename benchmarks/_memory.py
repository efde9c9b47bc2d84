"""Peak-memory helpers shared by the benchmarks (Linux /proc)."""

from __future__ import annotations


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory (``VmRSS``) or its high-water mark (``VmHWM``), in MB."""
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peak() -> float:
    """Reset the RSS high-water mark and return the current RSS (MB)."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return rss_mb()
