"""Safetensors files written byte by byte: an 8-byte little-endian header length, the JSON
header, then the tensor bytes (zeros), as the format specifies; no torch or safetensors needed."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from pathlib import Path

from pytest_infx.prepare.precision import ITEM_BYTES

Spec = tuple[str, tuple[int, ...]]


def write_safetensors(path: Path, tensors: Mapping[str, Spec]) -> Path:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * ITEM_BYTES[dtype]
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))
    return path


def mxfp4_moe_layer(
    prefix: str, *, experts: int = 4, rows: int = 64, cols: int = 128
) -> dict[str, Spec]:
    """gpt-oss style: experts packed two fp4 values per U8 in 32-value blocks, E8M0 block
    scales as U8, attention and router in BF16."""
    blocks = cols // 32
    return {
        f"{prefix}.mlp.experts.gate_up_proj_blocks": ("U8", (experts, 2 * rows, blocks, 16)),
        f"{prefix}.mlp.experts.gate_up_proj_scales": ("U8", (experts, 2 * rows, blocks)),
        f"{prefix}.mlp.experts.down_proj_blocks": ("U8", (experts, rows, blocks, 16)),
        f"{prefix}.mlp.experts.down_proj_scales": ("F8_E8M0", (experts, rows, blocks)),
        f"{prefix}.mlp.router.weight": ("BF16", (experts, cols)),
        f"{prefix}.self_attn.q_proj.weight": ("BF16", (cols, cols)),
        f"{prefix}.input_layernorm.weight": ("BF16", (cols,)),
    }


def fp8_block_layer(prefix: str, *, size: int = 256) -> dict[str, Spec]:
    """DeepSeek style: F8_E4M3 linear weights with 128x128 F32 block scales (weight_scale_inv),
    norms in BF16."""
    tiles = size // 128
    layer: dict[str, Spec] = {}
    for proj in ("q_proj", "o_proj", "gate_proj", "down_proj"):
        layer[f"{prefix}.{proj}.weight"] = ("F8_E4M3", (size, size))
        layer[f"{prefix}.{proj}.weight_scale_inv"] = ("F32", (tiles, tiles))
    layer[f"{prefix}.input_layernorm.weight"] = ("BF16", (size,))
    return layer
