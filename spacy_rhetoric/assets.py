"""Project assets: download them with weasel, or link them from a local mirror."""

import os
from pathlib import Path
from typing import Iterator, Optional, Union

ASSETS_DIR = "assets"
# the environment variable naming the local data mirror
DATA_ENV = "SPACY_RHETORIC_DATA"
# where a checkout finds the mirror without the variable: ../shared/data beside it
CHECKOUT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_root(explicit: Optional[Union[str, Path]] = None, required: bool = True) -> Optional[Path]:
    """The local data mirror: the path given, else ``$SPACY_RHETORIC_DATA``, else
    ``../shared/data`` beside the checkout where it exists.

    explicit (Optional[Union[str, Path]]): a path given on the command line.
    required (bool): raise if there is none (False: return None).
    RETURNS (Optional[Path]): the mirror's directory.
    RAISES FileNotFoundError: none is found and ``required``.
    """
    if explicit:
        return Path(explicit)
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    if CHECKOUT_DATA.is_dir():
        return CHECKOUT_DATA
    if required:
        raise FileNotFoundError(
            f"No data mirror: set ${DATA_ENV} to its directory, or fetch the datasets with "
            "'python -m spacy_rhetoric corpus assets project.yml'"
        )
    return None


def fetch_assets(project_file: Path, mirror: Optional[str] = None) -> Iterator[str]:
    """Make every asset of a project available.

    project_file (Path): the project.yml.
    mirror (Optional[str]): a directory laid out like ``assets/``; None downloads.
    YIELDS (str): one line per asset on what was done.
    """
    from weasel.util import get_checksum, load_project_config

    project_dir = Path(project_file).resolve().parent
    if mirror is None:
        from weasel.cli.assets import project_assets

        project_assets(project_dir)
        yield "fetched the assets from their public sources"
        return
    mirror_dir = Path(mirror).resolve()
    if not mirror_dir.is_dir():
        raise FileNotFoundError(f"data mirror {mirror_dir} is not a directory")
    config = load_project_config(project_dir)
    for asset in config.get("assets", []):
        dest = Path(asset["dest"])
        if dest.parts[0] != ASSETS_DIR:
            raise ValueError(f"asset dest {dest} is not under {ASSETS_DIR}/")
        source = mirror_dir.joinpath(*dest.parts[1:])
        if not source.exists():
            raise FileNotFoundError(f"asset {dest}: not in the mirror ({source})")
        checksum = asset.get("checksum")
        if checksum and get_checksum(source) != checksum:
            raise ValueError(f"asset {dest}: the mirror's copy {source} has a different checksum")
        target = project_dir / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            raise ValueError(f"asset {dest}: {target} exists and is a directory; remove it first")
        os.symlink(source, target, target_is_directory=source.is_dir())
        yield f"linked {dest} -> {source}"
