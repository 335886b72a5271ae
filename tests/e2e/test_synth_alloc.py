"""xprofs-synth --alloc-events: allocator events memory_profile.json reads.

The peak is recomputed by replaying the generated events (python3-protobuf,
not the C reader): the largest running sum of allocation_bytes, allocations
adding and deallocations taking away."""
import json

import xplane_py


def test_alloc_events_peak(synth, xcat, tmp_path):
    synth(tmp_path, "--run", "a", "--steps", "2", "--alloc-events", "5001")
    space = xplane_py.load(next((tmp_path / "plugins/profile/a").glob("*.xplane.pb")))
    host = next(p for p in space.planes if p.name == "/host:CPU")
    em = {m.key: m.value.name for m in host.event_metadata}
    sm = {m.key: m.value.name for m in host.stat_metadata}
    line = next(ln for ln in host.lines if ln.name == "allocator")
    assert len(line.events) == 5001
    use = peak = 0
    live = set()
    for e in line.events:
        st = {sm[s.metadata_id]: getattr(s, s.WhichOneof("value")) for s in e.stats}
        if em[e.metadata_id] == "MemoryAllocation":
            use += st["allocation_bytes"]
            live.add(st["addr"])
        else:
            use -= st["allocation_bytes"]
            live.remove(st["addr"])
        assert st["bytes_allocated"] == use
        peak = max(peak, use)
    assert len(live) == 65  # 64 live, and the last event allocates one more
    d = json.loads(xcat(tmp_path, "a/memory_profile.json"))
    summary = d["memoryProfilePerAllocator"]["GPU_0_bfc"]["profileSummary"]
    assert int(summary["peakBytesUsageLifetime"]) == peak
