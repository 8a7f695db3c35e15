import os
from pathlib import Path

# The README runs the tests in two processes (pytest-xdist, `-n 2`) on two cores: one
# thread each, for torch here and for the CLI commands the tests start.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")

import pytest  # noqa: E402

from spacy_rhetoric.assets import CHECKOUT_DATA, DATA_ENV, data_root  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load_benchmark(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def load_benchmark():
    """A function: NAME -> the module of benchmarks/NAME.py (the scripts are not a
    package)."""
    return _load_benchmark


def _data_root() -> Path:
    return data_root(required=False) or CHECKOUT_DATA


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def data_dir():
    """The real datasets (the local mirror). Data tests skip when it is absent."""

    def get(name: str) -> Path:
        path = _data_root() / name
        if not path.exists():
            pytest.skip(
                f"dataset mirror not found at {path} (set {DATA_ENV} to the data directory)"
            )
        return path

    return get


@pytest.fixture
def encoder_runs(monkeypatch):
    """A list that records, per run of any FrozenEncoder, the number of docs encoded."""
    from spacy_rhetoric.encoders.vectors import FrozenEncoder

    runs = []
    compute = FrozenEncoder._compute

    def counted(self, docs):
        runs.append(len(docs))
        return compute(self, docs)

    monkeypatch.setattr(FrozenEncoder, "_compute", counted)
    return runs
