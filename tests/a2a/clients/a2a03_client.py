"""An assessment request sent with an a2a-sdk 0.3-series client, as the AgentBeats runner sends it.

Run in an environment of its own (the project pins a2a-sdk 1.x):
``python a2a03_client.py GREEN_URL PURPLE_URL streaming|blocking`` prints one JSON line:
the final task state, the number of status updates, and the artifact's exact JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart


async def main(green: str, purple: str, streaming: bool) -> None:
    payload = {"participants": {"agent": purple}, "config": {"domain": "policy_compliance", "num_trials": 1,
               "scenario_ids": sys.argv[4].split(",")}}  # fmt: skip
    async with httpx.AsyncClient(timeout=300) as http:
        card = await A2ACardResolver(http, green).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        message = Message(role=Role.user, message_id=uuid.uuid4().hex,
                          parts=[Part(root=TextPart(text=json.dumps(payload)))])  # fmt: skip
        updates, task = 0, None
        async for event in client.send_message(message):
            if isinstance(event, tuple):
                task, update = event
                updates += update is not None
        assert task is not None, "no task came back"
        texts = [p.root.text for a in task.artifacts or [] for p in a.parts if getattr(p.root, "text", None)]
        print(json.dumps({"state": task.status.state.value, "updates": updates, "card_url": card.url,
                          "artifact": json.loads(texts[0]) if texts else None}))  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] == "streaming"))
