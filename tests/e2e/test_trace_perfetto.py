"""The trace viewer's JSON as Perfetto imports it.

Perfetto (ui.perfetto.dev, trace_processor) is neither a Debian package nor
on npm, so these tests hold our answers to the rules of its JSON importer,
written here from its source (google/perfetto, src/trace_processor/importers/
json/: json_trace_tokenizer.cc splits the file, json_utils.cc's CoerceToTs
reads times, json_trace_parser_impl.cc turns events into slices, counters,
flows and names):

- The file is an object whose keys other than traceEvents,
  systemTraceEvents and displayTimeUnit are skipped whole (XProf puts nine of
  them before traceEvents), and traceEvents is an array of objects.
- In each event object the tokenizer looks for "ts" and then "dur" by
  walking its top-level keys; an array-valued key met on the way fails the
  whole import. An event without a "ts" it can read is dropped unless its
  "ph" is "M" (XProf's legacy answer ends with such an empty object).
- The tokenizer's strings allow no control characters and only the escapes
  \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u.
- A time is a JSON number in microseconds, turned into integer nanoseconds
  digit by digit (an exponent is shifted in).
- pid and tid are integers in [0, 2^32) (others become 0); "X" needs a
  duration it can read; "M" names a process or thread through args.name;
  "C" takes numeric args; a v2 flow is a numeric bind_id with flow_in /
  flow_out booleans.

XProf's counters break the array rule (one object per run of samples, its
"entries" array before any "ts"), so a trace with counters opens in
Perfetto only in our perfetto=1 form: one "C" event per sample, and
traceEvents first, for releases that stopped at the first unknown key.

The checker is tested on inputs that break each rule, then run over every
kind of answer (whole trace, windows, down-sampled, search, event details,
legacy, multi-host, a Chrome-trace run, generated TPU and GPU profiles, and
counters in both forms).
"""
import gzip
import json

import pytest

CONV = "jax_conv_rocm/2025_01_01_00_00_00"
ESCAPES = set('"\\/bfnrtu')
PHASES = set("XMCstfiIBEbenR")


class Rejected(Exception):
    """Perfetto would fail the whole import."""


def skip_ws(s, i):
    while i < len(s) and s[i] in " \t\r\n":
        i += 1
    return i


def read_string(s, i):
    """ReadOneJsonString: s[i] is the opening quote; returns (text, next)."""
    assert s[i] == '"'
    out, i, escaping = [], i + 1, False
    while i < len(s):
        c = s[i]
        if ord(c) < 0x20 or c == "\x7f":
            raise Rejected(f"control character in a string at {i}")
        if c == '"' and not escaping:
            return "".join(out), i + 1
        if escaping and c not in ESCAPES:
            raise Rejected(f"escape \\{c} at {i}")
        out.append(c)
        escaping = c == "\\" and not escaping
        i += 1
    raise Rejected("unterminated string")


def skip_value(s, i):
    """SkipOneJsonValue / ReadOneJsonDict: the end of the value at s[i]."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c == '"':
            _, i = read_string(s, i)
            continue
        if depth == 0 and c in ",}]":
            return i
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise Rejected("value runs past the end")


def read_key(s, i, where=""):
    """ReadOneJsonKey inside an object: (key, start of its value), or
    (None, past the closing brace)."""
    while True:
        i = skip_ws(s, i)
        if s[i] == ",":
            i += 1
            continue
        if s[i] == "}":
            return None, i + 1
        name, i = read_string(s, i)
        i = skip_ws(s, i)
        if s[i] != ":":
            raise Rejected(f"no colon after {where}{name!r}")
        return name, skip_ws(s, i + 1)


def extract(event, key):
    """ExtractValueForJsonKey: the raw text of key's value, or None."""
    i = skip_ws(event, 0)
    assert event[i] == "{"
    i += 1
    while True:
        name, i = read_key(event, i)
        if name is None:
            return None
        if event[i] == "[":
            raise Rejected(f"array-valued key {name!r} before {key!r} is found")
        if event[i] == '"':
            value, i = read_string(event, i)
        else:
            end = skip_value(event, i)
            value, i = event[i:end].strip(), end
        if name == key:
            return value


def coerce_to_ts(raw):
    """CoerceToTs on a number's text: microseconds -> integer nanoseconds."""
    s, shift = raw, 0
    for e in "eE":
        if e in s:
            s, exp = s.split(e, 1)
            try:
                shift = int(exp)
            except ValueError:
                return None
    digits = len(s) if "." not in s else s.index(".")
    s = s.replace(".", "", 1)
    size = max(1, digits + shift + 3)
    s = (s + "0" * size)[:size]
    try:
        return int(s)
    except ValueError:
        return None


def check_event(e):
    """json_trace_parser_impl's reading of one parsed event."""
    ph = e.get("ph")
    assert isinstance(ph, str) and ph[:1] in PHASES, e
    for k in ("pid", "tid"):
        if k in e:
            assert isinstance(e[k], int) and 0 <= e[k] < 2**32, e
    if ph == "X":
        assert isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, e
    if ph == "M" and e.get("name") in ("process_name", "thread_name"):
        assert isinstance(e["args"]["name"], str), e
    if ph == "C":
        assert isinstance(e.get("args"), dict), e
        assert all(isinstance(v, (int, float)) and not isinstance(v, bool)
                   for v in e["args"].values()), e
    if "bind_id" in e:
        assert isinstance(e["bind_id"], int) and 0 <= e["bind_id"] < 2**64, e
        assert e.get("flow_in", False) in (True, False)
        assert e.get("flow_out", False) in (True, False)
        assert e.get("flow_in") or e.get("flow_out"), e


def read_events(text, i, kept):
    """The traceEvents array from just past its '[': each object the
    tokenizer keeps goes to kept (parsed and checked). Returns (the index
    past the ']', the number of objects dropped)."""
    dropped = 0
    while True:
        i = skip_ws(text, i)
        if text[i] == ",":
            i += 1
            continue
        if text[i] == "]":
            return i + 1, dropped
        if text[i] != "{":
            raise Rejected(f"traceEvents holds a non-object at {i}")
        end = skip_value(text, i)
        raw, i = text[i:end], end
        # The tokenizer looks for both; either walk may meet an array.
        ts, _dur = extract(raw, "ts"), extract(raw, "dur")
        if (ts is None or coerce_to_ts(ts) is None) and extract(raw, "ph") != "M":
            dropped += 1
            continue
        e = json.loads(raw)
        check_event(e)
        kept.append(e)


def perfetto_import(text, old=False):
    """What Perfetto takes from a JSON trace: (kept events, dropped count).
    old: a release before its tokenizer skipped unknown top-level keys, which
    read "metadata" and "otherData" and stopped at any other key."""
    i = skip_ws(text, 0)
    if text[i] != "{":
        raise Rejected("not an object")
    i += 1
    kept, dropped, seen_events = [], 0, False
    while True:
        key, i = read_key(text, i, "top-level ")
        if key is None:
            break
        if key == "traceEvents":
            if text[i] != "[":
                raise Rejected("traceEvents is not an array")
            seen_events = True
            i, dropped = read_events(text, i + 1, kept)
        elif key == "displayTimeUnit":
            unit, i = read_string(text, i)
            assert unit in ("ns", "ms")
        elif old and key not in ("metadata", "otherData"):
            return kept, dropped  # "ignore the rest of the trace"
        else:
            i = skip_value(text, i)
    if not seen_events:
        raise Rejected("no traceEvents")
    assert skip_ws(text, i) == len(text), "bytes after the top-level object"
    return kept, dropped


# --- the checker itself --------------------------------------------------------

GOOD = ('{"displayTimeUnit":"ns","fullTimespan":[0,5],"stackFrames":{"1":{"name":"a"}},'
        '"traceEvents":[{"args":{"name":"p"},"name":"process_name","ph":"M","pid":1},'
        '{"pid":1,"tid":2,"name":"k\\"x","ts":1.5,"dur":9.9999999999999995e-07,"ph":"X",'
        '"args":{"uid":0,"list":[1,2]}},{"pid":1,"name":"c","ts":2,"ph":"C","args":'
        '{"v":3}}],"totalCounterEvents":1}\n')


def test_checker_takes_a_good_trace():
    kept, dropped = perfetto_import(GOOD)
    assert [e["ph"] for e in kept] == ["M", "X", "C"] and dropped == 0
    assert coerce_to_ts("2.5e-3") == 2  # 2.5 ns, truncated
    assert coerce_to_ts("1634450.691") == 1634450691
    assert coerce_to_ts("7972") == 7972000
    assert coerce_to_ts("1.5e3") == 1500000


@pytest.mark.parametrize("change,why", [
    (('"tid":2,', '"tid":2,"bad":[1],'), "array-valued"),
    (('"name":"k\\"x"', '"name":"k\\qx"'), "escape"),
    (('"name":"k\\"x"', '"name":"k\tx"'), "control character"),
    (('"traceEvents":[', '"traceEvents":{"a":['), "not an array"),
])
def test_checker_rejects(change, why):
    with pytest.raises(Rejected, match=why):
        perfetto_import(GOOD.replace(*change))


def test_checker_drops_and_refuses_fields():
    _, dropped = perfetto_import(GOOD.replace('"ts":1.5,', ""))
    assert dropped == 1
    with pytest.raises(AssertionError):
        perfetto_import(GOOD.replace('"tid":2', '"tid":-2'))
    with pytest.raises(AssertionError):
        perfetto_import(GOOD.replace('"args":{"v":3}', '"args":{"v":"x"}'))


def test_checker_old_releases_stop_at_unknown_keys():
    kept, _ = perfetto_import(GOOD, old=True)
    assert kept == []  # "fullTimespan" comes before traceEvents
    head = '"fullTimespan":[0,5],"stackFrames":{"1":{"name":"a"}},'
    moved = GOOD.replace(head, "").replace('"totalCounterEvents":1',
                                           head + '"totalCounterEvents":1')
    kept, _ = perfetto_import(moved, old=True)
    assert len(kept) == 3 and json.loads(moved) == json.loads(GOOD)


# --- our answers ----------------------------------------------------------------

def imported(xcat, logdir, path):
    raw = xcat(logdir, path)
    kept, dropped = perfetto_import(raw.decode())
    doc = json.loads(raw)
    return kept, dropped, doc


@pytest.mark.parametrize("query", [
    "", "?resolution=8000", "?start_time_ms=1635.8&end_time_ms=1636.5",
    "?start_time_ms=0&end_time_ms=8000&resolution=100", "?search_prefix=cudnn",
])
def test_conv_answers_import_whole(corpus, xcat, query):
    kept, dropped, doc = imported(xcat, corpus, f"{CONV}/trace_viewer.json{query}")
    assert dropped == 0
    assert len(kept) == len(doc["traceEvents"])
    assert doc["returnedEventsSize"] == sum(e["ph"] != "M" for e in kept) > 0
    # Every track Perfetto makes has its name: slices sit on named threads.
    named = {(e["pid"], e["tid"]) for e in kept if e.get("name") == "thread_name"}
    assert all((e["pid"], e["tid"]) in named for e in kept if e["ph"] == "X")
    if query == "":
        assert any("bind_id" in e for e in kept)  # launches bound to kernels (v2 flows)


def test_perfetto_form_serves_old_releases(corpus, xcat):
    """perfetto=1 puts traceEvents right after displayTimeUnit, XProf's other
    keys after it: a release that stops at the first unknown key reads every
    event, where it reads none of XProf's order (codeLink comes first)."""
    xprof = xcat(corpus, f"{CONV}/trace_viewer.json").decode()
    ours = xcat(corpus, f"{CONV}/trace_viewer.json?perfetto=1").decode()
    assert perfetto_import(xprof, old=True)[0] == []
    kept, dropped = perfetto_import(ours, old=True)
    assert dropped == 0 and kept == json.loads(xprof)["traceEvents"]
    assert ours.startswith('{"displayTimeUnit":"ns","traceEvents":[{')
    # The same document otherwise (no counters here).
    assert json.loads(ours) == json.loads(xprof)


def test_event_details_import(corpus, xcat):
    kept, _, _ = imported(xcat, corpus, f"{CONV}/trace_viewer.json?search_prefix=cudnn")
    e = next(x for x in kept if x["ph"] == "X")
    q = (f"{CONV}/trace_viewer.json?event_name={e['name']}&start_time_ms={e['ts'] / 1000!r}"
         f"&duration_ms={e['dur'] / 1000!r}&unique_id={e['args']['uid']}")
    got, dropped, _ = imported(xcat, corpus, q)
    assert dropped == 0 and [x["name"] for x in got if x["ph"] == "X"] == [e["name"]]


def test_legacy_imports_but_its_terminator(corpus, xcat):
    kept, dropped, doc = imported(xcat, corpus, f"{CONV}/trace_viewer_legacy.json")
    # XProf ends the legacy array with {}: Perfetto drops that one object.
    assert dropped == 1 and doc["traceEvents"][-1] == {}
    assert len(kept) == len(doc["traceEvents"]) - 1


@pytest.mark.parametrize("path", [
    "tf_gpu_multiworker/s1/trace_viewer.json",
    "pytorch/h100_bert_small/trace_viewer.json",
    "jax08_conv_rocm/s1/trace_viewer.json",
])
def test_corpus_runs_import_whole(corpus, xcat, path):
    kept, dropped, doc = imported(xcat, corpus, path)
    assert dropped == 0 and len(kept) == len(doc["traceEvents"])
    assert any(e["ph"] == "X" for e in kept)


@pytest.mark.parametrize("scenario", ["tpu", "steps4", "inference"])
def test_generated_profiles_import_whole(tmp_path, synth, xcat, scenario):
    logdir = synth(tmp_path / "logs", "--run", "r", "--scenario", scenario)
    for query in ("", "?resolution=8000"):
        kept, dropped, doc = imported(xcat, logdir, f"r/trace_viewer.json{query}")
        assert dropped == 0 and len(kept) == len(doc["traceEvents"])
        assert any(e["ph"] == "X" for e in kept)


# --- counters: XProf's "entries" runs, and perfetto=1 ----------------------------

def test_xplane_counters_need_perfetto_form(tmp_path, xcat):
    from test_trace_pb import write_xplane  # hand-made: counters, async channels, flows
    write_xplane(tmp_path / "logs" / "plugins" / "profile" / "r" / "h.xplane.pb")
    logdir = tmp_path / "logs"
    # XProf's form: a run of samples holds an "entries" array before any "ts".
    with pytest.raises(Rejected, match="array-valued key 'entries'"):
        imported(xcat, logdir, "r/trace_viewer.json")
    kept, dropped, doc = imported(xcat, logdir, "r/trace_viewer.json?perfetto=1")
    assert dropped == 0 and len(kept) == len(doc["traceEvents"])
    xprof = json.loads(xcat(logdir, "r/trace_viewer.json"))
    # The same samples: (name, ts, first value) per sample, in order.
    want = [(c["name"], row[0], row[1]) for c in xprof["traceEvents"] if c.get("ph") == "C"
            for row in c["entries"]]
    got = [(e["name"], e["ts"], next(iter(e["args"].values()))) for e in kept if e["ph"] == "C"]
    assert got == want
    # By hand (write_xplane: the counter line starts at 1 ns).
    assert [(n, v) for n, _, v in got if n == "mem"] == [("mem", 123456789012), ("mem", 0)]
    assert [e["args"] for e in kept if e["ph"] == "C" and e["name"] == "util"] == \
        [{"pct": 0.25}, {"pct": 0.0}]
    assert doc["totalCounterEvents"] == xprof["totalCounterEvents"] == 5
    # Everything but the counters is the same bytes.
    same = [e for e in doc["traceEvents"] if e.get("ph") != "C"]
    assert same == [e for e in xprof["traceEvents"] if e.get("ph") != "C"]
    r = xcat(logdir, "r/trace_viewer.json?perfetto=1&format=pb", check=False)
    assert r.returncode != 0 and b"JSON form" in r.stderr


def test_chrome_trace_counters_in_perfetto_form(tmp_path, xcat):
    run = tmp_path / "logs" / "plugins" / "profile" / "r"
    run.mkdir(parents=True)
    evs = [{"ph": "X", "pid": 1, "tid": 2, "name": "k", "ts": 10, "dur": 5}]
    evs += [{"ph": "C", "pid": 1, "name": "mem", "ts": 11 + i, "args": {"v": 1.5 * i, "w": i}}
            for i in range(4)]
    (run / "x.trace.json.gz").write_bytes(gzip.compress(json.dumps({"traceEvents": evs}).encode()))
    logdir = tmp_path / "logs"
    with pytest.raises(Rejected, match="entries"):
        imported(xcat, logdir, "r/trace_viewer.json")
    # By hand, the whole run: every sample with both args (times shifted to
    # the run's first event, at 10 us).
    kept, dropped, _ = imported(xcat, logdir, "r/trace_viewer.json?perfetto=1")
    samples = [(e["pid"], e["name"], e["ts"], e["args"]) for e in kept if e["ph"] == "C"]
    assert dropped == 0
    assert samples == [(1001, "mem", e["ts"] - 10, e["args"]) for e in evs if e["ph"] == "C"]
    # A window selects the samples XProf's form does.
    q = "start_time_ms=0.0015&end_time_ms=0.0025"
    kept, dropped, _ = imported(xcat, logdir, f"r/trace_viewer.json?perfetto=1&{q}")
    xprof = json.loads(xcat(logdir, f"r/trace_viewer.json?{q}"))
    rows = [row for c in xprof["traceEvents"] if c.get("ph") == "C" for row in c["entries"]]
    got = [[e["ts"], e["args"]["v"], e["args"]["w"]] for e in kept if e["ph"] == "C"]
    assert dropped == 0 and rows and got == rows
