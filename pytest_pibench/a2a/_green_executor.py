"""The green server's executor and task store: one assessment per request, bounded in every direction.

- An assessment holds one of ``max_assessments`` slots from the moment it is
  accepted until its worker thread has finished (a cancelled task stops
  starting episodes, and its slot frees only when the episodes running end).
- Tasks live in a bounded store (oldest dropped first) that nobody can list:
  a task's id, which only its caller got, is the way to read it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from a2a.helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.tasks import InMemoryTaskStore, TaskStore, TaskUpdater
from a2a.types import a2a_pb2
from a2a.utils.errors import InvalidParamsError, UnsupportedOperationError
from google.protobuf.json_format import MessageToDict

from pytest_pibench.a2a.assessment import (
    Assessment,
    AssessmentRequestError,
    parse_request,
    run_assessment,
    url_allowed,
)
from pytest_pibench.bounds import strict_dumps
from pytest_pibench.participants.a2a_client.wire import narrow_numbers
from pytest_pibench.results.document import Journal, atomic_write_json, journal_path
from pytest_pibench.results.leaderboard import run_artifacts, to_leaderboard
from pytest_pibench.results.types import ResultRow

__all__ = ["BoundedTaskStore", "GreenExecutor", "request_payload"]


def request_payload(message: a2a_pb2.Message | None) -> Any:
    """The assessment request in a message: its first data part, else JSON in its first text part."""
    parts = list(message.parts) if message is not None else []
    for part in parts:
        if part.HasField("data"):
            return narrow_numbers(MessageToDict(part.data))
    for part in parts:
        if part.text.strip():
            try:
                return json.loads(part.text)
            except ValueError as exc:
                raise InvalidParamsError(message=f"the text part is not a JSON assessment request: {exc}") from None
    raise InvalidParamsError(message="send the assessment request as a data part or as JSON in a text part")


MAX_STORE_BYTES = 128 * 2**20
"""Most bytes of tasks kept in memory (a finished assessment holds its artifact: megabytes for a full run)."""


class BoundedTaskStore(TaskStore):
    """The SDK's in-memory store, keeping the newest tasks (at most ``limit``, at most ``max_bytes``), unlisted.

    The newest task is always kept, whatever its size: its caller is about to read it.
    """

    def __init__(self, limit: int = 256, max_bytes: int = MAX_STORE_BYTES) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        self._inner = InMemoryTaskStore()
        self._order: OrderedDict[str, tuple[ServerCallContext, int]] = OrderedDict()
        self.bytes = 0
        """What the kept tasks weigh, serialized."""

    async def save(self, task: a2a_pb2.Task, context: ServerCallContext) -> None:
        await self._inner.save(task, context)
        if task.id in self._order:
            self.bytes -= self._order[task.id][1]
        size = task.ByteSize()
        self._order[task.id] = (context, size)
        self._order.move_to_end(task.id)
        self.bytes += size
        while len(self._order) > 1 and (len(self._order) > self.limit or self.bytes > self.max_bytes):
            old_id, (old_context, old_size) = self._order.popitem(last=False)
            self.bytes -= old_size
            await self._inner.delete(old_id, old_context)

    async def get(self, task_id: str, context: ServerCallContext) -> a2a_pb2.Task | None:
        return await self._inner.get(task_id, context)

    async def list(self, params: a2a_pb2.ListTasksRequest, context: ServerCallContext) -> a2a_pb2.ListTasksResponse:
        raise UnsupportedOperationError(message="tasks are not listed here: read yours by its id")

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        kept = self._order.pop(task_id, None)
        if kept is not None:
            self.bytes -= kept[1]
        await self._inner.delete(task_id, context)


class _Slot:
    """One of the executor's assessment slots, taken on creation and released once."""

    def __init__(self, executor: GreenExecutor) -> None:
        self.executor = executor
        self.handed_to_worker = False
        self._released = False
        executor._running += 1

    def release(self) -> None:
        if not self._released:
            self._released = True
            self.executor._running -= 1


class GreenExecutor(AgentExecutor):
    """Runs one assessment per request, on a worker thread, streaming progress as status updates."""

    def __init__(
        self,
        *,
        max_concurrency: int = 8,
        results_dir: Path | None = None,
        max_assessments: int = 4,
        allowed_urls: Sequence[str] = (),
        user_models: Sequence[str] = (),
        judge_models: Sequence[str] = (),
    ) -> None:
        self.max_concurrency = max_concurrency
        self.results_dir = results_dir
        self.max_assessments = max_assessments
        self.allowed_urls = tuple(allowed_urls)
        self.user_models = tuple(user_models)
        self.judge_models = tuple(judge_models)
        self._running = 0
        self._workers = ThreadPoolExecutor(max_assessments, thread_name_prefix="pibench-assessment")

    def _check_urls(self, *urls: str) -> None:
        """With ``--allow-url`` given, every URL the request names must be under one of them."""
        for url in urls:
            if self.allowed_urls and not url_allowed(url, self.allowed_urls):
                raise InvalidParamsError(message=f"{url} is not an agent this server may call (see --allow-url)")

    def _parse(self, message: a2a_pb2.Message | None) -> Assessment:
        try:
            return parse_request(
                request_payload(message), max_concurrency=self.max_concurrency, user_models=self.user_models,
                judge_models=self.judge_models,
            )  # fmt: skip
        except AssessmentRequestError as exc:
            raise InvalidParamsError(message=str(exc)) from None
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # a shape nobody foresaw
            raise InvalidParamsError(message=f"malformed assessment request: {type(exc).__name__}: {exc}") from None

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assessment = self._parse(context.message)
        self._check_urls(assessment.purple_url, *([assessment.user[4:]] if assessment.user.startswith("a2a:") else []))
        if self._running >= self.max_assessments:
            raise InvalidParamsError(
                message=f"the server is running {self._running} assessments, its limit: try again later"
            )
        slot = _Slot(self)  # freed by the worker's end once it started, never by a cancelled coroutine
        try:
            await self._assess(context, event_queue, assessment, slot)
        except BaseException:
            if not slot.handed_to_worker:
                slot.release()
            raise

    async def _assess(
        self, context: RequestContext, event_queue: EventQueue, assessment: Assessment, slot: _Slot
    ) -> None:
        task = context.current_task
        if task is None:
            assert context.message is not None  # _parse read it
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        total = len(assessment.items)
        await updater.start_work(updater.new_agent_message([new_text_part(f"0/{total} episodes done")]))
        loop = asyncio.get_running_loop()
        stop = threading.Event()

        def progress(row: ResultRow, done: int, total: int) -> None:
            update = {"done": done, "total": total, "scenario_id": row.get("scenario_id"), "trial": row.get("trial"),
                      "passed": bool(row.get("all_passed"))}  # fmt: skip
            message = updater.new_agent_message([new_text_part(f"{done}/{total} episodes done"), new_data_part(update)])
            working = updater.update_status(a2a_pb2.TASK_STATE_WORKING, message)
            try:
                asyncio.run_coroutine_threadsafe(working, loop).result()
            except Exception:
                if not stop.is_set():  # after a cancel the task is over: nobody listens
                    raise

        journal = None
        if self.results_dir is not None:
            journal = Journal(journal_path(self.results_dir / f"{task.id}.json"))
            journal.open({"task_id": task.id, "agent_id": assessment.agent_id})
            journal.planned(total)

        def finished(_: Any) -> None:
            slot.release()
            if journal is not None and stop.is_set():
                journal.close(remove=False)  # a cancelled run keeps its partial journal

        worker = loop.run_in_executor(
            self._workers, lambda: run_assessment(assessment, progress, journal=journal, stop=stop)
        )
        worker.add_done_callback(finished)
        slot.handed_to_worker = True
        try:
            document = await asyncio.shield(worker)
        except asyncio.CancelledError:
            stop.set()  # no new episode starts; the slot frees when the running ones end
            raise
        except Exception as exc:  # the server must answer, whatever broke
            await updater.failed(updater.new_agent_message([new_text_part(f"assessment failed: {exc}")]))
            if journal is not None:
                journal.close(remove=False)
            return
        if journal is not None and self.results_dir is not None:
            atomic_write_json(self.results_dir / f"{task.id}.json", document)
            journal.close(remove=True)
        artifacts, problems = run_artifacts(document, domain=assessment.label)
        if artifacts:
            (artifact,) = artifacts.values()
        else:  # a shard past the last item: an empty result, published as such
            artifact = to_leaderboard([], agent_id=assessment.agent_id, domain=assessment.label)
            artifact["pibench_validity"] = dict(document["validity"])
        # The data part is what platforms read; it carries numbers as doubles, so a whole number past
        # 2**53 (a 63-bit seed) goes as its decimal string there; the exact JSON goes along as a text part.
        exact = new_text_part(strict_dumps(artifact), media_type="application/json")
        await updater.add_artifact([new_data_part(_double_safe(artifact)), exact], name="pi-bench assessment results")
        summary = f"{total} episodes assessed"
        if problems:
            summary += f"; NOT VALID FOR THE LEADERBOARD: {'; '.join(problems)}"
        await updater.complete(updater.new_agent_message([new_text_part(summary)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise UnsupportedOperationError(message="an assessment cannot be cancelled once it runs")


_EXACT_DOUBLE = 2**53


def _double_safe(value: Any) -> Any:
    """``value`` with every whole number a double cannot hold exactly (past 2**53) as its decimal string."""
    if isinstance(value, dict):
        return {k: _double_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_double_safe(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _EXACT_DOUBLE:
        return str(value)
    return value
