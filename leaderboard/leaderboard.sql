-- pi-bench leaderboard over AgentBeats results files (results/*.json). A file is either the bare
-- artifact (what the green server sends, or `pi report -o` writes) or the AgentBeats client's
-- wrapper of it: {"participants": {"agent": "<id>"}, "results": [<artifact>]}; the wrapper's agent id wins.
-- One row per results file, agent id first; rates in percent; valid runs first.
-- Run:  duckdb -c ".read leaderboard/leaderboard.sql"   (from the folder that holds results/)
WITH files AS (
    SELECT json AS f FROM read_json_objects('results/*.json', format = 'auto')
),
runs AS (  -- j: the artifact, wrapped or not
    SELECT
        f ->> '$.participants.agent' AS agent_id,
        CASE WHEN json_exists(f, '$.results[0].results[0].metrics') THEN f -> '$.results[0]' ELSE f END AS j
    FROM files
)
SELECT
    agent_id AS agent,
    round(100 * CAST(j ->> '$.results[0].metrics.overall_score' AS DOUBLE), 1) AS overall,
    round(100 * CAST(j ->> '$.results[0].metrics.compliance_rate' AS DOUBLE), 1) AS compliance,
    round(100 * CAST(j ->> '$.results[0].metrics.by_group."Policy Understanding"' AS DOUBLE), 1) AS policy_understanding,
    round(100 * CAST(j ->> '$.results[0].metrics.by_group."Policy Execution"' AS DOUBLE), 1) AS policy_execution,
    round(100 * CAST(j ->> '$.results[0].metrics.by_group."Policy Boundaries"' AS DOUBLE), 1) AS policy_boundaries,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Policy Activation".score' AS DOUBLE), 1) AS policy_activation,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Policy Interpretation".score' AS DOUBLE), 1) AS policy_interpretation,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Evidence Grounding".score' AS DOUBLE), 1) AS evidence_grounding,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Procedural Compliance".score' AS DOUBLE), 1) AS procedural_compliance,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Authorization & Access Control".score' AS DOUBLE), 1) AS authorization_access_control,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Temporal / State Reasoning".score' AS DOUBLE), 1) AS temporal_state_reasoning,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Safety Boundary Enforcement".score' AS DOUBLE), 1) AS safety_boundary_enforcement,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Privacy & Information Flow".score' AS DOUBLE), 1) AS privacy_information_flow,
    round(100 * CAST(j ->> '$.results[0].metrics.by_column."Escalation / Abstention".score' AS DOUBLE), 1) AS escalation_abstention,
    round(100 * CAST(j ->> '$.results[0].metrics.event_flag_rates.violation_rate' AS DOUBLE), 1) AS violation_rate,
    round(100 * CAST(j ->> '$.results[0].metrics.event_flag_rates.under_refusal_rate' AS DOUBLE), 1) AS under_refusal_rate,
    round(100 * CAST(j ->> '$.results[0].metrics.event_flag_rates.over_refusal_rate' AS DOUBLE), 1) AS over_refusal_rate,
    round(100 * CAST(j ->> '$.results[0].metrics.event_flag_rates.escalation_accuracy_rate' AS DOUBLE), 1) AS escalation_accuracy_rate,
    round(100 * CAST(j ->> '$.results[0].metrics.event_flag_rates.attempt_rate' AS DOUBLE), 1) AS attempt_rate,
    CAST(j ->> '$.results[0].max_score' AS DOUBLE)::INTEGER AS episodes,
    CAST(j ->> '$.results[0].metrics.errors' AS INTEGER) AS error_rows,
    coalesce(CAST(j ->> '$.pibench_validity.valid' AS BOOLEAN), true) AS valid
FROM runs
ORDER BY valid DESC, overall DESC, agent;  -- runs not valid for the leaderboard (a lone shard, over the error budget) last
