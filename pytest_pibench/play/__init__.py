"""``pi play``: a person in the agent's seat, step by step or interactively; play records and their scores.

Modules: :mod:`~pytest_pibench.play.syntax` (what the person types),
:mod:`~pytest_pibench.play.view` (what they are shown: only what an agent gets),
:mod:`~pytest_pibench.play.agent` (the person as an agent object),
:mod:`~pytest_pibench.play.interactive` and :mod:`~pytest_pibench.play.step` (the two modes),
:mod:`~pytest_pibench.play.records` (record files, re-scoring), :mod:`~pytest_pibench.play.command`
(the ``pi play`` arguments). Replaying records as an agent is the participants layer's
(:mod:`pytest_pibench.participants.replay`). Nothing is imported here: ``pi`` builds its parser cheaply.
"""
