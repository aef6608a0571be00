"""odyssey_eval: the evaluation runner, run directories, metrics, QA diagnostics and reports."""
