"""Offline evaluation of a perception stack on recorded data (`predrel eval`): degradation sweeps,
the paper's tables, plots and an HTML report. Plain Python; no ROS import.

    from predrel_ros.tools.evaluation.config import EvaluationConfig
    from predrel_ros.tools.evaluation.sweep import run_sweep
    summary = run_sweep(EvaluationConfig(perception="oracle"), "data/controlled", "runs/eval-oracle")

Modules: `config` (EvaluationConfig), `data` (dataset folders, episodes, bags), `front_ends`
(perception with cached detections, or the oracle; where each degradation acts), `detection_cache`,
`sequences` (aligned per-frame predicate sequences, saved per episode), `scores` (metric rows),
`action` (recognizer conditions, DIS), `episode_run` (one episode, in a worker), `tables` (Tables
8-15, findings), `plots`, `report` (HTML), `sweep` (the whole run), `tracking`
with `tracking_metrics` and `synthetic_tracks` (`predrel track-eval`); the CLI is
`predrel_ros.tools.cli.eval`, the benchmark `predrel_ros.tools.benchmarks.eval`. Evaluated entities
are matched to the reference's per frame by `predrel_ros.reliability.association`. Nothing is imported
here, so `predrel --help` stays fast.
"""
