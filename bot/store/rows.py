"""How a delivery is stored in a row: columns, payload compression, row → Delivery."""

from __future__ import annotations

import zlib
from typing import Any

import lz4.block

from bot.store.base import Delivery

# Webhook payloads are ~10-30 kB of highly repetitive JSON (URLs, user objects); LZ4
# shrinks them ~6x (level-1 zlib ~7x) in a fifth of zlib's CPU time, and either costs
# less than writing the extra pages to the WAL and then the database (measured in
# bench/RESULTS-intake.md). Rows written as "zlib" by earlier versions still read.
COMPRESS_OVER_BYTES = 1024
DELIVERY_COLUMNS = (
    "id, event, action, payload, payload_encoding, received_at, not_before, group_key,"
    " status, attempts, last_error"
)

def encode_payload(payload: bytes) -> tuple[bytes, str]:
    if len(payload) < COMPRESS_OVER_BYTES:
        return payload, "identity"
    return lz4.block.compress(payload), "lz4"


def delivery_from_row(row: tuple[Any, ...]) -> Delivery:
    payload = bytes(row[3])
    if row[4] == "lz4":
        payload = lz4.block.decompress(payload)
    elif row[4] == "zlib":
        payload = zlib.decompress(payload)
    return Delivery(
        id=row[0], event=row[1], action=row[2], payload=payload,
        received_at=float(row[5]), not_before=float(row[6]), group_key=row[7],
        status=row[8], attempts=int(row[9]), last_error=row[10],
    )
