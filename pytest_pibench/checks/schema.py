"""The check lists of the scenario schema, derived from the registry at validation time.

``list[PolicyCheck]`` validates each entry with the model registered under its
``type`` (a discriminated union over the family's registered types, rebuilt
when the registry changes), so errors read exactly as pydantic's own and a
type registered after the scenario model was built validates too. The JSON
Schema of an entry is the same union, generated on demand.
"""

from __future__ import annotations

import functools
import operator
from typing import Annotated, Any

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from pytest_pibench.checks.base import CheckModel, Family
from pytest_pibench.checks.registry import check_types, registry_version

__all__ = ["CheckOf", "JudgeCheck", "PolicyCheck", "StateCheck"]


class CheckOf:
    """pydantic annotation: a check of ``family``, validated by the type registered under its ``type``."""

    def __init__(self, family: Family) -> None:
        self.family = family

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        adapter = _adapter(self.family, registry_version())
        if adapter is None:
            return {"not": {}}
        schema = adapter.core_schema
        if "ref" in schema:  # a single model: refer to it under $defs, as a plain model field would
            schema = core_schema.definitions_schema(core_schema.definition_reference_schema(schema["ref"]), [schema])
        return handler(schema)

    def validate(self, value: Any) -> CheckModel:
        """The check model for ``value`` (a mapping or an already-validated check)."""
        adapter = _adapter(self.family, registry_version())
        if adapter is None:
            raise PydanticCustomError("no_check_types", "no check type of family {family} is registered",
                                      {"family": self.family})
        checked: CheckModel = adapter.validate_python(value)
        return checked


@functools.lru_cache(maxsize=16)
def _adapter(family: Family, version: int) -> TypeAdapter[Any] | None:
    """A validator over the family's registered models (``version`` keys the cache to the registry)."""
    models = [d.model for d in check_types(family)]
    if not models:
        return None
    if len(models) == 1:
        return TypeAdapter(models[0])
    union: Any = functools.reduce(operator.or_, models)
    return TypeAdapter(Annotated[union, Field(discriminator="type")])


PolicyCheck = Annotated[CheckModel, CheckOf("POLICY")]
"""An entry of ``evaluation_criteria.policy_checks``."""
StateCheck = Annotated[CheckModel, CheckOf("STATE_FIELD")]
"""An entry of ``evaluation_criteria.state_field_checks``."""
JudgeCheck = Annotated[CheckModel, CheckOf("NL_JUDGE")]
"""An entry of ``evaluation_criteria.nl_judge_checks``."""
