"""The kernel fuzzer (tests/kernel_fuzzer.py): a bounded campaign, and checks that it can fail."""

import numpy as np
import pytest

from tests import kernel_fuzzer as fuzzer

SEED = 20261201
COUNT = 70  # about 1.5 minutes on 2 cores
MINUTES = 5  # a guard on a slow machine: the test judges what ran by then


@pytest.mark.timeout(900)
def test_bounded_campaign_finds_nothing_new():
    report = fuzzer.campaign(SEED, count=COUNT, minutes=MINUTES)
    print(report.summary())
    assert report.ran > COUNT // 2, report.summary()
    assert not report.findings, "the fuzzer found new failures:\n" + "\n".join(
        f"{sig}\n  seeds {seeds}\n  {report.details[sig][:2000]}"
        for sig, seeds in report.findings.items()
    )
    if report.generated == COUNT:  # the whole fixed set ran: a known finding must still show
        fixed = [k for k in fuzzer.KNOWN if not any(sig.startswith(k) for sig in report.known)]
        assert not fixed, f"known findings no longer show; remove them from KNOWN: {fixed}"


def test_generation_is_deterministic_and_varied():
    first = [fuzzer.generate(fuzzer.case_seed(3, i)) for i in range(30)]
    again = [fuzzer.generate(fuzzer.case_seed(3, i)) for i in range(30)]
    assert first == again
    text = "".join(case["kernel"] for case in first)
    for feature in (
        "dk.atomic.add",
        "dk.atomic.sub",
        "dk.atomic.min",
        "dk.atomic.max",
        "dk.atomic.exchange",
        "dk.atomic.compare_exchange",
        "dk.barrier(",
        "dk.sub_group.",
        "dk.local.array",
        "dk.private.array",
        "@dk.func",
        "break",
        "continue",
        "while",
        "math.",
        "np.float64((",
    ):
        assert feature in text, feature
    for dtype in fuzzer.ATOMIC_DTYPES:
        assert f"ga_{dtype}" in text or f"pa_{dtype}" in text, dtype


def test_sycl_2020_cases_use_the_new_constructs():
    cases = [fuzzer.generate(fuzzer.case_seed(3, i)) for i in range(120)]
    sycl = [case for case in cases if case["sycl"]]
    assert 0.25 < len(sycl) / len(cases) < 0.55
    assert all(case["kernel"].count("def kern(it, ") == 1 for case in sycl)
    assert not any("def kern(it, " in case["kernel"] for case in cases if not case["sycl"])
    text = "".join(case["kernel"] for case in sycl)
    for feature in (
        "dk.reduce_over_group(wg",
        "dk.reduce_over_group(sg",
        "dk.inclusive_scan_over_group(",
        "dk.exclusive_scan_over_group(",
        "dk.group_broadcast(wg",
        "_of_group(",
        "dk.select_from_group(sg",
        "dk.shift_group_left(sg",
        "dk.group_barrier(wg",
        "dk.atomic_fence(",
        "dk.AtomicRef(ga_",
        "dk.AtomicRef(pa_",
        "memory_order=dk.MemoryOrder.",
        "memory_scope=dk.MemoryScope.",
        ".fetch_xor(",
        ".load(",
        ".store(",
        "dk.LocalAccessor argument",
        "* 4099 +",
        "np.uint64(",
    ):
        assert feature in text, feature
    assert any(case["readonly"] for case in sycl) and any(case["accessors"] for case in sycl)
    assert {case["sub_group_size"] for case in sycl} == {None, *fuzzer.SUB_GROUP_SIZES}
    assert any("wg = " not in case["kernel"] for case in sycl)  # item methods alone


def test_group_algorithms_in_the_model_match_numpy():
    """The model's collectives (run_model answers each group's requests) against NumPy."""
    values = [5, -3, 8, 1]
    ask = [("wg", "inclusive", "plus", v, None) for v in values]
    assert fuzzer._collective(ask) == list(np.cumsum(values))
    ask = [("wg", "exclusive", "maximum", v, 2) for v in values]
    assert fuzzer._collective(ask) == [2, 5, 5, 8]
    ask = [("sg", "reduce", "multiplies", v, None) for v in values]
    assert fuzzer._collective(ask) == [int(np.prod(values))] * 4
    ask = [("sg", "shift", v, 1) for v in values]
    assert fuzzer._collective(ask) == [-3, 8, 1, None]
    assert fuzzer._sub_group_of((1, 5), (2, 6), 4) == (3, 1)  # rows of 6: lanes 4 + 2


def test_a_wrong_model_is_reported_as_a_mismatch():
    case = dict(fuzzer.generate(fuzzer.case_seed(SEED, 0)), index=0)
    case["model"] = case["model"].replace("ST(out_i, (gid, 0), ", "ST(out_i, (gid, 0), 1 + ")
    runner = fuzzer.Runner()
    try:
        result = runner.run(case)
    finally:
        runner.close()
    assert result["outcome"] == "mismatch", result
    assert result["detail"].startswith("out_i:")


def test_a_dying_child_is_reported_as_an_abort_and_replaced():
    crash = "import os, signal\nos.kill(os.getpid(), signal.SIGABRT)\n"
    case = dict(fuzzer.generate(fuzzer.case_seed(SEED, 1)), index=1)
    runner = fuzzer.Runner()
    try:
        died = runner.run(dict(case, kernel=crash + case["kernel"]))
        after = runner.run(case)
    finally:
        runner.close()
    assert died["outcome"] == "abort" and "exit -6" in died["detail"], died
    assert runner.restarts == 1
    assert after["outcome"] != "abort", after


def _split_units(model: list[str], start: int, end: int) -> set[str]:
    """The units (Generator.emit) that dropping lines `start:end` would leave in part."""
    dropped = {fuzzer.unit_of(line) for line in model[start:end]} - {None}
    kept = {fuzzer.unit_of(line) for line in model[:start] + model[end:]}
    return dropped & kept


def test_reduction_drops_only_whole_units():
    cases = [fuzzer.generate(fuzzer.case_seed(SEED, i)) for i in range(40)]
    text = "".join(case["kernel"] for case in cases)
    for pattern in ("while True:", "dk.private.array", "dk.local.array"):  # each makes units
        assert pattern in text, pattern
    split = 0
    for case in cases:
        model = case["model"].splitlines()
        assert len(model) == len(case["kernel"].splitlines())
        for at in range(len(model)):
            start, end = fuzzer._whole_units(model, at, at + 1)
            assert not _split_units(model, start, end), (at, model[at])
            split += bool(_split_units(model, at, at + 1))
    assert split, "dropping single lines never split a unit: the test shows nothing"
