from ..corpora.parallelisms import (
    CHIASTIC,
    DEFAULT_SPANS_KEY,
    SYNCHYSTIC,
    UNTYPED,
    Parallelism,
    assign_strata,
    get_parallelisms,
    set_parallelisms,
)

__all__ = [
    "CHIASTIC",
    "DEFAULT_SPANS_KEY",
    "SYNCHYSTIC",
    "UNTYPED",
    "Parallelism",
    "assign_strata",
    "get_parallelisms",
    "set_parallelisms",
]
