"""Query-based parser evaluation (after Kulick et al.): run named dependency queries over
gold and predicted treebanks and compare what they find.

Query files (YAML or JSON) hold a list of named queries; each query has one or more
spaCy ``DependencyMatcher`` patterns (a sentence matches the query if any pattern
matches)::

    queries:
      - name: neg_decl_do
        description: negative declarative with do-support ("I did not go")
        patterns:
          - - {RIGHT_ID: verb, RIGHT_ATTRS: {}}
            - {LEFT_ID: verb, REL_OP: ">", RIGHT_ID: aux, RIGHT_ATTRS: {LEMMA: do}}

The first node of a pattern is its **anchor**. Gold and predicted docs are aligned token
by token (their token texts must be identical; how they are cut into docs may differ).
A query instance ("hit") is identified

- at level ``"anchor"`` (default) by the anchor token: an instance is found correctly
  when the predicted parse matches the query with the same anchor token as the gold parse;
- at level ``"sentence"`` by the gold sentence that contains the anchor: a sentence counts
  once however many matches it has.

Per query: ``gold_hits`` (instances in the gold parse), ``matches`` (instances in the
predicted parse), ``correct`` (both), ``misses`` (gold only), ``false_alarms`` (predicted
only), precision = correct / matches, recall = correct / gold_hits and their F1. A ratio
with a zero denominator is undefined: None in results, left out of fold means.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import numpy
import yaml
from spacy.matcher import DependencyMatcher
from spacy.scorer import PRFScore
from spacy.tokens import Doc
from spacy.vocab import Vocab

PathLike = Union[str, Path]
LEVELS = ("anchor", "sentence")
COUNT_KEYS = ("gold_hits", "matches", "correct", "misses", "false_alarms")
SCORE_KEYS = ("precision", "recall", "f1")
QUERY_DIR = Path(__file__).parent / "queries"


class QueryFileError(ValueError):
    """A query file is malformed; the message names the file and the query."""


@dataclass
class Query:
    """A named query: one or more DependencyMatcher patterns.

    name (str): unique name.
    patterns (List[List[Dict[str, Any]]]): DependencyMatcher patterns.
    description (str): what it finds.
    """

    name: str
    patterns: List[List[Dict[str, Any]]]
    description: str = ""


def bundled_queries() -> List[Path]:
    """RETURNS (List[Path]): the query files shipped with the package."""
    return sorted(QUERY_DIR.glob("*.yml"))


def load_queries(path: PathLike, vocab: Optional[Vocab] = None) -> List[Query]:
    """Read and validate a query file (.yml/.yaml or .json). A bare name such as
    "en_diagnostics" refers to a bundled file.

    path (PathLike): the file.
    vocab (Optional[Vocab]): vocab to validate the patterns with.
    RETURNS (List[Query]): the queries, in file order.
    """
    path = Path(path)
    if not path.exists() and (QUERY_DIR / f"{path}.yml").exists():
        path = QUERY_DIR / f"{path}.yml"
    text = path.read_text(encoding="utf8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise QueryFileError(f"{path}: cannot parse: {err}") from err
    entries = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise QueryFileError(f"{path}: expected a non-empty list under 'queries'")
    queries: List[Query] = []
    seen: Set[str] = set()
    for i, entry in enumerate(entries):
        where = f"{path}: query {i + 1}"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise QueryFileError(f"{where}: each query needs a 'name'")
        name = entry["name"]
        where = f"{path}: query '{name}'"
        if name in seen:
            raise QueryFileError(f"{where}: duplicate name")
        seen.add(name)
        patterns = entry.get("patterns")
        if patterns is None and "pattern" in entry:
            patterns = [entry["pattern"]]
        if not isinstance(patterns, list) or not patterns:
            raise QueryFileError(f"{where}: needs 'patterns' (a list of patterns) or 'pattern'")
        for pattern in patterns:
            if not isinstance(pattern, list) or not all(isinstance(n, dict) for n in pattern):
                raise QueryFileError(f"{where}: a pattern is a list of node dicts")
        queries.append(Query(name, patterns, str(entry.get("description", ""))))
    # let spaCy validate the patterns, naming the query that fails
    vocab = vocab if vocab is not None else Vocab()
    for query in queries:
        try:
            DependencyMatcher(vocab, validate=True).add(query.name, query.patterns)
        except (ValueError, KeyError) as err:
            raise QueryFileError(f"{path}: query '{query.name}': invalid pattern: {err}") from err
    return queries


class QueryRunner:
    """Run queries over docs and collect their instances."""

    def __init__(self, queries: Sequence[Query], vocab: Vocab) -> None:
        self.queries = list(queries)
        self.vocab = vocab
        self.matcher = DependencyMatcher(vocab)
        for query in self.queries:
            self.matcher.add(query.name, query.patterns)

    def anchors(self, doc: Doc) -> Dict[str, Set[int]]:
        """The anchor tokens of every query's matches in one doc.

        RETURNS (Dict[str, Set[int]]): token indices per query name.
        """
        found: Dict[str, Set[int]] = {query.name: set() for query in self.queries}
        if len(doc) == 0:
            return found
        for match_id, token_ids in self.matcher(doc):
            found[self.vocab.strings[match_id]].add(token_ids[0])
        return found


@dataclass
class QueryResult:
    """Counts and scores of one query on one gold/predicted pair."""

    name: str
    gold_hits: int
    matches: int
    correct: int
    precision: Optional[float]
    recall: Optional[float]
    f1: Optional[float]
    misses: List[Any] = field(default_factory=list)
    false_alarms: List[Any] = field(default_factory=list)

    def to_dict(self, instances: bool = False) -> Dict[str, Any]:
        result = {
            "gold_hits": self.gold_hits,
            "matches": self.matches,
            "correct": self.correct,
            "misses": len(self.misses),
            "false_alarms": len(self.false_alarms),
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }
        if instances:
            result["miss_instances"] = self.misses
            result["false_alarm_instances"] = self.false_alarms
        return result


def _ratio(a: int, b: int) -> Optional[float]:
    return a / b if b else None


def _f1(correct: int, n_pred: int, n_gold: int) -> Optional[float]:
    """F1 through spaCy's PRFScore; None where precision or recall is undefined."""
    if not n_pred or not n_gold:
        return None
    return PRFScore(tp=correct, fp=n_pred - correct, fn=n_gold - correct).fscore


def _token_stream(docs: Sequence[Doc]) -> List[str]:
    return [token.text for doc in docs for token in doc]


def _check_alignment(gold: Sequence[Doc], pred: Sequence[Doc]) -> None:
    gold_tokens, pred_tokens = _token_stream(gold), _token_stream(pred)
    if gold_tokens == pred_tokens:
        return
    for i, (g, p) in enumerate(zip(gold_tokens, pred_tokens)):
        if g != p:
            context = " ".join(gold_tokens[max(0, i - 5) : i + 5])
            raise ValueError(
                f"queries: gold and predicted tokens differ at token {i}: {g!r} vs {p!r} "
                f"(gold context: '{context}'); evaluate predictions made on the gold tokens"
            )
    raise ValueError(
        f"queries: gold has {len(gold_tokens)} tokens, predicted {len(pred_tokens)}; "
        "evaluate predictions made on the gold tokens"
    )


def _instances(
    queries: Sequence[Query], docs: Sequence[Doc], level: str, sentence_of: numpy.ndarray
) -> Dict[str, Set[int]]:
    """Instance keys per query: global anchor token index, or gold sentence index."""
    found: Dict[str, Set[int]] = {query.name: set() for query in queries}
    runners: Dict[int, QueryRunner] = {}  # one per vocab (converted CoNLL-U has its own)
    offset = 0
    for doc in docs:
        runner = runners.get(id(doc.vocab))
        if runner is None:
            runner = runners[id(doc.vocab)] = QueryRunner(queries, doc.vocab)
        for name, anchors in runner.anchors(doc).items():
            keys = [offset + anchor for anchor in anchors]
            if level == "sentence":
                keys = [int(sentence_of[key]) for key in keys]
            found[name].update(keys)
        offset += len(doc)
    return found


def _sentence_index(gold: Sequence[Doc]) -> Tuple[numpy.ndarray, List[Dict[str, Any]]]:
    """Gold sentence of every token of the stream, and a description of each sentence."""
    index: List[numpy.ndarray] = []
    described: List[Dict[str, Any]] = []
    for d, doc in enumerate(gold):
        sents = list(doc.sents) if len(doc) else []
        for s, sent in enumerate(sents):
            index.append(numpy.full(len(sent), len(described)))
            record = {"doc": d, "sent": s, "text": sent.text}
            if "sent_id" in doc.user_data and len(sents) == 1:
                record["sent_id"] = doc.user_data["sent_id"]
            described.append(record)
    return (numpy.concatenate(index) if index else numpy.zeros(0, "int64")), described


def evaluate_queries(
    queries: Sequence[Query],
    gold: Sequence[Doc],
    pred: Sequence[Doc],
    level: str = "anchor",
) -> Dict[str, QueryResult]:
    """Compare the instances every query finds in gold and predicted parses.

    queries (Sequence[Query]): the queries.
    gold (Sequence[Doc]): gold-parsed docs.
    pred (Sequence[Doc]): the same tokens, parsed by the system under evaluation.
    level (str): "anchor" or "sentence" (see the module docstring).
    RETURNS (Dict[str, QueryResult]): results per query name, in query order. Misses and
        false alarms are listed as {"sentence": i, "sent_id"?, "token": j, "text": ...}.
    """
    if level not in LEVELS:
        raise ValueError(f"queries: level must be one of {LEVELS}, got {level!r}")
    _check_alignment(gold, pred)
    for name, docs in (("gold", gold), ("predicted", pred)):
        for i, doc in enumerate(docs):
            if len(doc) and not doc.has_annotation("DEP"):
                raise ValueError(f"queries: {name} doc {i} has no dependency parse")
    sentence_of, sentences = _sentence_index(gold)
    sent_starts = numpy.flatnonzero(numpy.diff(sentence_of, prepend=-1))
    gold_found = _instances(queries, gold, level, sentence_of)
    pred_found = _instances(queries, pred, level, sentence_of)
    tokens = _token_stream(gold)

    def describe(key: int) -> Dict[str, Any]:
        sent = key if level == "sentence" else int(sentence_of[key])
        record: Dict[str, Any] = {"sentence": sent}
        if "sent_id" in sentences[sent]:
            record["sent_id"] = sentences[sent]["sent_id"]
        if level == "anchor":
            record["token"] = key - int(sent_starts[sent])
            record["anchor"] = tokens[key]
        record["text"] = sentences[sent]["text"]
        return record

    results: Dict[str, QueryResult] = {}
    for query in queries:
        g, p = gold_found[query.name], pred_found[query.name]
        correct = len(g & p)
        precision, recall = _ratio(correct, len(p)), _ratio(correct, len(g))
        results[query.name] = QueryResult(
            query.name,
            gold_hits=len(g),
            matches=len(p),
            correct=correct,
            precision=precision,
            recall=recall,
            f1=_f1(correct, len(p), len(g)),
            misses=[describe(k) for k in sorted(g - p)],
            false_alarms=[describe(k) for k in sorted(p - g)],
        )
    return results


def aggregate_folds(folds: Sequence[Dict[str, QueryResult]]) -> Dict[str, Dict[str, Any]]:
    """Summarise per-fold query results: summed counts, and mean and sample standard
    deviation of precision, recall and F1 over the folds where they are defined.

    folds (Sequence[Dict[str, QueryResult]]): one evaluate_queries result per fold.
    RETURNS (Dict[str, Dict[str, Any]]): per query: the summed counts, and per score
        {"mean": x, "sd": y, "folds": n} (sd None for fewer than two folds).
    """
    summary: Dict[str, Dict[str, Any]] = {}
    names = list(folds[0]) if folds else []
    for name in names:
        rows = [fold[name].to_dict() for fold in folds]
        entry: Dict[str, Any] = {key: sum(row[key] for row in rows) for key in COUNT_KEYS}
        for key in SCORE_KEYS:
            values = numpy.array([row[key] for row in rows if row[key] is not None], dtype=float)
            entry[key] = {
                "mean": float(values.mean()) if len(values) else None,
                "sd": float(values.std(ddof=1)) if len(values) > 1 else None,
                "folds": int(len(values)),
            }
        summary[name] = entry
    return summary


def pair_fold_files(gold: PathLike, pred: PathLike) -> List[Tuple[Path, Path]]:
    """Pair gold and predicted corpus files: two files give one pair; two directories give
    one pair per .spacy/.conllu file of the gold directory (matched by relative path,
    predicted .spacy for gold .conllu allowed), i.e. one pair per fold.

    RETURNS (List[Tuple[Path, Path]]): (gold, predicted) pairs.
    """
    gold, pred = Path(gold), Path(pred)
    if gold.is_file() and pred.is_file():
        return [(gold, pred)]
    if not (gold.is_dir() and pred.is_dir()):
        raise ValueError(f"queries: {gold} and {pred} must both be files or both directories")
    pairs = []
    for file in sorted(gold.rglob("*")):
        if file.suffix not in (".spacy", ".conllu"):
            continue
        rel = file.relative_to(gold)
        candidates = [pred / rel, (pred / rel).with_suffix(".spacy")]
        match = next((c for c in candidates if c.is_file()), None)
        if match is None:
            raise FileNotFoundError(f"queries: no predictions for {file} in {pred}")
        pairs.append((file, match))
    if not pairs:
        raise FileNotFoundError(f"queries: no .spacy or .conllu files in {gold}")
    return pairs


def run_query_evaluation(
    queries: Sequence[Query],
    pairs: Iterable[Tuple[Path, Path]],
    level: str = "anchor",
    vocab: Optional[Vocab] = None,
) -> Tuple[List[Dict[str, QueryResult]], Dict[str, Dict[str, Any]]]:
    """Evaluate every (gold, predicted) file pair (one per fold) and summarise.

    RETURNS (Tuple[List[Dict[str, QueryResult]], Dict[str, Dict[str, Any]]]): per-fold
        results and the across-fold summary.
    """
    from ..corpora.conllu import default_vocab
    from .io import read_docs

    vocab = vocab if vocab is not None else default_vocab()
    folds = [
        evaluate_queries(queries, read_docs(g, vocab), read_docs(p, vocab), level) for g, p in pairs
    ]
    return folds, aggregate_folds(folds)
