import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATA_ENV = "SPACY_RHETORIC_DATA"


def _data_root() -> Path:
    return Path(os.environ.get(DATA_ENV, REPO.parent / "shared" / "data"))


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
