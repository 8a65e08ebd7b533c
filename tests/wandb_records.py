"""What an offline wandb run recorded, read back from its ``run-*.wandb`` file: the records ``wandb sync`` uploads.

The file is wandb's transaction log: a 7-byte header (``:W&B``, magic 0xBEE1, version 0), then records in 32 KiB
blocks, each record a 7-byte header (crc32 of its type and data, length, type: 1 full, 2 first, 3 middle, 4 last part) and a serialized
``wandb_internal_pb2.Record`` (wandb's own protobuf), a record that does not fit a block continued in the next.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import time
import zlib
from pathlib import Path

BLOCK = 32768
HEADER = struct.Struct("<IHB")  # crc32, length, type


def records(path: str | Path) -> list:
    """Every record of a ``run-*.wandb`` file, in order, as ``wandb.proto.wandb_internal_pb2.Record``s."""
    from wandb.proto import wandb_internal_pb2

    data = Path(path).read_bytes()
    ident, magic, version = struct.unpack("<4sHB", data[:7])
    assert (ident, magic, version) == (b":W&B", 0xBEE1, 0), f"{path}: not a wandb transaction log"
    found, pending, pos = [], b"", 7
    while pos + HEADER.size <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER.size:  # a block's tail too short for a header is padding
            pos += left
            continue
        crc, length, kind = HEADER.unpack_from(data, pos)
        if kind == 0:  # zeroes: the rest of the block is padding
            pos += left
            continue
        if pos + HEADER.size + length > len(data):  # a record still being written
            break
        chunk = data[pos + HEADER.size : pos + HEADER.size + length]
        assert crc == zlib.crc32(chunk, zlib.crc32(bytes([kind]))), f"{path}: a record at byte {pos} is corrupt"
        pending += chunk
        pos += HEADER.size + length
        if kind in (1, 4):  # a whole record, or the last part of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            found.append(record)
            pending = b""
    return found


def finished(run_folder: str | Path, timeout: float = 60.0) -> list:
    """The records of an offline run once its ``exit`` record is written: ``wandb.finish()`` returns before wandb's
    service has written the run's last records (the artifacts among them)."""
    [log] = Path(run_folder).glob("run-*.wandb")
    deadline = time.monotonic() + timeout
    while True:
        found = records(log)
        if any(r.WhichOneof("record_type") == "exit" for r in found):
            return found
        assert time.monotonic() < deadline, f"{log}: no exit record after {timeout:g} s"
        time.sleep(0.2)


def artifacts(run_folder: str | Path) -> list:
    """The artifacts a finished offline run logged (``ArtifactRecord``s: name, type, metadata, aliases, manifest)."""
    return [r.artifact for r in finished(run_folder) if r.WhichOneof("record_type") == "artifact"]


def md5_digest(data: bytes) -> str:
    """wandb's digest of a file in an artifact manifest: its MD5, base64."""
    return base64.b64encode(hashlib.md5(data).digest()).decode()
