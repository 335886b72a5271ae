"""XProf's TPU utilization metrics written again in Python for the tests
(xprof/convert/tpu_generic_utilization_utils.cc and the per-core loop of
xplane_to_utilization_viewer.cc), over the counter tables the repository
ships (src/tools/tpu_counter_ids_<chip>.inc), so expected numbers do not
come from the C code under test."""
import math
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
M64 = 2**64
_tables = {}


def table(chip):
    """[(NAME, id)] of chip ("v6e", "v7x") in the file's order."""
    if chip not in _tables:
        text = (REPO / "src" / "tools" / f"tpu_counter_ids_{chip}.inc").read_text()
        _tables[chip] = [(n, int(v)) for n, v in re.findall(r'\{"(\w+)", UINT64_C\((\d+)\)\}', text)]
    return _tables[chip]


def ids(chip):
    return dict(table(chip))


def counter_value(kind, v):
    """XProf's conversion of a counter_value stat to uint64."""
    if kind == "double_value":
        if v == 0.0 or math.isnan(v) or v < 0:
            return 0
        return M64 - 1 if v >= 2.0**64 else int(v)
    if kind in ("uint64_value", "int64_value"):
        return v % M64
    return 0


def metrics(chip, c):
    """The metric rows (node, name, achieved, peak, unit) of counter map c
    (id -> value) for chip, in XProf's order."""
    t = ids(chip)
    v6e = chip == "v6e"
    out = []

    def g(name):
        return c.get(t[name], 0) if name in t else 0

    def add(node, name, a, p, unit):
        out.append((node, name, float(a), float(p), unit))

    def tc(core, name):
        if v6e:
            return g("VF_CHIP_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_" + name)
        return g(f"VF_CHIP_DIE{core}_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_"
                 + name)

    def pwr(core, name):
        return g(f"VF_CHIP_DIE{core}_PWRMGR_PWRMGR_TC_THROTTLE_CORE_DEBUG_STATS_UNPRIVILEGED_{name}")

    def s(*vals):
        return sum(vals) % M64

    for core in range(1 if v6e else 2):
        C = lambda n: tc(core, n)  # noqa: E731
        cycles = C("CYCLES") if v6e else pwr(core, "CYCLE_COUNT")
        if cycles:
            if not v6e:
                add(core, "Clocks Skipped", pwr(core, "CLOCKS_SKIPPED"), cycles, "cycles")
                add(core, "Ext Throttle Clocks Skipped", pwr(core, "EXT_THROTTLE_CLOCKS_SKIPPED"),
                    cycles, "cycles")
                add(core, "LDIDT Droop Clocks Skipped", pwr(core, "LDIDT_DROOP_CLOCKS_SKIPPED"),
                    cycles, "cycles")
            add(core, "Scalar Unit", s(C("SCALAR_ALU_INSTRUCTION_0"), C("SCALAR_ALU_INSTRUCTION_1")),
                cycles * 2 % M64, "instructions")
            add(core, "Vector ALUs", s(*[C(f"VECTOR_ALU_INSTRUCTION_{i}") for i in range(4)]),
                cycles * 4 % M64, "instructions")
            add(core, "VPU Utilization", s(*[C(f"VPU_VALU_{op}_OPS_{i}") for op in
                                           ("FADD", "FMUL", "MISC", "INT", "FMAC") for i in range(4)]),
                cycles * 4 % M64, "instructions")
            add(core, "Vmem Stores", C("VST_INSTRUCTION"), cycles, "instructions")
            add(core, "Vmem Loads", s(C("VLD_INSTRUCTION_0"), C("VLD_INSTRUCTION_1")),
                cycles * 2 % M64, "instructions")
            b = [C(f"MXU_BUSY_{i}") for i in range(3)]
            for name, val in zip(["No MXU Busy", "1 MXU Busy", "2 MXU Busy"], b):
                add(core, name, val, cycles, "cycles")
            add(core, "Avg MXU Busy", 0.5 * float(b[1]) + float(b[2]), cycles, "cycles")
            mm = lambda k, u: C(f"MATMUL_{k}_MXU_{u}")  # noqa: E731
            if v6e:
                kinds = {"MXU BF16": [(4, "LMR_BF16"), (8, "VREG_F8"), (8, "VREG_BF16"), (4, "VREG_F32")],
                         "MXU I8": [(2, "LMR_I8"), (8, "VREG_I8")],
                         "MXU I4": [(2, "LMR_I4"), (8, "VREG_I4")]}
            else:
                kinds = {"MXU BF16": [(4, "LMR_BF16"), (8, "VREG_BF16"), (4, "VREG_F32")],
                         "MXU E4M3 + E5M2": [(8, "VREG_F8")]}
            per = {n: [s(*[w * mm(k, u) for w, k in terms]) for u in range(2)]
                   for n, terms in kinds.items()}
            for u in range(2):
                add(core, f"MXU{u}", s(*[per[n][u] for n in kinds]), cycles, "cycles")
            for n in kinds:
                add(core, n, s(per[n][0], per[n][1]), cycles * 2 % M64, "cycles")
            add(core, "MXU matpush", s(C("MATPUSH_CYCLES_MXU_0"), C("MATPUSH_CYCLES_MXU_1")),
                cycles * 2 % M64, "cycles")
            x = [C(f"XLU_BUSY_{i}") for i in range(3)]
            for name, val in zip(["No XLU Busy", "1 XLU Busy", "2 XLUs Busy"], x):
                add(core, name, val, cycles, "cycles")
            add(core, "Avg XLU Busy", 0.5 * float(x[1]) + float(x[2]), cycles, "cycles")
            for u in range(2):
                add(core, f"XLU{u}", s(*[C(f"{k}_{u}") for k in
                                         ("PACKED_XLU", "ROTATE_PERMUTE_INSTRUCTION_XLU",
                                          "ROTATE_PERMUTE_SET_INSTRUCTION_XLU", "TRANSPOSE_XLU")]),
                    cycles // (4 if v6e else 1), "instructions")
        # HBM
        rd = wr = 0
        for st in range(2 if v6e else 4):
            for i in range(16):
                for ps in range(2):
                    pre = (f"VF_CHIP_HBM_{st}_HBMC_{i}" if v6e else
                           f"VF_CHIP_DIE{core}_HBM_{st}_SS_HBMC_{i}") + \
                        "_CMN_HI_FREQ_STATS_COUNTERS_UNPRIVILEGED_"
                    rd += g(pre + f"RD_RESP_PS{ps}")
                    wr += g(pre + f"WR_REQ_PS{ps}") + g(pre + f"PARTIAL_WRITE_REQ_PS{ps}")
        rd, wr = rd * 32 % M64, wr * 32 % M64
        hc = C("CYCLES")
        if hc:
            peak_bw = (1525.5 if v6e else 3433.0) * 1024.0**3
            freq = 1.75e9 if v6e else 1.9e9
            add(0, f"HBM Rd+Wr - core {core}", (rd + wr) % M64, peak_bw * (hc / freq), "bytes")
            total = float((rd + wr) % M64)
            if total > 0:
                add(core, "HBM Read Ratio", rd, total, "percent")
                add(core, "HBM Write Ratio", wr, total, "percent")
        # ICI (once per core, as XProf repeats it)
        icr = "VF_CHIP_OCI_ICR_PERF_COUNTERS_FIFO_STATS_COUNTERS_UNPRIVILEGED_BN_{}_REQ_{}_INSERTION_COUNT"
        icr7 = ("VF_CHIP_DIE1_OCI_ICR_{}_PERF_COUNTERS_FIFO_STATS_COUNTERS_UNPRIVILEGED_BN_{}_REQ_0_"
                "INSERTION_COUNT")
        if v6e:
            ird = sum(g(icr.format("RD", i)) for i in range(2))
            iwr = sum(g(icr.format("WR", i)) for i in range(2))
            icyc = tc(0, "CYCLES")
        else:
            ird = sum(g(icr7.format(i, "RD")) for i in range(4))
            iwr = sum(g(icr7.format(i, "WR")) for i in range(4))
            icyc = pwr(0, "CYCLE_COUNT")
        if icyc:
            peak = 294947368421.0526 * (icyc / 1e9)
            add(0, "ICI (Read)", ird * 128 % M64, peak, "bytes")
            add(0, "ICI (Write)", iwr * 128 % M64, peak, "bytes")
    # SparseCores
    vec6 = ["SC Vector Issue", "SC Vector Issue:V0 Slot", "SC Vector Issue: V1 Slot",
            "SC Vector Issue: V2 Slot", "SC Vector Issue: VLD Slot", "SC Vector Issue: VST Slot",
            "SC Vector Issue:VEX Slot", "SC Vector Issue:VRES Slot"]
    vec7 = ["SC Vector Issue", "SC Vector Issue: V0 Slot", "SC Vector Issue: V1 Slot",
            "SC Vector Issue: V2 Slot", "SC Vector Issue: VLD Slot", "SC Vector Issue: VST Slot",
            "SC Vector Issue: VEX Slot", "SC Vector Issue: VRES Slot"]
    vnames = ["VECTOR_ISSUE", "V0_INSTRUCTION", "V1_INSTRUCTION", "V2_INSTRUCTION",
              "VLD_INSTRUCTION", "VST_INSTRUCTION", "VEX_INSTRUCTION", "VRES_INSTRUCTION"]
    sfx = "_SC_STATS_COUNTERS_UNPRIVILEGED_COUNT_"
    for die in range(1 if v6e else 2):
        for core in range(2):
            pre = f"VF_CHIP_SC_{core}" if v6e else f"VF_CHIP_DIE{die}_SC_{core}"
            su, vu = ("SCT", "SCT") if v6e else ("SCTD", "SCTC")
            node = core if v6e else (die << 1) + core
            tiles = lambda u, n: sum(g(f"{pre}_{u}_{t}{sfx}{n}") for t in range(16)) % M64  # noqa
            peak = g(f"{pre}_{su}_0{sfx}CYCLES") * 16 % M64
            for m, n in zip(["TEC Scalar Issue", "TEC Scalar Issue: S0 slot",
                             "TEC Scalar Issue: S1 slot", "TEC Scalar Issue: Smisc slot"],
                            ["TEC_SCALAR_ISSUE", "TEC_S0_INSTRUCTION", "TEC_S1_INSTRUCTION",
                             "TEC_SMISC_INSTRUCTION"]):
                add(node, m, tiles(su, n), peak, "instructions")
            for m, n in zip(vec6 if v6e else vec7, vnames):
                add(node, m, tiles(vu, n), peak, "instructions")
            scs = g(f"{pre}_SCS{sfx}CYCLES")
            for m, n in zip(["SCS Scalar Issue", "SCS: S0 Slot", "SCS: S1 Slot", "SCS: Smisc Slot"],
                            ["SCALAR_ISSUE", "S0_INSTRUCTION", "S1_INSTRUCTION", "SMISC_INSTRUCTION"]):
                add(node, m, g(f"{pre}_SCS{sfx}{n}"), scs, "instructions")
    return out
