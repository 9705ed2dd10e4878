"""One LLM call path for agent, user and judge: litellm, bounded retries, usage, response cache.

litellm is imported on first use only (it takes seconds), so nothing here is
loaded by a run that uses no LLM. Offline, litellm would try to download its
price table; ``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set unless the
environment says otherwise.

Retries use tenacity (exponential backoff with jitter) on rate limits, 5xx
answers, timeouts and connection errors, bounded in attempts and seconds; an
exhausted or non-retryable call raises :class:`InfrastructureError`, which ends
the episode as an infrastructure error row, never as a policy failure.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pytest_pibench.episode.protocols import InfrastructureError
from pytest_pibench.participants.llm import quiet
from pytest_pibench.participants.llm.limits import ProviderLimit, limiter_for

__all__ = ["LLMClient", "LLMParticipant", "Usage", "split_model_spec"]

DEFAULT_TIMEOUT = 60.0
DEFAULT_ATTEMPTS = 8
DEFAULT_RETRY_SECONDS = 120.0
DEFAULT_RETRY_WAIT = 0.5  # seconds; the wait grows exponentially, with full jitter, up to 10 s


@dataclass
class Usage:
    """What one participant spent in one episode."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0
    cache_hits: int = 0
    throttled: int = 0
    """Requests that waited for a provider-limit slot (``--pibench-rate-limit``)."""
    unpriced_calls: int = 0
    """Paid calls whose price litellm does not know (a model missing from its table): never counted as $0."""

    def add(self, other: Usage) -> None:
        for key, value in asdict(other).items():
            setattr(self, key, getattr(self, key) + value)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["cost_usd"] = round(self.cost_usd, 8)
        return data


def split_model_spec(spec: str) -> str:
    """``litellm:openai/gpt-4o-mini`` -> ``openai/gpt-4o-mini``."""
    model = spec.split(":", 1)[1] if spec.startswith("litellm:") else spec
    if not model.strip():
        raise ValueError(f"{spec!r} names no model: use litellm:<model>, e.g. litellm:gpt-4o-mini")
    return model.strip()


_import_lock = threading.Lock()
_module: list[Any] = []  # litellm, once imported


def _litellm() -> Any:
    if _module:
        return _module[0]
    with _import_lock:
        if _module:
            return _module[0]
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        try:  # litellm's switches for its own pricing and logging of a call (quiet.py)
            from litellm._internal_context import internal_sub_call
            from litellm.litellm_core_utils.litellm_logging import Logging
        except ImportError:  # another litellm: its calls stay as they are
            pass
        else:
            quiet.install(Logging, internal_sub_call)
        # litellm's import leaves about 370,000 objects that live as long as the process, and every
        # full collection of the cyclic GC walked them all again (0.3 s of CPU each, 13 in a benchmark
        # run: benchmarks/README.md). Frozen, a collection only walks what was made since.
        gc.collect()
        gc.freeze()
        _module.append(litellm)
        return litellm


def _transient(exc: BaseException) -> bool:
    litellm = _litellm()
    transient = (
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.BadGatewayError,
        litellm.APIConnectionError,  # includes litellm.Timeout
        litellm.Timeout,
    )
    if isinstance(exc, transient):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


class LLMClient:
    """Chat completions for one participant; ``usage`` accumulates until :meth:`reset_usage`.

    ``params`` are passed to ``litellm.completion`` (``api_base``, ``temperature``...),
    except our own keys: ``timeout`` (per call, default 60 s), ``max_attempts``
    (default 8), ``retry_seconds`` (total retry budget, default 120), ``retry_wait``
    (first backoff, default 0.5 s), ``cache_dir`` and ``rate_limits`` (``{model:
    {"concurrent": N, "rpm": N}}``, :mod:`~pytest_pibench.participants.llm.limits`).
    """

    def __init__(self, model: str, params: Mapping[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.model = model
        self.timeout = float(params.pop("timeout", DEFAULT_TIMEOUT))
        self.max_attempts = int(params.pop("max_attempts", DEFAULT_ATTEMPTS))
        self.retry_seconds = float(params.pop("retry_seconds", DEFAULT_RETRY_SECONDS))
        self.retry_wait = float(params.pop("retry_wait", DEFAULT_RETRY_WAIT))
        cache_dir = params.pop("cache_dir", None)
        self.cache = Path(cache_dir) if cache_dir else None
        limits = {
            name: ProviderLimit(value.get("concurrent"), value.get("rpm"))
            for name, value in (params.pop("rate_limits", None) or {}).items()
        }
        self.limiter = limiter_for(model, limits)
        for key in ("model", "messages", "tools", "seed", "stream"):
            params.pop(key, None)
        self.params = params
        self.usage = Usage()

    def reset_usage(self) -> Usage:
        spent, self.usage = self.usage, Usage()
        return spent

    def _cache_file(self, request: Mapping[str, Any]) -> Path | None:
        if self.cache is None:
            return None
        secret_free = {k: v for k, v in request.items() if k not in ("api_key", "timeout")}
        digest = hashlib.sha256(json.dumps(secret_free, sort_keys=True, default=str).encode()).hexdigest()
        return self.cache / digest[:2] / f"{digest}.json"

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        seed: int | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """One completion as a plain dict (OpenAI shape). Raises InfrastructureError when it cannot."""
        request: dict[str, Any] = {"model": self.model, "messages": list(messages), **self.params, **extra}
        if tools:
            request["tools"] = list(tools)
        if seed is not None:
            request["seed"] = seed
        cache_file = self._cache_file(request)
        if cache_file is not None and cache_file.is_file():
            response: dict[str, Any] = json.loads(cache_file.read_text(encoding="utf-8"))["response"]
            self.usage.calls += 1
            self.usage.cache_hits += 1  # free: no tokens, no cost, no network
            return response
        response, cost = self._call(request)
        self._account(response, cost)  # cost None: unpriced
        if cache_file is not None:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps({"response": response, "cost_usd": cost}), encoding="utf-8")
            tmp.replace(cache_file)  # atomic: parallel workers never read half a file
        return response

    def _call(self, request: dict[str, Any]) -> tuple[dict[str, Any], float | None]:
        import tenacity

        litellm = _litellm()
        attempts = 0

        def once() -> Any:
            nonlocal attempts
            attempts += 1
            # litellm's and openai's own retries are off: tenacity is the one retry loop.
            if self.limiter is None:
                with quiet.quiet_call(litellm):
                    return litellm.completion(**request, timeout=self.timeout, num_retries=0, max_retries=0)
            with self.limiter.slot() as waited, quiet.quiet_call(litellm):
                self.usage.throttled += int(waited)
                return litellm.completion(**request, timeout=self.timeout, num_retries=0, max_retries=0)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(_transient),
            wait=tenacity.wait_random_exponential(multiplier=self.retry_wait, max=max(10.0, self.retry_wait)),
            stop=tenacity.stop_after_attempt(self.max_attempts) | tenacity.stop_after_delay(self.retry_seconds),
            reraise=True,
        )
        try:
            result = retrying(once)
        except Exception as exc:
            self.usage.retries += max(0, attempts - 1)
            kind = "exhausted retries" if _transient(exc) else "failed"
            raise InfrastructureError(
                f"LLM call to {self.model} {kind} after {attempts} attempt(s): {type(exc).__name__}: {exc}"
            ) from exc
        self.usage.retries += attempts - 1
        cost: float | None
        try:
            priced = litellm.completion_cost(completion_response=result, model=self.model)
            cost = None if priced is None else float(priced)
        except Exception:  # a model missing from the price table: its price is unknown, not zero
            cost = None
        return result.model_dump(), cost

    def _account(self, response: Mapping[str, Any], cost: float | None) -> None:
        usage = response.get("usage") or {}
        self.usage.calls += 1
        self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)
        if cost is None:
            self.usage.unpriced_calls += 1
        else:
            self.usage.cost_usd += cost


class LLMParticipant:
    """What the LLM agent and user share: the model, the client, the seed, usage and stop handling."""

    def __init__(self, model: str, params: Mapping[str, Any] | None = None) -> None:
        self.model_name = split_model_spec(model)
        self.client = LLMClient(self.model_name, params)
        self.seed: int | None = None

    def set_seed(self, seed: int) -> None:
        self.seed = seed

    def usage(self) -> Usage:
        """What this participant spent since its last ``init_state``."""
        return self.client.usage

    def is_stop(self, message: dict[str, Any]) -> bool:
        from pytest_pibench.episode.messages import is_stop_signal

        return is_stop_signal(message)

    def stop(self, message: dict[str, Any] | None, state: Any) -> None:
        """Nothing to release."""
