"""Small pieces of TraceLens's rules shared by the PyTorch tests, written
independently of the C code: event categories and the interval union."""

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
RT_CATS = {"cuda_runtime", "cuda_driver"}


def union_length(intervals):
    """Total length of the union of [start, end] intervals (touching ones merge)."""
    total, cur = 0.0, None
    for s, e in sorted(intervals):
        if cur is None or s > cur[1]:
            if cur is not None:
                total += cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    if cur is not None:
        total += cur[1] - cur[0]
    return total
