"""The kernel fuzzer (tests/kernel_fuzzer.py): a bounded campaign, and checks that it can fail."""

import pytest

from tests import kernel_fuzzer as fuzzer

SEED = 20261201
COUNT = 100  # about 2 minutes on 2 cores
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


def _cas_loops(kernel: list[str], model: list[str], start: int, end: int) -> tuple[int, int]:
    """CAS loops in a kernel's lines without `start:end`, and the model's `A_add`s that
    stand for one."""
    kernel, model = kernel[:start] + kernel[end:], model[:start] + model[end:]
    runs = sum(
        1
        for i in range(1, len(model))
        if model[i].strip() == fuzzer.CAS_LINE and model[i - 1].strip() != fuzzer.CAS_LINE
    )
    return sum(line.strip() == "while True:" for line in kernel), runs


def test_reduction_drops_a_cas_loop_only_whole():
    cases = [fuzzer.generate(fuzzer.case_seed(SEED, i)) for i in range(40)]
    cases = [c for c in cases if "while True:" in c["kernel"]]
    assert cases, "no generated case has a CAS loop"
    broken = 0
    for case in cases:
        kernel, model = case["kernel"].splitlines(), case["model"].splitlines()
        for at in range(len(kernel)):
            start, end = fuzzer._whole_units(model, at, at + 1)
            loops, stand_ins = _cas_loops(kernel, model, start, end)
            assert loops == stand_ins, (at, kernel[at])
            loops, stand_ins = _cas_loops(kernel, model, at, at + 1)
            broken += loops != stand_ins
    assert broken, "dropping single lines never split a loop: the test shows nothing"
