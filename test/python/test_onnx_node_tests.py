"""ONNX's backend tests (Debian's libonnx-testdata) under dpc's interpreter.

Every test of every kind (one-op node tests, PyTorch's converted modules and
operators, small hand-made graphs) is one pytest item. A test that uses an op type the importer
has no converter for is skipped with the op types as its reason; every other
test runs through `dpc-run --interpret` and must match ONNX's reference
outputs (rtol 1e-4 / atol 1e-5 for floats, exact otherwise), unless
onnx_node_known_gaps.txt lists it, in which case it must still fail (strict
xfail: a listed test that passes fails and says to remove its line).
conftest.py prints the counts at the end of the run.
docs/onnx-node-tests.md explains how to regenerate the list.
"""

import os

import pytest

from dpc import onnx_node_tests as nt

TESTS = nt.list_tests()

pytestmark = pytest.mark.skipif(
    not TESTS, reason="libonnx-testdata is not installed (scripts/install-deps.sh)")


@pytest.fixture(scope="session")
def unsupported():
    """{test directory: its op types that the importer does not support}."""
    ops = {d: nt.op_types(os.path.join(d, "model.onnx")) for d in TESTS}
    missing = nt.unsupported_op_types(o for names in ops.values() for o in names)
    return {d: [o for o in names if o in missing] for d, names in ops.items()}


@pytest.fixture(scope="session")
def known_gaps():
    return nt.read_gaps()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("onnx-node"))


@pytest.mark.parametrize("test_dir", TESTS, ids=nt.test_name)
def test_node(test_dir, unsupported, known_gaps, workdir):
    if unsupported[test_dir]:
        pytest.skip("unsupported op types: " + ", ".join(unsupported[test_dir]))
    result = nt.check(test_dir, workdir)
    if result.name in known_gaps:
        if result.reason is None:
            pytest.fail("%s passes now: remove it from %s"
                        % (result.name, os.path.relpath(nt.GAPS_FILE)), pytrace=False)
        pytest.xfail(result.reason)
    if result.reason is not None:
        pytest.fail("%s: %s\nreproduce: %s\n(or list it in %s)"
                    % (result.name, result.reason, nt.shell(result.command),
                       os.path.relpath(nt.GAPS_FILE)), pytrace=False)


def test_known_gaps_are_supported_node_tests(unsupported, known_gaps):
    # A stale line (a renamed test, or one now blocked by an unsupported op
    # type) would otherwise sit in the list unnoticed.
    supported = {nt.test_name(d) for d, lacking in unsupported.items() if not lacking}
    stale = sorted(set(known_gaps) - supported)
    if stale:
        pytest.fail("%s lists tests that are not supported tests; remove them: %s"
                    % (os.path.relpath(nt.GAPS_FILE), ", ".join(stale)), pytrace=False)
