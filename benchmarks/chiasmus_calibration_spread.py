"""How far does a calibrated chiasmus rate carry to unseen Latin texts? The Latin rules
are calibrated on 24 Tesserae texts together (at most 1 candidate per 1,000 tokens
reaches the bias: ``spacy_rhetoric/chiasmus/calibrate.py``); this measures, at that
bias, the rate of each calibration text and of the three held-out ones, and the rate
that the same procedure gives a text it was not calibrated on:

- leave one text out: calibrate on 23 texts, measure the 24th, for each text;
- three texts out (as the held-out part is): ``--draws`` random sets of 3 of the 24
  texts, calibrated on the other 21, the rate over the 3 (mean, sd, share above the
  target, 90th percentile).

Each text tagged by the shipped ``la_rhetoric_base`` with the finder's default search,
as ``chiasmus calibrate la`` does (about 75 s for the 27 texts on one thread).

    python benchmarks/chiasmus_calibration_spread.py assets \
        --output benchmarks/results/chiasmus_calibration_spread.json
"""

import argparse
import time
from pathlib import Path

import numpy
import spacy
import srsly
from spacy.util import registry

from spacy_rhetoric.chiasmus.calibrate import (
    LATIN_CALIBRATION,
    LATIN_HELD_OUT,
    LATIN_TOKENS,
    _latin_texts,
)
from spacy_rhetoric.chiasmus.calibration import (
    DEFAULT_PER_1000,
    LANGUAGE_WEIGHTS,
    rate_bias,
    running_text_scores,
)
from spacy_rhetoric.chiasmus.component import DEFAULT_SUGGESTER


def rate(scores: numpy.ndarray, tokens: int, bias: float) -> float:
    return 1000.0 * int((scores >= bias).sum()) / tokens


def pooled_bias(parts, names, per_1000, tops=None):
    """The bias of these texts pooled; ``tops``: each text's best scores, enough of them
    (the rate's cut falls within every text's best ``allowed + 1``), instead of all."""
    source = tops or {name: parts[name][0] for name in names}
    scores = numpy.concatenate([source[name] for name in names])
    return rate_bias(scores, sum(parts[name][1] for name in names), per_1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path, help="the data mirror (assets)")
    parser.add_argument("--base", default="la_rhetoric_base")
    parser.add_argument("--per-1000", type=float, default=DEFAULT_PER_1000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()

    start = time.perf_counter()
    nlp = spacy.load(args.base)
    suggest = registry.resolve({"suggester": DEFAULT_SUGGESTER})["suggester"].suggest
    parts = {}
    for name in (*LATIN_CALIBRATION, *LATIN_HELD_OUT):
        texts = _latin_texts(args.data, [name], LATIN_TOKENS)
        parts[name] = running_text_scores(nlp.pipe(texts), suggest, LANGUAGE_WEIGHTS["la"])
    calibration = list(LATIN_CALIBRATION)
    bias = pooled_bias(parts, calibration, args.per_1000)
    per_text = {name: round(rate(*parts[name], bias), 3) for name in parts}
    held = list(LATIN_HELD_OUT)
    held_rate = 1000.0 * sum(int((parts[n][0] >= bias).sum()) for n in held)
    held_rate /= sum(parts[n][1] for n in held)

    # no left-out set lets through more than the whole calibration part would
    cap = int(args.per_1000 * sum(parts[n][1] for n in calibration) / 1000) + 2
    tops = {name: -numpy.sort(-parts[name][0])[:cap] for name in calibration}
    one_out = {}
    for name in calibration:
        rest = [other for other in calibration if other != name]
        one_out[name] = round(rate(*parts[name], pooled_bias(parts, rest, args.per_1000, tops)), 3)
    rng = numpy.random.default_rng(args.seed)
    draws = []
    for _ in range(args.draws):
        chosen = set(rng.choice(len(calibration), 3, replace=False).tolist())
        out = [calibration[i] for i in sorted(chosen)]
        rest = [calibration[i] for i in range(len(calibration)) if i not in chosen]
        draw_bias = pooled_bias(parts, rest, args.per_1000, tops)
        reported = sum(int((parts[n][0] >= draw_bias).sum()) for n in out)
        draws.append(1000.0 * reported / sum(parts[n][1] for n in out))
    draws = numpy.asarray(draws)
    calibration_rates = numpy.asarray([per_text[n] for n in calibration])
    one_out_rates = numpy.asarray(list(one_out.values()))
    result = {
        "base": args.base,
        "per_1000": args.per_1000,
        "bias": round(float(bias), 4),
        "tokens": {name: int(parts[name][1]) for name in parts},
        "rate_per_text": per_text,
        "calibration_texts": {
            "mean": round(float(calibration_rates.mean()), 3),
            "sd": round(float(calibration_rates.std(ddof=1)), 3),
            "min": float(calibration_rates.min()),
            "max": float(calibration_rates.max()),
            "above_target": int((calibration_rates > args.per_1000).sum()),
        },
        "held_out_rate": round(held_rate, 3),
        "leave_one_text_out": {
            "rates": one_out,
            "mean": round(float(one_out_rates.mean()), 3),
            "sd": round(float(one_out_rates.std(ddof=1)), 3),
            "above_target": int((one_out_rates > args.per_1000).sum()),
        },
        "three_texts_out": {
            "draws": args.draws,
            "seed": args.seed,
            "mean": round(float(draws.mean()), 3),
            "sd": round(float(draws.std(ddof=1)), 3),
            "share_above_target": round(float((draws > args.per_1000).mean()), 3),
            "percentile_90": round(float(numpy.percentile(draws, 90)), 3),
        },
        "seconds": round(time.perf_counter() - start, 1),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, result)
    print(
        f"bias {bias:.3f}; per text {calibration_rates.mean():.2f} +- "
        f"{calibration_rates.std(ddof=1):.2f} (max {calibration_rates.max():.2f}); held out "
        f"{held_rate:.2f}; one text out {one_out_rates.mean():.2f}; three texts out "
        f"{draws.mean():.2f} +- {draws.std(ddof=1):.2f}, above {args.per_1000:g} in "
        f"{(draws > args.per_1000).mean():.0%} -> {args.output}"
    )


if __name__ == "__main__":
    main()
