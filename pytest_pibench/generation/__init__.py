"""``pi generate``: pressure variants of hand-written scenarios, certified before they are written.

See :mod:`pytest_pibench.generation.styles` for the styles and
:mod:`pytest_pibench.generation.variants` for what a variant may change.
"""

from pytest_pibench.generation.styles import STYLES, PressureStyle, UnknownStyleError, get_style, register_style
from pytest_pibench.generation.variants import (
    GENERATOR,
    GeneratedVariant,
    make_variant,
    variant_problems,
    write_variants,
)

__all__ = [
    "GENERATOR",
    "STYLES",
    "GeneratedVariant",
    "PressureStyle",
    "UnknownStyleError",
    "get_style",
    "make_variant",
    "register_style",
    "variant_problems",
    "write_variants",
]
