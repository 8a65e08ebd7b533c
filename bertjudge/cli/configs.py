"""``python -m bertjudge configs``: the training configs shipped in the package (``bertjudge/configs``, the
checkout's ``configs/``), listed, or one's path for ``fit --config``:

    python -m bertjudge fit --config "$(python -m bertjudge configs quickstart)" --data.train='[…]' …

A config's data paths (``data/real/…``) are the checkout's: outside it, give the data on the command line or
copy the config (``--copy DIR``) and edit it.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from bertjudge.cli.common import CommandError

# package data: in a checkout, bertjudge/configs is a link to configs/; in a wheel, the files themselves
SHIPPED = Path(__file__).resolve().parent.parent / "configs"


def shipped() -> dict[str, Path]:
    """``{name: path}`` of every shipped config; a name is the path under ``configs/`` (``encoder/minilm-l6.yaml``)."""
    return {path.relative_to(SHIPPED).as_posix(): path for path in sorted(SHIPPED.glob("**/*.yaml"))}


def find(name: str) -> Path:
    """The shipped config ``name`` (``quickstart``, ``quickstart.yaml``, ``configs/encoder/minilm-l6.yaml``…);
    CommandError (usage) when there is none."""
    configs = shipped()
    key = name.removeprefix("configs/")
    key = key if key.endswith((".yaml", ".yml")) else f"{key}.yaml"
    if key not in configs:
        raise CommandError(
            f"no shipped config {name!r}; `python -m bertjudge configs` lists the {len(configs)} there are", usage=True
        )
    return configs[key]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge configs",
        description="The training configs shipped in the package: with no NAME, list them; with NAMEs, print "
        "each one's path (for `fit --config`) or, with --copy, copy them into a folder to edit.",
        epilog='example: python -m bertjudge fit --config "$(python -m bertjudge configs quickstart)" '
        "--data.train='[embedded:train?n=2000]' --data.val='[embedded:val?n=200]' (the configs' data/ paths are "
        "the checkout's)",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="a config's name as listed (.yaml may be left out)")
    p.add_argument(
        "--copy",
        metavar="DIR",
        type=Path,
        help="copy the NAMEs (all the configs when none is given) into DIR, keeping their sub-folders; an existing "
        "file is not overwritten",
    )
    return p


def run(args: argparse.Namespace) -> int:
    paths = {name: find(name) for name in args.names}
    if args.copy is not None:
        chosen = {path.relative_to(SHIPPED).as_posix(): path for path in paths.values()} or shipped()
        targets = {args.copy / name: path for name, path in chosen.items()}
        existing = [str(target) for target in targets if target.exists()]
        if existing:
            raise CommandError(f"{existing[0]}: exists; remove it or copy into another folder", usage=True)
        for target, path in targets.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        print(f"copied {len(targets)} config{'s' * (len(targets) != 1)} to {args.copy}")
    elif paths:
        print("\n".join(str(path) for path in paths.values()))
    else:
        configs = shipped()
        width = max(map(len, configs), default=0)
        for name, path in configs.items():
            print(f"{name:<{width}}  {_summary(path)}")
        print(f"({len(configs)} configs in {SHIPPED}; `python -m bertjudge configs NAME` prints one's path)")
    return 0


def _summary(path: Path, width: int = 100) -> str:
    """The first sentence of a config's opening comment (cut at ``width`` characters), or ''."""
    opening = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        opening.append(line.lstrip("#").strip())
    sentence = " ".join(opening).split(". ", 1)[0]
    return sentence if len(sentence) <= width else sentence[: width - 1].rstrip() + "…"
