"""Accuracy of MinHashDeduplicator (issue section 5), with fixed seeds so every run is the same:

1. the signature estimate against the exact shingle Jaccard over many pairs: the mean absolute
   error and the bias are within the binomial error of num_perm permutations;
2. the LSH candidate rate against the banding S-curve 1 - (1 - p^rows)^bands, where
   p = J + (1 - J) / 2^value_bits (the stored values are the low value_bits bits);
3. a corpus with injected near-duplicates (word substitutions, insertions, deletions, paragraph
   reorderings, boilerplate): recall >= 0.95 on pairs with Jaccard >= 0.9 and false positives
   <= 0.5% on pairs with Jaccard <= 0.5.

Run with ``-s`` to see the measured figures (docs/minhash.md quotes them).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import pytest

import luminamoon.data as lmd

NUM_PERM = 64


def binomial_abs_error(j: float, n: int) -> tuple[float, float]:
    """E|K/n - j| and Var|K/n - j| for K ~ Binomial(n, j)."""
    mean = 0.0
    second = 0.0
    for k in range(n + 1):
        p = math.comb(n, k) * j**k * (1 - j) ** (n - k)
        e = abs(k / n - j)
        mean += p * e
        second += p * e * e
    return mean, second - mean * mean


def pair(rng: random.Random, tag: str, shared: int, total: int) -> tuple[str, str]:
    """Two token sets over their own vocabulary with exactly `shared` of `total` in common."""
    own = total - shared
    left = own // 2
    tokens = [f"{tag}t{i}" for i in range(total)]
    rng.shuffle(tokens)
    common = tokens[:shared]
    a = common + tokens[shared : shared + left]
    b = common + tokens[shared + left :]
    rng.shuffle(a)
    rng.shuffle(b)
    return " ".join(a), " ".join(b)


def test_estimate_tracks_exact_jaccard() -> None:
    rng = random.Random(20240501)
    d = lmd.MinHashDeduplicator(num_perm=NUM_PERM, ngram=1)
    errors = []
    expected_mae = 0.0
    variance_of_mae = 0.0
    bias_variance = 0.0
    n = 600
    for i in range(n):
        total = 120
        shared = rng.randrange(total + 1)
        a, b = pair(rng, f"p{i}", shared, total)
        exact = d.jaccard(a, b)
        assert exact == shared / total
        estimate = d.similarity(a, b)
        errors.append(estimate - exact)
        mean, var = binomial_abs_error(exact, NUM_PERM)
        expected_mae += mean / n
        variance_of_mae += var / n**2
        bias_variance += exact * (1 - exact) / NUM_PERM / n**2
    mae = sum(abs(e) for e in errors) / n
    bias = sum(errors) / n
    print(
        f"\n[accuracy] estimate vs exact, {n} pairs, num_perm={NUM_PERM}: MAE {mae:.4f} "
        f"(binomial expectation {expected_mae:.4f} +- {math.sqrt(variance_of_mae):.4f}), "
        f"bias {bias:+.4f} (+- {math.sqrt(bias_variance):.4f})"
    )
    assert mae <= expected_mae + 3 * math.sqrt(variance_of_mae)
    assert abs(bias) <= 3 * math.sqrt(bias_variance)


def test_candidate_rate_follows_the_s_curve() -> None:
    rng = random.Random(77)
    d = lmd.MinHashDeduplicator(num_perm=NUM_PERM, ngram=1)
    assert (d.bands, d.rows, d.value_bits) == (7, 9, 4)
    targets = [0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]
    per_bin = 120
    total = 100
    firsts, seconds, js = [], [], []
    for t in targets:
        for k in range(per_bin):
            a, b = pair(rng, f"j{t}k{k}", round(t * total), total)
            firsts.append(a)
            seconds.append(b)
            js.append(round(t * total) / total)
    assert all(d.filter_batch(firsts))  # no two pairs share a token: all distinct
    report = []
    for bin_index in range(len(targets)):
        hits = 0
        for k in range(per_bin):
            i = bin_index * per_bin + k
            hits += i in d.query(seconds[i], verify=False)
        j = js[bin_index * per_bin]
        p = j + (1 - j) / 2**d.value_bits
        expected = 1 - (1 - p**d.rows) ** d.bands
        sigma = math.sqrt(expected * (1 - expected) / per_bin)
        rate = hits / per_bin
        report.append(f"J={j:.2f}: {rate:.3f} (curve {expected:.3f})")
        assert abs(rate - expected) <= 3 * sigma + 0.02, report[-1]
    print("\n[accuracy] candidate rate vs S-curve: " + "; ".join(report))


# ---------------------------------------------------------------------------------------------
# Injected near-duplicates
# ---------------------------------------------------------------------------------------------

BOILERPLATE = (
    "This website uses cookies to improve your experience. By continuing to browse you agree "
    "to our privacy policy and terms of service. Subscribe to our newsletter for updates."
)


@dataclass
class Variant:
    text: str
    original: int
    edit: str


def zipf_vocabulary(rng: random.Random, size: int) -> tuple[list[str], list[float]]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(size)]
    weights = [1.0 / (rank + 1) ** 0.9 for rank in range(size)]
    return vocab, weights


def document(rng: random.Random, vocab: list[str], weights: list[float]) -> list[list[str]]:
    return [rng.choices(vocab, weights, k=rng.randint(40, 90)) for _ in range(rng.randint(3, 6))]


def edit(
    rng: random.Random, paragraphs: list[list[str]], vocab: list[str]
) -> tuple[list[list[str]], str]:
    paras = [list(p) for p in paragraphs]
    kind = rng.choice(["substitute", "insert", "delete", "reorder", "boilerplate", "mixed"])
    count = rng.choice([1, 1, 2, 3, 4, 6, 10, 15, 25, 40, 60, 90])

    def positions() -> list[tuple[int, int]]:
        return [
            (pi, rng.randrange(len(paras[pi])))
            for pi in (rng.randrange(len(paras)) for _ in range(count))
        ]

    if kind in ("substitute", "mixed"):
        for pi, wi in positions():
            paras[pi][wi] = rng.choice(vocab) + "x"
    if kind in ("insert", "mixed"):
        for pi, wi in positions():
            paras[pi].insert(wi, rng.choice(vocab) + "y")
    if kind in ("delete", "mixed"):
        for pi, _ in positions():
            if len(paras[pi]) > 5:
                del paras[pi][rng.randrange(len(paras[pi]))]
    if kind in ("reorder", "mixed"):
        rng.shuffle(paras)
    if kind in ("boilerplate", "mixed"):
        extra = BOILERPLATE.split() * max(1, count // 25)
        if rng.random() < 0.5:
            paras.insert(0, extra)
        else:
            paras.append(extra)
    return paras, f"{kind}x{count}"


def render(paragraphs: list[list[str]]) -> str:
    return "\n\n".join(" ".join(p).capitalize() + "." for p in paragraphs)


@pytest.fixture(scope="module")
def injected() -> dict[str, object]:
    rng = random.Random(31337)
    vocab, weights = zipf_vocabulary(rng, 6000)
    originals = [document(rng, vocab, weights) for _ in range(300)]
    variants = []
    for i, doc in enumerate(originals):
        for _ in range(4):
            paras, how = edit(rng, doc, vocab)
            variants.append(Variant(render(paras), i, how))
    unrelated = [render(document(rng, vocab, weights)) for _ in range(300)]
    texts = [render(doc) for doc in originals]
    d = lmd.MinHashDeduplicator()
    kept = d.filter_batch(texts)
    ids = {}
    for i, keep in enumerate(kept):
        if keep:
            ids[len(ids)] = i
    rows = []
    for v in variants:
        j = d.jaccard(texts[v.original], v.text)
        found = {ids[doc] for doc in d.query(v.text)}
        rows.append((j, v.original in found, found - {v.original}, v.edit))
    unrelated_hits = sum(bool(d.query(t)) for t in unrelated)
    return {"kept": kept, "rows": rows, "unrelated_hits": unrelated_hits, "unrelated": 300}


def test_injected_near_duplicates(injected: dict[str, object]) -> None:
    kept = injected["kept"]
    rows = injected["rows"]
    assert isinstance(kept, list)
    assert isinstance(rows, list)
    assert all(kept), "the originals are unrelated: all must be kept"
    high = [r for r in rows if r[0] >= 0.9]
    low = [r for r in rows if r[0] <= 0.5]
    recall = sum(r[1] for r in high) / len(high)
    false_pos = sum(r[1] for r in low) + injected["unrelated_hits"]  # type: ignore[operator]
    low_pairs = len(low) + injected["unrelated"]  # type: ignore[operator]
    wrong_matches = sum(bool(r[2]) for r in rows)
    print(
        f"\n[accuracy] injected near-duplicates: recall {recall:.4f} on {len(high)} pairs with "
        f"J >= 0.9; false positives {false_pos}/{low_pairs} = {false_pos / low_pairs:.4%} on "
        f"pairs with J <= 0.5 ({len(low)} edited + {injected['unrelated']} unrelated); "
        f"{sum(0.5 < r[0] < 0.9 for r in rows)} pairs in between; matches with another "
        f"original: {wrong_matches}"
    )
    assert len(high) >= 200
    assert len(low) >= 200
    assert recall >= 0.95
    assert false_pos / low_pairs <= 0.005
    assert wrong_matches == 0
