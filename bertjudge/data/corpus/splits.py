"""The corpus's rows: ``generate`` (one split's labelled rows, deterministic for its arguments),
``split_sizes`` (rows per split for a train size) and ``summary`` (a table of a generated corpus)."""

from __future__ import annotations

from collections import Counter

from bertjudge.data.corpus.attacks import ATTACKS
from bertjudge.data.corpus.base import CATEGORY_ORDER, SPLITS, Ctx, make_record
from bertjudge.data.corpus.candidates import MODELS, candidate
from bertjudge.data.corpus.templates import new_item


def generate(split: str, n: int, seed: int = 0, attacks: list[str] | None = None) -> list[dict]:
    """n labelled records of the split, deterministic for (split, n, seed, attacks).

    Each question yields one correct and one wrong candidate; categories rotate, so labels are
    balanced and categories take equal shares. Open QA draws from its own random stream, so the rows
    of the other categories are those they had before it existed. ``attacks`` (all of them in ``adversarial``) makes
    every pair one of these attacks (its wrong kind and the correct counterpart, ``ATTACKS``), with
    ``meta['attack']``: the adversarial suite, or extra training rows of the kinds a judge gets wrong.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    attacks = list(ATTACKS) if attacks is None and split == "adversarial" else attacks
    unknown = sorted(set(attacks or ()) - set(ATTACKS))
    if unknown:
        raise ValueError(f"unknown attacks {unknown}; expected some of {', '.join(ATTACKS)}")
    c, seen, out = Ctx(split, seed), set(), []
    ctxs = {**{cat: c for cat in CATEGORY_ORDER}, "open_qa": Ctx(split, seed, "open_qa")}
    models = list(MODELS)
    i = 0
    while len(out) < n:
        if attacks:
            attack = attacks[i % len(attacks)]
            wrong_kind, right_kind, cats = ATTACKS[attack]
            category = cats[(i // len(attacks)) % len(cats)]
        else:
            attack, wrong_kind, right_kind, category = None, None, None, CATEGORY_ORDER[i % len(CATEGORY_ORDER)]
        i += 1
        cc = ctxs[category]
        for _ in range(100):
            item = new_item(cc, category, split, seen)
            try:
                pair = [
                    (lab, model, *candidate(item, lab, cc.rng, model, kind))
                    for lab, kind, model in (
                        (1, right_kind, cc.rng.choice(models)),
                        (0, wrong_kind, cc.rng.choice(models)),
                    )
                ]
            except ValueError:
                continue
            break
        else:
            raise RuntimeError(f"attack {attack!r} found no applicable {category} item")
        cc.rng.shuffle(pair)
        for lab, model, text, meta in pair:
            if attack:
                meta["attack"] = attack
            out.append(make_record(item, text, lab, model, split, meta))
    return out[:n]


# ----------------------------------------------------------------------------- sizes and summary
def split_sizes(size: int) -> dict[str, int]:
    """Rows per split for a train size: val and test a tenth each (at least 300), adversarial a
    tenth rounded up to whole rounds of every attack (at least 10 pairs per attack)."""
    rounds = 2 * len(ATTACKS)
    adversarial = max(10 * rounds, -(-max(size // 10, 1) // rounds) * rounds)
    return {"train": size, "val": max(300, size // 10), "test": max(300, size // 10), "adversarial": adversarial}


def summary(splits: dict[str, list[dict]]) -> str:
    """A table of rows per category x style, with wrong/correct counts per split."""
    counts = Counter(
        (r["category"], r["meta"]["style"], r["split"], r["label"]) for rows in splits.values() for r in rows
    )
    keys = sorted({(cat, style) for cat, style, _, _ in counts})
    head = f"{'category':<19}{'style':<12}" + "".join(f"{name + ' 0/1':>20}" for name in splits)
    lines = [head, "-" * len(head)]
    for cat, style in keys:
        cells = "".join(f"{counts[cat, style, name, 0]:>13}/{counts[cat, style, name, 1]:<6}" for name in splits)
        lines.append(f"{cat:<19}{style:<12}{cells}")
    totals = "".join(
        f"{sum(r['label'] == 0 for r in rows):>13}/{sum(r['label'] == 1 for r in rows):<6}" for rows in splits.values()
    )
    lines += ["-" * len(head), f"{'total':<31}{totals}"]
    return "\n".join(lines)
