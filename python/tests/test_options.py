"""The loader's options in Python: stoker._stoker.loader_keys() is the table stoker train and
stoker bench loader read, and stoker._options.check() validates a keyword from it in one line
that names the keyword, never a flag. The diagnosis's advice comes as data, in Python's words."""
import inspect
import math

import pytest

import stoker
from stoker import _options, _stoker

ROWS = [row for row in _stoker.loader_keys() if row["python"]]
IDS = [row["python"] for row in ROWS]


def refused(name, value):
    with pytest.raises(ValueError) as caught:
        _options.check(name, value)
    message = str(caught.value)
    assert message.startswith(f"{name}={value!r}: "), message
    assert "--" not in message, message  # the keyword, never a command-line flag
    assert "\n" not in message
    return message


def test_the_table_names_each_option_once_per_front_end():
    rows = _stoker.loader_keys()
    for front in ("python", "flag", "yaml"):
        names = [row[front] for row in rows if row[front]]
        assert len(names) == len(set(names)), front
    assert {"batch_size", "num_workers", "prefetch_factor", "pin_memory", "shuffle", "drop_last", "seed",
            "on_error", "max_bad", "cache_decoded_gb", "channels_last"} <= set(IDS)
    workers = _options.KEYS["num_workers"]
    assert (workers["flag"], workers["yaml"], workers["min"], workers["max"]) == ("--workers", "num_workers", 1, 1024)
    assert _options.KEYS["on_error"]["choices"] == ["substitute", "raise"]  # the command line's 'fail' is 'raise'


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_each_row_takes_its_edges_and_refuses_past_them(row):
    name = row["python"]
    assert _options.check(name, row["default"]) == row["default"]
    for extra in row["extras"]:
        assert _options.check(name, extra["value"]) is extra["value"]
    extras = [e["value"] for e in row["extras"]]
    if row["type"] == "int":
        assert _options.check(name, row["min"]) == row["min"]
        assert _options.check(name, row["max"]) == row["max"]
        if row["min"] - 1 not in extras:
            assert "a whole number from" in refused(name, row["min"] - 1)
        refused(name, row["max"] + 1)
        refused(name, True)  # a bool is not a count
        refused(name, float(row["min"]))
        refused(name, str(row["min"]))
    elif row["type"] == "number":
        assert _options.check(name, row["min"]) == row["min"]
        refused(name, row["min"] - 1e-9)
        if row["max"] is not None:
            assert _options.check(name, row["max"]) == row["max"]
            refused(name, row["max"] + 1e-9)
        for value in (True, math.nan, math.inf, "1"):
            refused(name, value)
    elif row["type"] == "bool":
        assert _options.check(name, True) is True and _options.check(name, False) is False
        for value in (1, 0, "yes", None):
            if value not in extras:
                refused(name, value)
    else:
        for choice in row["choices"]:
            assert _options.check(name, choice) == choice
        refused(name, "nonsense")
        refused(name, None)


def test_messages_say_what_is_allowed_and_what_the_option_does():
    assert refused("num_workers", -1) == (
        "num_workers=-1: a whole number from 1 to 1024, or 'auto' (tuned at run time from measured throughput), "
        "or 0 (one thread, as light as torch's main-process loading); loader worker threads")
    assert refused("max_bad", 2).startswith("max_bad=2: a number from 0 to 1; ")
    assert refused("on_error", "fail").startswith("on_error='fail': one of 'substitute', 'raise'; ")
    assert refused("cache_decoded_gb", -1).startswith("cache_decoded_gb=-1: a number, 0 or more; ")
    assert refused("pin_memory", 1).startswith("pin_memory=1: True or False; ")
    assert _options.check("num_workers", 0) == 0  # torch's main-process loading: one thread
    assert _options.check("seed", 2**64 - 1) == 2**64 - 1
    refused("seed", 2**64)


def test_the_dataloaders_defaults_are_the_tables():
    signature = inspect.signature(stoker.DataLoader)
    for row in ROWS:
        parameter = signature.parameters.get(row["python"])
        assert parameter is not None, row["python"]
        assert parameter.default == row["default"] and type(parameter.default) is type(row["default"]), row["python"]


def test_auto_workers_start_at_half_the_cores_up_to_four():
    assert [_stoker.auto_workers(c) for c in (1, 2, 3, 4, 8, 64)] == [1, 1, 1, 2, 4, 4]
    assert _stoker.buffers_in_flight(2, 4) == 8
    assert _stoker.buffers_in_flight(64, 1024) == 1024


def starved(**pipeline):
    """A window that waits 39 % of the time: the model takes 1,400 samples/s, 4 workers deliver
    850 (decode 71 % of their time), on 16 cores."""
    compute = 8500 / 1400
    window = dict(wait=10 - compute, copy=0.0, compute=compute, steps=100, samples=8500)
    figures = dict(workers=4, cores=16, read=0.6 * 4, decode=7.1 * 4, transform=2.3 * 4, samples=8500,
                   cpu_percent=30.0)
    figures.update(pipeline)
    return _stoker.recommend(window, figures)


def test_advice_comes_as_data_in_the_dataloaders_words():
    changes, line = starved()
    first = changes[0]
    assert (first["python"], first["flag"], first["value"], first["or_more"]) == ("num_workers", "--workers", "8",
                                                                                    False)
    assert first["change"] == "num_workers=8"
    assert first["command_line"] == "--workers 8"
    assert line.startswith("try: num_workers=8 (11 of 16 cores idle)")


def test_deeper_prefetch_and_the_decoded_cache_in_python_words():
    bursts = dict(wait=1.0, copy=0.0, compute=9.0, steps=100, samples=9000)
    fast = dict(workers=4, cores=16, read=0.72, decode=8.52, transform=2.76, samples=9000)
    changes, line = _stoker.recommend(bursts, fast)
    assert line.startswith("try: prefetch_factor=4 (or more) (")
    changes, line = _stoker.recommend(bursts, dict(fast, prefetch_factor=4))
    assert changes[0]["change"] == "prefetch_factor=8" and changes[0]["command_line"] == "--prefetch-factor 8"

    slow = dict(wait=6.0, copy=0.0, compute=4.0, steps=100, samples=4000)
    one_worker = dict(workers=1, cores=2, read=0.6, decode=7.1, transform=2.3, samples=4000, decoded_bytes=4000 * 120e3,
                      dataset_samples=80000, free_ram_bytes=41e9, jpeg_samples=4000)
    changes, line = _stoker.recommend(slow, one_worker)
    words = [c["change"] for c in changes]
    assert words[0] == "cache_decoded_gb=10"  # the 9.6 GB it needs, rounded up
    assert changes[0]["command_line"] == "--cache decoded"
    assert "stoker prepare --data DIR --out NEW_DIR" in words  # a command reads the same everywhere
    assert "--" not in line.split("stoker prepare")[0]


def test_unknown_figures_are_refused():
    with pytest.raises(ValueError, match="unknown figure 'wrokers'"):
        _stoker.recommend(dict(wait=1.0), dict(wrokers=4))
