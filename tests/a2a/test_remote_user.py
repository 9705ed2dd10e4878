"""``--pibench-user=a2a:<url>``: an A2A endpoint plays the user; the scripted user served that way changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from a2a_servers import bundled  # skips this module without the a2a extra

from pytest_pibench import resolve_agent, run_one
from pytest_pibench.a2a.serving import ServerThread
from pytest_pibench.a2a.user import user_app
from pytest_pibench.participants.specs import resolve_user
from pytest_pibench.participants.users import ScriptedUser

ALL = bundled()


@pytest.fixture(scope="module")
def user_url() -> Any:
    with ServerThread(lambda url: user_app(ScriptedUser, name="scripted", url=url)) as server:
        yield server.url


@pytest.mark.parametrize("domain", sorted({s.meta.domain for s in ALL}))
@pytest.mark.slow
def test_the_scripted_user_over_a2a_gives_the_local_rows(user_url, domain):
    remote, local = resolve_user(f"a2a:{user_url}"), resolve_user("scripted")
    oracle = resolve_agent("oracle")
    for scenario in [s for s in ALL if s.meta.domain == domain]:
        over_a2a = run_one(scenario, oracle, user_factory=remote.build, base_seed=3)
        here = run_one(scenario, oracle, user_factory=local.build, base_seed=3)
        assert {k: v for k, v in over_a2a.items() if k != "duration"} == {
            k: v for k, v in here.items() if k != "duration"
        }, scenario.scenario_id


def test_a_user_endpoint_that_is_down_is_an_error_row_not_the_agents_failure():
    scenario = ALL[0]
    row = run_one(scenario, resolve_agent("oracle"), user_factory=resolve_user("a2a:http://127.0.0.1:9").build)
    assert row["termination_reason"] == "infra_error" and row["status"] == "error"


def test_a_user_endpoint_that_answers_nonsense_is_a_user_error(user_url):
    class Mute:
        def init_state(self, scenario: dict[str, Any], history: Any = None) -> dict[str, Any]:
            return {}

        def generate(self, message: dict[str, Any], state: Any) -> Any:
            raise RuntimeError("the simulator broke")

    with ServerThread(lambda url: user_app(Mute, name="mute", url=url)) as server:
        row = run_one(ALL[0], resolve_agent("oracle"), user_factory=resolve_user(f"a2a:{server.url}").build)
    assert row["termination_reason"] == "user_error" and row["failure_cause"] == "user_simulator"
