"""Blind-play calibration (issue 24 §2): reviewed ``pi play`` records and ``pi calibration``.

Modules: :mod:`~pytest_pibench.calibration.records` (the record format: a play record plus a
second reviewer's ``review`` block, as validated models), :mod:`~pytest_pibench.calibration.report`
(re-scoring every record against the current scenario files, the counts and the targets) and
:mod:`~pytest_pibench.calibration.command` (the ``pi calibration`` arguments and output).
Nothing is imported here: ``pi`` builds its parser cheaply.
"""
