"""Forced acceptance as TensorRT-LLM and ATOM read it: one setting per engine, which its
adapter adds to a launch and ``infx golden lookup --engine`` prints for a script.
"""

from __future__ import annotations

from pytest_infx.engines.spec import SyntheticSetting

TRTLLM_ENV = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"


def number(value: float) -> str:
    """A value as an engine reads it from text: an integer without ``.0``, else 6 places."""
    rounded = round(value, 6)
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


def trtllm(al: float, k: int) -> SyntheticSetting:
    """TensorRT-LLM forces the accepted draft tokens, AL - 1."""
    accepted = round(al - 1, 6)
    notes: tuple[str, ...] = ()
    if accepted != int(accepted):
        notes = (
            f"{TRTLLM_ENV} counts draft tokens only, hence AL-1; the two-model path int()s "
            "it, so a fractional value there warns and falls back to 0 (no forcing); only "
            "the one-model path honours the fraction",
        )
    return SyntheticSetting(
        engine="trtllm", al=al, k=k, env={TRTLLM_ENV: number(accepted)}, notes=notes
    )


def atom(al: float, k: int) -> SyntheticSetting:
    return SyntheticSetting(
        engine="atom", al=al, k=k, argv=("--spec-decode-acceptance-length", number(al))
    )
